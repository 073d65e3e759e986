"""A deterministic feature-hashing embedder: lexical, instant, dependency-free.

For tests, for the retrieval evaluation's second column, and for machines where the local
model cannot load. Features are word tokens, code/path parts, and CJK character bigrams
and trigrams, each hashed (FNV-1a) to a signed bucket; vectors are L2-normalised. It knows
no synonyms — a lexical baseline, not a semantic model.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import ValidationError
from memory_core.domain.tokens import is_cjk_like
from memory_core.ports.providers import EmbeddingPurpose

__all__ = ["HashingEmbedder"]

_WORD = re.compile(r"[a-z0-9_]+(?:[./:@#+-][a-z0-9_]+)*")
_PART = re.compile(r"[a-z0-9]+")


def _fnv1a64(text: str) -> int:
    value = 0xCBF29CE484222325
    for byte in text.encode("utf-8"):
        value ^= byte
        value = (value * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return value


def _features(text: str) -> list[tuple[str, float]]:
    normalised = unicodedata.normalize("NFKC", text).lower()
    features: list[tuple[str, float]] = []
    for match in _WORD.finditer(normalised):
        word = match.group()
        features.append((f"w:{word}", 1.0))
        parts = _PART.findall(word)
        if len(parts) > 1:
            features.extend((f"w:{part}", 0.7) for part in parts)
    run: list[str] = []
    for char in [*normalised, " "]:
        if is_cjk_like(char):
            run.append(char)
            continue
        if run:
            joined = "".join(run)
            for size, weight in ((2, 0.8), (3, 1.0)):
                features.extend(
                    (f"c:{joined[i : i + size]}", weight) for i in range(len(joined) - size + 1)
                )
            if len(joined) == 1:
                features.append((f"c:{joined}", 1.0))
            run = []
    return features


class HashingEmbedder:
    """`EmbeddingProvider` with no model: the same text always gives the same vector."""

    def __init__(self, *, dimensions: int = 256) -> None:
        if not isinstance(dimensions, int) or not 8 <= dimensions <= 4096:
            raise ValidationError("dimensions", "must be an integer in [8, 4096]")
        self._dimensions = dimensions

    @property
    def provider_id(self) -> str:
        return "hashing"

    @property
    def model_id(self) -> str:
        return f"fnv1a-lexical-{self._dimensions}"

    async def dimensions(self, *, deadline: Deadline, cancel: CancellationToken) -> int:
        return self._dimensions

    def embed_one(self, text: str) -> list[float]:
        vector = [0.0] * self._dimensions
        for feature, weight in _features(text):
            hashed = _fnv1a64(feature)
            sign = 1.0 if hashed & (1 << 63) else -1.0
            vector[hashed % self._dimensions] += sign * weight
        norm = math.sqrt(sum(value * value for value in vector))
        if norm == 0.0:
            # A text with no features (punctuation only) still needs a valid, non-zero vector.
            vector[_fnv1a64(text) % self._dimensions] = 1.0
            return vector
        return [value / norm for value in vector]

    async def embed(
        self,
        texts: Sequence[str],
        *,
        purpose: EmbeddingPurpose,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> Sequence[Sequence[float]]:
        cancel.raise_if_cancelled()
        deadline.raise_if_expired("hashing embedding")
        return [self.embed_one(text) for text in texts]

    async def aclose(self) -> None:
        return None
