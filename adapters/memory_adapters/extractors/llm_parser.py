"""Parse an extraction model's answer into candidates, strictly per candidate (reference §7.3).

Tolerant about the envelope — a ```json fence, prose before or after, a legacy bare array of
memories, a single memory object — because models wrap JSON in all of these. Strict about
every candidate: its temporal metadata must be well formed (ISO-8601 with Z or an offset, or
epoch milliseconds; calendar-valid; from < until; confidence in [0, 1]; a known precision; a
canonical IANA zone) or that one candidate is rejected — never the batch, and never kept as
an atemporal fact instead (R-TIME-4). Content over the limit is rejected, not truncated.

A response with no usable JSON at all raises ProviderResponseError, so the ingestion cursor
does not advance over a span nothing was learned from. Errors and reason codes never quote
the response: it may hold user content.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from datetime import timezone as fixed_offset

from memory_adapters.extractors.llm_prompt import MAX_MEMORIES, MAX_SUGGESTIONS
from memory_core.domain.claims import (
    CATEGORY_IMPORTANCE_FLOORS,
    DEFAULT_IMPORTANCE,
    MAX_EXTRACTED_CONTENT_CODE_POINTS,
    Category,
    ClaimKind,
    kind_for_category,
)
from memory_core.domain.directives import DirectiveKind, directive_identity_hash
from memory_core.domain.errors import ProviderResponseError, TemporalError, ValidationError
from memory_core.domain.temporal import (
    ATEMPORAL,
    Interval,
    Precision,
    TemporalKind,
    TemporalMetadata,
)
from memory_core.ports.extraction import (
    CandidateClaim,
    DirectiveSuggestion,
    ExtractionResult,
    RejectionReason,
    is_valid_slot,
)

__all__ = ["parse_extraction", "parse_temporal"]

_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\r?\n?(?P<body>.*?)```", re.DOTALL)
_MAX_JSON_STARTS = 64  # bound the scan of prose full of brackets
_ISO = re.compile(
    r"(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})T(?P<hour>\d{2}):(?P<minute>\d{2})"
    r"(?::(?P<second>\d{2})(?:\.(?P<fraction>\d{1,9}))?)?"
    r"(?P<zone>Z|(?P<sign>[+-])(?P<off_h>\d{2}):(?P<off_m>\d{2}))",
    re.ASCII,
)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_LEGACY_KINDS = {"episodic": ClaimKind.EPISODIC, "semantic": ClaimKind.SEMANTIC}


class _Rejected(Exception):
    def __init__(self, reason: RejectionReason) -> None:
        self.reason = reason
        super().__init__(reason.value)


def _unusable(code: str) -> ProviderResponseError:
    return ProviderResponseError(f"extraction response unusable: {code}")


# --- the envelope ---------------------------------------------------------------------------


def _decode_first(text: str) -> object:
    """The first JSON object or array in `text` that decodes, preferring an envelope."""
    decoder = json.JSONDecoder()
    starts = [i for i, char in enumerate(text) if char in "{["][:_MAX_JSON_STARTS]
    if not starts:
        raise _unusable("missing-json")
    decoded: list[object] = []
    for start in starts:
        try:
            value, _ = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):  # RecursionError: absurdly deep nesting
            continue
        if isinstance(value, dict) and ("memories" in value or "directiveSuggestions" in value):
            return value
        decoded.append(value)
    if not decoded:
        raise _unusable("invalid-json")
    # A list of objects is the legacy bare array; "[1]" in prose before it is not.
    for value in decoded:
        if isinstance(value, list) and all(isinstance(item, dict) for item in value):
            return value
    return decoded[0]


def _payload(text: str) -> object:
    if not isinstance(text, str) or not text.strip():
        raise _unusable("empty-response")
    for fence in _FENCE.finditer(text):
        try:
            return _decode_first(fence["body"])
        except ProviderResponseError:
            continue  # a broken fence may sit next to good JSON outside it
    return _decode_first(text)


def _sections(payload: object) -> tuple[list[object], object]:
    if isinstance(payload, list):
        return payload, None
    if not isinstance(payload, dict):
        raise _unusable("non-array")
    if "memories" not in payload and "content" in payload:
        return [payload], None  # one memory object on its own
    memories = payload.get("memories", [])
    if not isinstance(memories, list):
        raise _unusable("non-array")
    return memories, payload.get("directiveSuggestions")


# --- temporal (strict) ----------------------------------------------------------------------


def _bound(value: object) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise _Rejected(RejectionReason.INVALID_TEMPORAL)
    try:
        if isinstance(value, int | float):
            if not math.isfinite(value):
                raise _Rejected(RejectionReason.INVALID_TEMPORAL)
            return _EPOCH + timedelta(milliseconds=value)
        if isinstance(value, str) and (match := _ISO.fullmatch(value)):
            return _iso(match)
    except (OverflowError, ValueError) as exc:
        raise _Rejected(RejectionReason.INVALID_TEMPORAL) from exc
    raise _Rejected(RejectionReason.INVALID_TEMPORAL)


def _iso(match: re.Match[str]) -> datetime:
    off_h, off_m = int(match["off_h"] or 0), int(match["off_m"] or 0)
    if off_h > 14 or off_m > 59 or (off_h == 14 and off_m):
        raise ValueError("offset out of range")
    offset = timedelta(hours=off_h, minutes=off_m) * (-1 if match["sign"] == "-" else 1)
    fraction = (match["fraction"] or "0")[:6].ljust(6, "0")
    # datetime() refuses year 0, 31 April, hour 24, minute 60 and the like.
    return datetime(
        int(match["year"]),
        int(match["month"]),
        int(match["day"]),
        int(match["hour"]),
        int(match["minute"]),
        int(match["second"] or 0),
        int(fraction),
        tzinfo=fixed_offset(offset),
    ).astimezone(UTC)


def _first(data: Mapping[str, object], *names: str) -> object:
    for name in names:
        if name in data:
            return data[name]
    return None


def parse_temporal(data: object) -> TemporalMetadata:
    """Model-output temporal metadata under the strict rules; raises TemporalError."""
    try:
        return _temporal(data)
    except _Rejected as exc:
        raise TemporalError("temporal", "malformed temporal metadata") from exc


def _temporal(data: object) -> TemporalMetadata:
    if data is None:
        return ATEMPORAL
    if not isinstance(data, dict):
        raise _Rejected(RejectionReason.INVALID_TEMPORAL)
    raw_kind = _first(data, "temporalKind", "kind")
    if not isinstance(raw_kind, str):
        raise _Rejected(RejectionReason.INVALID_TEMPORAL)
    try:
        kind = TemporalKind(raw_kind)
    except ValueError as exc:
        raise _Rejected(RejectionReason.INVALID_TEMPORAL) from exc
    valid_from = _bound(data.get("validFrom"))
    valid_until = _bound(data.get("validUntil"))
    if kind is TemporalKind.ATEMPORAL:
        if valid_from is not None or valid_until is not None:
            # Bounds say the fact is timed; keeping it as permanent would be the one wrong
            # answer (R-TIME-4).
            raise _Rejected(RejectionReason.INVALID_TEMPORAL)
        return ATEMPORAL
    confidence = _first(data, "temporalConfidence", "confidence")
    precision = _first(data, "temporalPrecision", "precision")
    zone = _first(data, "timeZone", "temporalTimeZone", "timezone")
    if (
        isinstance(confidence, bool)
        or not isinstance(confidence, int | float)
        or not isinstance(precision, str)
        or not isinstance(zone, str)
    ):
        raise _Rejected(RejectionReason.INVALID_TEMPORAL)
    try:
        return TemporalMetadata(
            kind=kind,
            interval=Interval(valid_from=valid_from, valid_until=valid_until),
            precision=Precision(precision.strip().lower()),
            timezone=zone,
            confidence=float(confidence),
        )
    except (TemporalError, ValueError) as exc:
        raise _Rejected(RejectionReason.INVALID_TEMPORAL) from exc


# --- one candidate --------------------------------------------------------------------------


def _importance(value: object, category: Category | None) -> float:
    valid = (
        not isinstance(value, bool)
        and isinstance(value, int | float)
        and math.isfinite(value)
        and 0.0 <= value <= 1.0
    )
    importance = float(value) if valid else DEFAULT_IMPORTANCE  # type: ignore[arg-type]
    floor = CATEGORY_IMPORTANCE_FLOORS.get(category, 0.0) if category else 0.0
    return max(importance, floor)


def _category(value: object) -> Category | None:
    # An unknown category keeps the memory, without a category (reference §3.1).
    try:
        return Category(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _candidate(item: object, max_content: int) -> CandidateClaim:
    if not isinstance(item, dict):
        raise _Rejected(RejectionReason.INVALID_CANDIDATE)
    content = item.get("content")
    if not isinstance(content, str):
        raise _Rejected(RejectionReason.INVALID_CANDIDATE)
    content = content.strip()
    if not content:
        raise _Rejected(RejectionReason.EMPTY_CONTENT)
    if len(content) > max_content:
        raise _Rejected(RejectionReason.CANDIDATE_TOO_LARGE)
    slot = item.get("slot")
    if slot is not None and not is_valid_slot(slot):
        raise _Rejected(RejectionReason.INVALID_SLOT)
    temporal = _temporal(item.get("temporal"))
    category = _category(item.get("category"))
    legacy = item.get("kind")  # episodic/semantic from older prompts; a category overrides it
    default_kind = _LEGACY_KINDS.get(legacy) if isinstance(legacy, str) else None
    return CandidateClaim(
        content=content,
        kind=kind_for_category(category, default_kind or ClaimKind.SEMANTIC),
        category=category,
        importance=_importance(item.get("importance"), category),
        temporal=temporal,
        slot=slot,
    )


# --- directive suggestions ------------------------------------------------------------------


def _suggestion(item: object) -> DirectiveSuggestion:
    if not isinstance(item, dict):
        raise _Rejected(RejectionReason.INVALID_SUGGESTION)
    kind, content, topic = item.get("kind"), item.get("content"), item.get("topic")
    if kind == DirectiveKind.SUPPRESS_TOPIC.value and content is None and isinstance(topic, str):
        content = f"Do not bring up {topic.strip()}."
    if kind == DirectiveKind.INSTRUCTION.value:
        topic = None  # an instruction has no topic; a stray one is not worth a rejection
    try:
        return DirectiveSuggestion(kind=kind, content=content, topic=topic)
    except (ValidationError, TypeError) as exc:
        raise _Rejected(RejectionReason.INVALID_SUGGESTION) from exc


def _suggestions(raw: object) -> tuple[list[DirectiveSuggestion], list[RejectionReason]]:
    if raw is None:
        return [], []
    if not isinstance(raw, list):
        return [], [RejectionReason.INVALID_SUGGESTION]
    kept: dict[str, DirectiveSuggestion] = {}
    rejected: list[RejectionReason] = []
    for item in raw:
        try:
            suggestion = _suggestion(item)
        except _Rejected as exc:
            rejected.append(exc.reason)
            continue
        identity = directive_identity_hash(suggestion.kind, suggestion.content, suggestion.topic)
        if identity in kept:
            continue
        if len(kept) >= MAX_SUGGESTIONS:
            rejected.append(RejectionReason.SUGGESTION_OVER_LIMIT)
            continue
        kept[identity] = suggestion
    return list(kept.values()), rejected


# --- the whole response ---------------------------------------------------------------------


def parse_extraction(
    text: str, *, max_content_code_points: int = MAX_EXTRACTED_CONTENT_CODE_POINTS
) -> ExtractionResult:
    """Candidates (without source ids), suggestions and one reason code per item dropped.

    :raises ProviderResponseError: empty response, no JSON, invalid JSON, or `memories` not an
        array — the codes `empty-response`, `missing-json`, `invalid-json`, `non-array`.
    """
    memories, raw_suggestions = _sections(_payload(text))
    candidates: list[CandidateClaim] = []
    rejected: list[RejectionReason] = []
    task_outcomes = 0
    for item in memories:
        try:
            candidate = _candidate(item, max_content_code_points)
        except _Rejected as exc:
            rejected.append(exc.reason)
            continue
        if candidate.category is Category.TASK_OUTCOME:
            task_outcomes += 1
            if task_outcomes > 1:
                rejected.append(RejectionReason.EXTRA_TASK_OUTCOME)
                continue
        if len(candidates) >= MAX_MEMORIES:
            rejected.append(RejectionReason.OVER_LIMIT)
            continue
        candidates.append(candidate)
    suggestions, dropped = _suggestions(raw_suggestions)
    return ExtractionResult(
        candidates=candidates, suggestions=suggestions, rejected=(*rejected, *dropped)
    )
