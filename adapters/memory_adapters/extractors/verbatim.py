"""`VerbatimExtractor`: every user turn stored as it was said, for retrieval benchmarks.

No rewriting and no judgement: each sent user message becomes episodic, atemporal claims
with importance 0.5, sourced to that message. A message longer than the claim limit is cut
at sentence boundaries (then at whitespace, then anywhere) into pieces within the limit,
never truncated. The secret policy still applies (R-PRIV-1).
"""

from __future__ import annotations

import re

from memory_adapters.extractors.entries import user_messages
from memory_adapters.extractors.screening import screen
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import MAX_EXTRACTED_CONTENT_CODE_POINTS, ClaimKind
from memory_core.domain.secrets import PatternSecretPolicy
from memory_core.ports.extraction import CandidateClaim, ExtractionRequest, ExtractionResult
from memory_core.ports.secrets import SecretPolicy

__all__ = ["VERBATIM_IMPORTANCE", "VerbatimExtractor", "split_bounded"]

VERBATIM_IMPORTANCE = 0.5

# After sentence-ending punctuation (Latin and CJK) or at a line break.
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])|\n+")


def _pieces(text: str, limit: int) -> list[str]:
    """`text` (longer than `limit`) cut at the last whitespace within the limit, else hard."""
    pieces: list[str] = []
    rest = text
    while len(rest) > limit:
        cut = rest.rfind(" ", 0, limit + 1)
        cut = cut if cut > 0 else limit
        pieces.append(rest[:cut].strip())
        rest = rest[cut:].strip()
    if rest:
        pieces.append(rest)
    return [piece for piece in pieces if piece]


def split_bounded(text: str, limit: int = MAX_EXTRACTED_CONTENT_CODE_POINTS) -> list[str]:
    """Pieces of `text`, each at most `limit` code points, packed from whole sentences.

    Joining the pieces with single spaces gives back the text up to whitespace.
    """
    if limit < 1:
        raise ValueError("limit must be positive")
    text = text.strip()
    if len(text) <= limit:
        return [text] if text else []
    sentences = [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]
    chunks: list[str] = []
    current = ""
    for sentence in sentences:
        for part in _pieces(sentence, limit) if len(sentence) > limit else [sentence]:
            joined = f"{current} {part}" if current else part
            if len(joined) <= limit:
                current = joined
            else:
                chunks.append(current)
                current = part
    if current:
        chunks.append(current)
    return chunks


class VerbatimExtractor:
    """One episodic claim per user turn (or per piece of a long one), content unchanged."""

    def __init__(
        self,
        *,
        secret_policy: SecretPolicy | None = None,
        max_content_code_points: int = MAX_EXTRACTED_CONTENT_CODE_POINTS,
    ) -> None:
        self._policy = secret_policy or PatternSecretPolicy()
        self._limit = max_content_code_points

    @property
    def name(self) -> str:
        return "verbatim"

    async def extract(
        self, request: ExtractionRequest, *, deadline: Deadline, cancel: CancellationToken
    ) -> ExtractionResult:
        candidates: list[CandidateClaim] = []
        for entry in user_messages(request.entries):
            cancel.raise_if_cancelled()
            deadline.raise_if_expired("verbatim extraction")
            candidates.extend(
                CandidateClaim(
                    content=piece,
                    kind=ClaimKind.EPISODIC,
                    importance=VERBATIM_IMPORTANCE,
                    source_entry_ids=(entry.id,),
                )
                for piece in split_bounded(entry.content, self._limit)
            )
        screened = screen(self._policy, candidates)
        return ExtractionResult(candidates=screened.candidates, rejected=screened.rejected)
