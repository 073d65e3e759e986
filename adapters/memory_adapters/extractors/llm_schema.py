"""The JSON Schema of an extraction answer, for providers that enforce structured output.

Strict mode (OpenAI, vLLM, llama.cpp server, Ollama's OpenAI endpoint) wants every property
listed as required and no others allowed, so the optional fields of the prompt's format are
nullable instead of absent; the parser (`llm_parser`) reads `null` as "not given" and stays
tolerant for providers that ignore the schema.
"""

from __future__ import annotations

from typing import Any

from memory_adapters.extractors.llm_prompt import MAX_MEMORIES, MAX_SUGGESTIONS
from memory_core.domain.claims import Category
from memory_core.domain.directives import DirectiveKind
from memory_core.domain.temporal import Precision, TemporalKind
from memory_core.ports.providers import JsonSchema

__all__ = ["EXTRACTION_SCHEMA"]


def _nullable(kind: str) -> dict[str, Any]:
    return {"type": [kind, "null"]}


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


_TEMPORAL = {
    "anyOf": [
        {"type": "null"},
        _object({
            "temporalKind": {"type": "string", "enum": [k.value for k in TemporalKind]},
            "validFrom": _nullable("string"),
            "validUntil": _nullable("string"),
            "temporalPrecision": {"type": "string", "enum": [p.value for p in Precision]},
            "temporalConfidence": {"type": "number"},
            "timeZone": {"type": "string"},
        }),
    ]
}  # fmt: skip
_MEMORY = _object({
    "content": {"type": "string"},
    "category": {"type": "string", "enum": [c.value for c in Category]},
    "importance": {"type": "number"},
    "slot": _nullable("string"),
    "temporal": _TEMPORAL,
})  # fmt: skip
_SUGGESTION = _object({
    "kind": {"type": "string", "enum": [k.value for k in DirectiveKind]},
    "content": {"type": "string"},
    "topic": _nullable("string"),
})  # fmt: skip

EXTRACTION_SCHEMA = JsonSchema(
    name="memory_extraction",
    schema=_object({
        "memories": {"type": "array", "items": _MEMORY, "maxItems": MAX_MEMORIES},
        "directiveSuggestions": {
            "type": "array",
            "items": _SUGGESTION,
            "maxItems": MAX_SUGGESTIONS,
        },
    }),
)  # fmt: skip
