"""`LLMExtractor`: extraction by a text model, through the `TextProvider` port.

The extractor knows no HTTP client and no provider: the composition root hands it a
`TextProvider` (usually the gateway-wrapped one, so deadlines, capacity and cancellation are
enforced there too). One call per request: the prompt (`llm_prompt`) frames the span as
untrusted data, asks for strict JSON at temperature 0.2 — following `EXTRACTION_SCHEMA`
where the provider enforces one (`json_schema`, strict; a provider falls back to
`json_object`, then to the prompt alone) — and the parser (`llm_parser`), tolerant of
whatever envelope came back, keeps every valid candidate and counts the rest. A response
with nothing usable in it raises ProviderResponseError, so the ingestion cursor does not
advance (R-TIME-4).
"""

from __future__ import annotations

import logging

import attrs

from memory_adapters.extractors.entries import conversation_entries
from memory_adapters.extractors.llm_parser import parse_extraction
from memory_adapters.extractors.llm_prompt import build_messages
from memory_adapters.extractors.llm_schema import EXTRACTION_SCHEMA
from memory_adapters.extractors.screening import screen
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import MAX_EXTRACTED_CONTENT_CODE_POINTS
from memory_core.domain.secrets import PatternSecretPolicy
from memory_core.ports.extraction import ExtractionRequest, ExtractionResult
from memory_core.ports.providers import TextProvider, TextRequest
from memory_core.ports.secrets import SecretPolicy
from memory_core.ports.tape import EntryRole

__all__ = ["EXTRACTION_TEMPERATURE", "LLMExtractor"]

EXTRACTION_TEMPERATURE = 0.2

_log = logging.getLogger(__name__)


class LLMExtractor:
    """Asks a text model for memories and directive suggestions, and trusts none of it blindly.

    Every candidate names all message entries of the span as its source: the model is not
    asked to cite, and a claim may rest on several turns.
    """

    def __init__(
        self,
        provider: TextProvider,
        *,
        secret_policy: SecretPolicy | None = None,
        max_content_code_points: int = MAX_EXTRACTED_CONTENT_CODE_POINTS,
        temperature: float = EXTRACTION_TEMPERATURE,
        max_tokens: int | None = None,
    ) -> None:
        self._provider = provider
        self._policy = secret_policy or PatternSecretPolicy()
        self._max_content = max_content_code_points
        self._temperature = temperature
        self._max_tokens = max_tokens

    def __repr__(self) -> str:
        return f"LLMExtractor(provider={self._provider.provider_id!r})"

    @property
    def name(self) -> str:
        return "llm"

    async def extract(
        self, request: ExtractionRequest, *, deadline: Deadline, cancel: CancellationToken
    ) -> ExtractionResult:
        entries = conversation_entries(request.entries)
        if not any(entry.role is EntryRole.USER for entry in entries):
            # Without a user message there is no user fact and no user instruction to find.
            return ExtractionResult()
        text_request = TextRequest(
            messages=build_messages(request, entries, self._policy),
            temperature=self._temperature,
            max_tokens=self._max_tokens,
            json_output=True,
            json_schema=EXTRACTION_SCHEMA,
        )
        answer = await self._provider.complete(text_request, deadline=deadline, cancel=cancel)
        cancel.raise_if_cancelled()
        parsed = parse_extraction(answer, max_content_code_points=self._max_content)
        sources = tuple(entry.id for entry in entries)
        screened = screen(
            self._policy,
            (attrs.evolve(candidate, source_entry_ids=sources) for candidate in parsed.candidates),
            parsed.suggestions,
        )
        result = ExtractionResult(
            candidates=screened.candidates,
            suggestions=screened.suggestions,
            rejected=(*parsed.rejected, *screened.rejected),
        )
        _log.debug(
            "llm extraction: %d entries, %d candidates, %d suggestions, %d rejected",
            len(entries),
            len(result.candidates),
            len(result.suggestions),
            len(result.rejected),
        )
        return result
