"""First-party extractor registrations: "rules" (the offline default), "verbatim" and "llm".

Registered through the `agent_memory` entry-point group like any third-party plugin
(R-ARCH-3); chosen by name from `[plugins.extractor]` (R-ARCH-5). All three take the shared
secret policy from the context (R-PRIV-1) and the claim length limit from the settings.

The "llm" extractor talks to a `TextProvider` object, never to an HTTP client. Which text
provider it uses is named in its options (`text_provider = "openai-compatible"`); the
composition root builds that provider through the registry (wrapped by the gateway) and
hands the object over as `FactoryContext.text_provider`. Without one the factory refuses
with a ConfigError naming the option, instead of failing on the first extraction.
"""

from __future__ import annotations

import attrs

from memory_core.domain.errors import ConfigError
from memory_core.ports.extraction import Extractor
from memory_core.ports.providers import TextProvider
from memory_plugins.config import structure_options
from memory_plugins.context import FactoryContext
from memory_plugins.hookspecs import Register, hookimpl

__all__ = [
    "LLMExtractorOptions",
    "NoOptions",
    "agent_memory_register_extractors",
]


@attrs.frozen(kw_only=True)
class NoOptions:
    """ "rules" and "verbatim" take no options; any key is a mistake worth reporting."""


def _positive_or_none(_: object, attribute: attrs.Attribute[int | None], value: object) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ValueError(f"'{attribute.name}' must be a positive integer (got {value!r})")


def _temperature(_: object, attribute: attrs.Attribute[float], value: float) -> None:
    if not 0.0 <= value <= 2.0:
        raise ValueError(f"'{attribute.name}' must be within [0, 2] (got {value!r})")


@attrs.frozen(kw_only=True)
class LLMExtractorOptions:
    """`[plugins.extractor.options]` of the "llm" extractor."""

    # Name of the `text_provider` plugin the composition root builds and hands over.
    text_provider: str | None = None
    temperature: float = attrs.field(default=0.2, validator=_temperature)
    max_tokens: int | None = attrs.field(default=None, validator=_positive_or_none)


def _make_rules(context: FactoryContext) -> Extractor:
    from memory_adapters.extractors import RulesExtractor

    structure_options(context.options, NoOptions, family="extractor")
    return RulesExtractor(
        secret_policy=context.secret_policy,
        max_content_code_points=context.settings.extracted_claim_max_code_points,
    )


def _make_verbatim(context: FactoryContext) -> Extractor:
    from memory_adapters.extractors import VerbatimExtractor

    structure_options(context.options, NoOptions, family="extractor")
    return VerbatimExtractor(
        secret_policy=context.secret_policy,
        max_content_code_points=context.settings.extracted_claim_max_code_points,
    )


def _make_llm(context: FactoryContext) -> Extractor:
    from memory_adapters.extractors import LLMExtractor

    options = structure_options(context.options, LLMExtractorOptions, family="extractor")
    # Read defensively: the field belongs to the composition root's context.
    provider = getattr(context, "text_provider", None)
    if provider is None:
        if options.text_provider is None:
            raise ConfigError(
                "plugins.extractor.options.text_provider: required by the llm extractor "
                "(name the text_provider plugin it should use, e.g. 'openai-compatible')"
            )
        raise ConfigError(
            f"plugins.extractor.options.text_provider: the text provider "
            f"{options.text_provider!r} was not handed to the llm extractor "
            "(FactoryContext.text_provider is empty)"
        )
    if not isinstance(provider, TextProvider):
        raise ConfigError("plugins.extractor: FactoryContext.text_provider is not a TextProvider")
    return LLMExtractor(
        provider,
        secret_policy=context.secret_policy,
        max_content_code_points=context.settings.extracted_claim_max_code_points,
        temperature=options.temperature,
        max_tokens=options.max_tokens,
    )


@hookimpl
def agent_memory_register_extractors(register: Register) -> None:
    register(
        "rules",
        _make_rules,
        description="Deterministic English patterns over user messages; offline, no model.",
        capabilities=("offline", "temporal", "directive-suggestions"),
    )
    register(
        "verbatim",
        _make_verbatim,
        description="Each user turn stored as said (episodic); for retrieval benchmarks.",
        capabilities=("offline",),
    )
    register(
        "llm",
        _make_llm,
        description="A text model through the TextProvider port; strict JSON, per-candidate.",
        capabilities=("temporal", "directive-suggestions", "needs-text-provider"),
    )
