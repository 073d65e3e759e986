"""The detectors behind the secret policy (R-PRIV-1): what a credential looks like
(`table`), the kinds of detector (`detectors`) and the hints that let the policy skip a
detector that cannot match a text (`hints`)."""

from memory_core.domain.secret_patterns.detectors import (
    CardNumberDetector,
    Detector,
    RegexDetector,
    luhn_valid,
)
from memory_core.domain.secret_patterns.hints import Hint, Prefilter
from memory_core.domain.secret_patterns.table import DEFAULT_DETECTORS

__all__ = [
    "DEFAULT_DETECTORS",
    "CardNumberDetector",
    "Detector",
    "Hint",
    "Prefilter",
    "RegexDetector",
    "luhn_valid",
]
