"""What every settings group builds its fields from: the documented field and the common ranges.

Each field documents itself in its metadata (`doc`), which the configuration reference and its
drift test read.
"""

from __future__ import annotations

import attrs

__all__ = ["doc", "non_negative", "positive", "unit"]


def doc(text: str) -> dict[str, str]:
    return {"doc": text}


positive = attrs.validators.gt(0)
non_negative = attrs.validators.ge(0)
unit = [attrs.validators.ge(0.0), attrs.validators.le(1.0)]
