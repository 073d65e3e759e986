"""HashEmbedder: words hashed (keyed BLAKE2b) into a fixed-size unit vector.

A complete `EmbeddingProvider` in a few lines, to show the port's promises rather than a
model: deterministic vectors of one fixed identity, the deadline and the cancellation token
honoured before any work, an empty input answered without work, and a secret (the hashing
key) that no repr, error or identity ever shows. Lexical only: texts sharing words are
near, synonyms are not.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.ports.providers import EmbeddingPurpose

__all__ = ["MAX_DIMENSIONS", "HashEmbedder"]

MAX_DIMENSIONS = 4_096
_WORDS = re.compile(r"\w+")
_PERSON = b"am-hash-embed-v1"  # BLAKE2b personalisation: these hashes mean nothing elsewhere
_CHECK_EVERY = 256  # texts between deadline checks in a large batch


class HashEmbedder:
    """Feature hashing of lower-cased words; each word adds ±1 to one of `dimensions` slots."""

    def __init__(self, *, dimensions: int = 64, key: str | None = None) -> None:
        if isinstance(dimensions, bool) or not isinstance(dimensions, int):
            raise TypeError("dimensions must be an int")
        if not 1 <= dimensions <= MAX_DIMENSIONS:
            raise ValueError(f"dimensions must be within 1..{MAX_DIMENSIONS}")
        self._dim = dimensions
        # Keyed hashing: another key gives unrelated vectors. Only a digest is kept.
        self._key = hashlib.blake2b(key.encode(), digest_size=32).digest() if key else b""

    def __repr__(self) -> str:
        return f"HashEmbedder(dimensions={self._dim}, keyed={bool(self._key)})"

    @property
    def provider_id(self) -> str:
        return "hash-embedder"

    @property
    def model_id(self) -> str:
        # Vectors of two keys must never share a vector store (R-PROV-4), so the identity
        # names the key by a fingerprint of its digest, never by the key.
        if not self._key:
            return "blake2b-words-v1"
        fingerprint = hashlib.blake2b(self._key, digest_size=4, person=b"fingerprint").hexdigest()
        return f"blake2b-words-v1-{fingerprint}"

    def vector(self, text: str) -> list[float]:
        """The unit vector of `text`; the same text gives the same vector everywhere."""
        slots = [0.0] * self._dim
        for word in _WORDS.findall(text.lower()) or [text]:
            digest = hashlib.blake2b(
                word.encode(), digest_size=8, key=self._key, person=_PERSON
            ).digest()
            slot = int.from_bytes(digest[:4], "little") % self._dim
            slots[slot] += 1.0 if digest[4] & 1 else -1.0
        norm = math.sqrt(sum(value * value for value in slots))
        if norm == 0.0:  # every word cancelled another out: still a valid, non-zero vector
            slots[0], norm = 1.0, 1.0
        return [value / norm for value in slots]

    async def dimensions(self, *, deadline: Deadline, cancel: CancellationToken) -> int:
        cancel.raise_if_cancelled()
        deadline.raise_if_expired("hash-embedder dimensions")
        return self._dim

    async def embed(
        self,
        texts: Sequence[str],
        *,
        purpose: EmbeddingPurpose,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> Sequence[Sequence[float]]:
        vectors: list[list[float]] = []
        for index, text in enumerate(texts):
            if index % _CHECK_EVERY == 0:
                cancel.raise_if_cancelled()
                deadline.raise_if_expired("hash-embedder embed")
            vectors.append(self.vector(text))
        return vectors

    async def aclose(self) -> None:
        """Nothing to release; idempotent like every provider's."""
