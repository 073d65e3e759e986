"""What a provider's embedding answer must be before anything uses it: one vector per text,
of one dimension, finite numbers (R-PROV-4)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from memory_core.domain.errors import ProviderResponseError

__all__ = ["Vectors", "checked_vectors"]

Vectors = tuple[tuple[float, ...], ...]


def checked_vectors(raw: object, expected: int, dim: int | None) -> Vectors:
    """Re-check what a provider returned: a third-party adapter may be careless. An error
    names the vector by its position in the request, never its values.

    Per vector the dimension comes first (a length), then the values in one pass at C speed:
    `map(float)` converts them, and their sum is finite unless one of them is NaN or
    infinite — only then (or for finite values so large that they overflow the sum) are they
    looked at one by one. A float-by-float check in Python was most of the gateway's time
    for a batch of 384-dimension vectors (issue 15)."""
    if isinstance(raw, str | bytes) or not isinstance(raw, Sequence) or len(raw) != expected:
        raise ProviderResponseError(f"expected {expected} vector(s) from the provider")
    vectors: list[tuple[float, ...]] = []
    for index, item in enumerate(raw):
        try:
            size = len(item)  # type: ignore[arg-type]
        except TypeError:
            raise ProviderResponseError(f"vector {index} is not a sequence of numbers") from None
        if size == 0:
            raise ProviderResponseError(f"vector {index} is empty")
        dim = size if dim is None else dim
        if size != dim:
            raise ProviderResponseError(
                f"vector {index} of {expected} has dimension {size} instead of {dim}"
            )
        try:
            vector = tuple(map(float, item))  # type: ignore[call-overload]
        except (TypeError, ValueError):
            raise ProviderResponseError(f"vector {index} holds a non-number") from None
        if not math.isfinite(sum(vector)) and not all(map(math.isfinite, vector)):
            raise ProviderResponseError(f"vector {index} holds a non-finite value")
        vectors.append(vector)
    return tuple(vectors)
