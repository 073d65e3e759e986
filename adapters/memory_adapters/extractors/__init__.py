"""Extractors: turn a span of conversation into candidate claims and directive suggestions.

- `RulesExtractor` ("rules"): deterministic English patterns over user messages; offline.
- `LLMExtractor` ("llm"): a text model through the `TextProvider` port, strictly parsed.
- `VerbatimExtractor` ("verbatim"): each user turn as it was said, for retrieval benchmarks.
"""

from __future__ import annotations

from memory_adapters.extractors.llm import LLMExtractor
from memory_adapters.extractors.rules import RulesExtractor
from memory_adapters.extractors.verbatim import VerbatimExtractor

__all__ = ["LLMExtractor", "RulesExtractor", "VerbatimExtractor"]
