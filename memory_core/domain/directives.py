"""Directives: the user-approved trust plane, kept apart from remembered claims (R-DIR-*).

Only an explicit user create or approve makes a directive active; anything derived from
conversation is a draft (R-DIR-1). A `suppress_topic` topic must be specific enough to
match on — at least two visible base characters, in every script (R-DIR-2).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from datetime import datetime
from enum import StrEnum

import attrs

from memory_core.domain.errors import ValidationError
from memory_core.domain.temporal import require_utc

__all__ = [
    "MAX_ACTIVE_DIRECTIVES",
    "MAX_DIRECTIVE_CONTENT",
    "MAX_TOPIC_LENGTH",
    "MIN_TOPIC_BASE_CHARACTERS",
    "Directive",
    "DirectiveKind",
    "DirectiveSource",
    "DirectiveStatus",
    "clean_directive_text",
    "directive_identity_hash",
    "is_topic_specific",
    "match_text",
    "topic_matches",
]

MAX_ACTIVE_DIRECTIVES = 64
MAX_DIRECTIVE_CONTENT = 2_000
MAX_TOPIC_LENGTH = 512
MIN_TOPIC_BASE_CHARACTERS = 2  # a one-character substring matches nearly everything
_IDENTITY_DOMAIN = "deepchat-memory-directive-v1"
_WHITESPACE_RUN = re.compile(r"\s+")


class DirectiveKind(StrEnum):
    INSTRUCTION = "instruction"
    SUPPRESS_TOPIC = "suppress_topic"


class DirectiveStatus(StrEnum):
    DRAFT = "draft"
    ACTIVE = "active"
    REJECTED = "rejected"


class DirectiveSource(StrEnum):
    EXPLICIT_USER = "explicit_user"
    MANUAL = "manual"
    DERIVED_SUGGESTION = "derived_suggestion"  # always a draft


def _invisible_to_space(text: str) -> str:
    # Control and format characters (Cc/Cf) can hide text from a reviewer; they become spaces.
    return "".join(" " if unicodedata.category(ch) in ("Cc", "Cf") else ch for ch in text)


def clean_directive_text(text: str, *, field: str, limit: int) -> str:
    """Invisible characters to spaces, trimmed, bounded; raises ValidationError naming `field`."""
    if not isinstance(text, str):
        raise ValidationError(field, "must be text")
    cleaned = _invisible_to_space(text).strip()
    if not cleaned:
        raise ValidationError(field, "must not be blank")
    if len(cleaned) > limit:
        raise ValidationError(field, f"longer than {limit} code points")
    return cleaned


def match_text(text: str) -> str:
    """The form topics and contents are compared in: NFKC, invisible→space, collapsed, lowercase."""
    normalised = _invisible_to_space(unicodedata.normalize("NFKC", text))
    return _WHITESPACE_RUN.sub(" ", normalised).strip().lower()


def is_topic_specific(topic: str) -> bool:
    """True when a topic is narrow enough to suppress on: ≥2 visible base characters.

    Matching is a substring test, so one character — a Han character, but just as much a
    Latin `a` — would hide nearly every memory. The rule is the same for every script;
    controls, format characters, combining marks, separators and whitespace do not count.
    """
    visible = [
        ch
        for ch in match_text(topic)
        if unicodedata.category(ch)[0] not in ("C", "M", "Z") and not ch.isspace()
    ]
    return len(visible) >= MIN_TOPIC_BASE_CHARACTERS


def topic_matches(topic: str, content: str) -> bool:
    """Normalised substring match; an over-broad topic never matches (ignored on read)."""
    return is_topic_specific(topic) and match_text(topic) in match_text(content)


def directive_identity_hash(kind: DirectiveKind, content: str, topic: str | None) -> str:
    """SHA-256 over `deepchat-memory-directive-v1 NUL kind NUL identity` (reference §3.5)."""
    source = (topic or "") if kind is DirectiveKind.SUPPRESS_TOPIC else content
    identity = match_text(source)
    payload = f"{_IDENTITY_DOMAIN}\0{kind.value}\0{identity}"
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


@attrs.frozen(kw_only=True)
class Directive:
    id: str
    agent_id: str
    kind: DirectiveKind = attrs.field(converter=DirectiveKind)
    status: DirectiveStatus = attrs.field(converter=DirectiveStatus)
    source: DirectiveSource = attrs.field(converter=DirectiveSource)
    content: str
    topic: str | None = None  # normalised topic, suppress_topic only
    identity_hash: str
    created_at: datetime = attrs.field(converter=lambda v: require_utc(v, "created_at"))
    updated_at: datetime = attrs.field(converter=lambda v: require_utc(v, "updated_at"))

    def __attrs_post_init__(self) -> None:
        if self.kind is DirectiveKind.SUPPRESS_TOPIC and not self.topic:
            raise ValidationError("topic", "required for suppress_topic")
        if self.kind is DirectiveKind.INSTRUCTION and self.topic is not None:
            raise ValidationError("topic", "only suppress_topic directives have a topic")

    @property
    def is_runtime_eligible(self) -> bool:
        """Active, and (for suppress_topic) specific enough; stored bad topics are ignored."""
        if self.status is not DirectiveStatus.ACTIVE:
            return False
        return self.kind is DirectiveKind.INSTRUCTION or is_topic_specific(self.topic or "")
