"""The one secret policy shared by tools, routes, background tasks, logs and prompts (R-PRIV-1).

`PatternSecretPolicy` implements the `SecretPolicy` port (`memory_core.ports.secrets`) over
the detector table in `secret_patterns`; `redact_for_log` adds the error-message rules of
reference §9 so provider errors, logs and diagnostics never carry a credential (R-PROV-5).

The policy is pure, deterministic rule code over domain values, so it lives in the domain
with its detectors, and so does `SecretFinding`, the value it returns: the port only names
the capability, in the terms defined here.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence

import attrs

from memory_core.domain.errors import SecretRejected, ValidationError
from memory_core.domain.folding import fold
from memory_core.domain.secret_patterns import (
    DEFAULT_DETECTORS,
    CardNumberDetector,
    Detector,
    Hint,
    Prefilter,
    RegexDetector,
)

__all__ = ["PatternSecretPolicy", "SecretFinding", "WriteMode", "redact_for_log"]


@attrs.frozen(kw_only=True)
class SecretFinding:
    """Where a secret-like span sits in a text: detector name and code-point offsets."""

    kind: str
    start: int
    end: int


class WriteMode(enum.StrEnum):
    """What `check_write` does with secret-like content."""

    REJECT = "reject"
    REDACT = "redact"


@attrs.frozen(kw_only=True)
class _Candidate:
    kind: str
    start: int
    end: int
    specificity: int
    order: int  # position in the detector list: the earlier detector wins a full tie


def _resolve(candidates: list[_Candidate]) -> list[SecretFinding]:
    """Merge overlapping candidates into one finding each, named by the strongest of them.

    The finding spans the union of its cluster rather than only the winner, so a shorter
    detector's tail can never be left unredacted next to a longer match.
    """
    findings: list[SecretFinding] = []
    candidates.sort(key=lambda c: (c.start, -c.end))
    index = 0
    while index < len(candidates):
        cluster = [candidates[index]]
        end = cluster[0].end
        index += 1
        while index < len(candidates) and candidates[index].start < end:
            cluster.append(candidates[index])
            end = max(end, candidates[index].end)
            index += 1
        winner = max(cluster, key=lambda c: (c.end - c.start, c.specificity, -c.order))
        findings.append(SecretFinding(kind=winner.kind, start=cluster[0].start, end=end))
    return findings


def _hint(detector: Detector) -> Hint | None:
    # Only the table's own detector types carry a hint; any other detector always runs.
    if isinstance(detector, RegexDetector | CardNumberDetector):
        return detector.hint
    return None


def _to_mode(value: WriteMode | str) -> WriteMode:
    try:
        return WriteMode(value)
    except ValueError:
        raise ValidationError("mode", f"must be one of {[m.value for m in WriteMode]}") from None


@attrs.frozen(kw_only=True)
class PatternSecretPolicy:
    """Finds credentials by pattern; rejects or redacts them on write as `mode` says.

    `extra_detectors` run after the built-in table and take part in overlap resolution on
    equal terms (by span length, then specificity).
    """

    mode: WriteMode = attrs.field(default=WriteMode.REJECT, converter=_to_mode)
    extra_detectors: tuple[Detector, ...] = attrs.field(default=(), converter=tuple)
    # The detectors' hints, by position in `detectors`: which of them may match a text.
    _prefilter: Prefilter = attrs.field(init=False, repr=False, eq=False)

    @_prefilter.default
    def _prefilter_of_detectors(self) -> Prefilter:
        return Prefilter(_hint(detector) for detector in self.detectors)

    @property
    def detectors(self) -> tuple[Detector, ...]:
        return DEFAULT_DETECTORS + self.extra_detectors

    def find(self, text: str) -> Sequence[SecretFinding]:
        """Findings with offsets into `text`. Detectors run on the folded text, so a key split
        by a zero-width space, soft hyphen or word joiner (which render as nothing and which
        the prompt sanitiser strips) or written in fullwidth digits is still a key. A
        detector whose hint the folded text lacks is not run: it could match nothing."""
        folded = fold(text)
        scanned = folded.text
        detectors = self.detectors
        candidates: list[_Candidate] = []
        for order in self._prefilter.admitted(scanned):
            detector = detectors[order]
            for s, e in detector.spans(scanned):
                if e > s:
                    start, end = folded.original_span(s, e)
                    candidates.append(
                        _Candidate(
                            kind=detector.name,
                            start=start,
                            end=end,
                            specificity=detector.specificity,
                            order=order,
                        )
                    )
        return _resolve(candidates)

    def redact(self, text: str) -> str:
        return _apply(text, self.find(text))

    def check_write(self, text: str, *, field: str = "content") -> str:
        findings = self.find(text)
        if not findings:
            return text
        if self.mode is WriteMode.REJECT:
            # Only detector names reach the error; the matched text never does.
            raise SecretRejected(field, tuple(sorted({f.kind for f in findings})))
        return _apply(text, findings)


def _apply(text: str, findings: Sequence[SecretFinding]) -> str:
    parts: list[str] = []
    cursor = 0
    for finding in findings:
        parts.append(text[cursor : finding.start])
        parts.append(f"[REDACTED:{finding.kind}]")
        cursor = finding.end
    parts.append(text[cursor:])
    return "".join(parts)


# Reference §9 error-message rules, in order. They are looser than the write policy because an
# error message is not prose worth preserving: any value after a credential word goes.
_VALUE = r"(?!\[REDACTED)[^\s,;\"']+"
_LOG_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?i)\b(bearer)\s+" + _VALUE), r"\1 [REDACTED]"),
    (
        re.compile(r"(?i)\b((?:incorrect\s+)?api[ _-]?key\s+(?:provided|is)\s*:?\s*)" + _VALUE),
        r"\1[REDACTED]",
    ),
    (
        re.compile(
            r"(?i)\b((?:api[ _-]?key|access[ _-]?token|refresh[ _-]?token)(?:\s*[:=]\s*|\s+))"
            r"(?!(?:provided|is)\b)" + _VALUE
        ),
        r"\1[REDACTED]",
    ),
    (
        re.compile(
            r"(?i)([?&](?:api_key|access_token|refresh_token|token|key|secret|signature)=)"
            r"[^&#\s\"']+"
        ),
        r"\1[REDACTED]",
    ),
    (re.compile(r"(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{8,}"), "[REDACTED]"),
    (re.compile(r"(?i)\bhttps?://[^\s\"'<>]+"), "[URL]"),
)
_WHITESPACE = re.compile(r"\s+")
_LOG_POLICY = PatternSecretPolicy(mode=WriteMode.REDACT)


def redact_for_log(text: str, limit: int = 500) -> str:
    """`text` made safe for a log line, a provider error or a diagnostic (R-PROV-5).

    Applies the pattern policy (redacting), then the reference error-message rules; URLs
    become `[URL]`, whitespace collapses to single spaces and the result is at most `limit`
    characters.
    """
    if limit < 1:
        raise ValidationError("limit", "must be at least 1")
    redacted = _LOG_POLICY.redact(text)
    for pattern, replacement in _LOG_RULES:
        redacted = pattern.sub(replacement, redacted)
    redacted = _WHITESPACE.sub(" ", redacted).strip()
    if len(redacted) > limit:
        redacted = redacted[: limit - 1] + "…"
    return redacted
