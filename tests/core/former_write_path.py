"""Write-path helpers as they were before they were made cheaper (issue 15), kept verbatim as
the reference the sameness tests compare the current ones with. Test support only."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Sequence

from memory_core.domain.folding import fold
from memory_core.domain.secrets import PatternSecretPolicy, SecretFinding, _Candidate, _resolve

__all__ = ["former_find", "former_folded_content", "former_json_array"]


def former_find(self: PatternSecretPolicy, text: str) -> Sequence[SecretFinding]:
    """`PatternSecretPolicy.find` as it was: every detector over every text."""
    folded = fold(text)
    candidates = [
        _Candidate(
            kind=detector.name,
            start=start,
            end=end,
            specificity=detector.specificity,
            order=order,
        )
        for order, detector in enumerate(self.detectors)
        for start, end in (
            folded.original_span(s, e) for s, e in detector.spans(folded.text) if e > s
        )
    ]
    return _resolve(candidates)


def former_folded_content(text: str) -> str:
    """`provenance.folded_content` as it was."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    chars = []
    for char in folded:
        category = unicodedata.category(char)
        if category == "Cf":
            continue
        chars.append(" " if category[0] in "PZ" or char.isspace() else char)
    return " ".join("".join(chars).split())


def former_json_array(items: list[str]) -> str:
    """`provenance._json_array` as it was."""
    # Same text as JavaScript's JSON.stringify for an array of strings.
    return json.dumps(items, separators=(",", ":"), ensure_ascii=False)
