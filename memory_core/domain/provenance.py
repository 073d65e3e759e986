"""Canonical content, provenance keys and tombstone identities (R-DOM-3, R-FORGET-1).

Byte layouts follow the reference's §3.6 exactly so that keys computed here match keys
already stored by DeepChat: NUL-separated UTF-8 for v2 keys, compact JSON array text
(`JSON.stringify` framing) for v3 keys and tombstones.

A third tombstone identity is ours, not DeepChat's (issue 11): the owner-wide identity of the
*folded* content — NFKC, casefold, format characters dropped, punctuation and whitespace runs
to one space. Exact identities let the model re-save a forgotten fact with a change of case,
a full stop or a zero-width space (all render alike), or at another scope (a forgotten
session fact re-saved at agent scope, visible everywhere). It has its own hash domain, so the
existing identities keep DeepChat's layout and DeepChat never matches the new one.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from enum import StrEnum
from json.encoder import encode_basestring as _json_string

import attrs

from memory_core.domain.claims import ClaimKind
from memory_core.domain.scope import Scope

__all__ = [
    "TombstoneIdentity",
    "TombstoneKind",
    "canonical_content",
    "folded_content",
    "legacy_provenance_key",
    "provenance_key",
    "query_hash",
    "tombstone_identities",
    "working_provenance_key",
]

# JavaScript's `trim()` and `\s` (WhiteSpace + LineTerminator), which DeepChat's keys were
# hashed with. Python's `\s`/`strip()` differ: they also take U+001C..U+001F and U+0085, and
# miss U+FEFF, so content holding those would hash differently from stored keys.
_JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680"
    + "".join(map(chr, range(0x2000, 0x200B)))
    + "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_WHITESPACE_RUN = re.compile(f"[{re.escape(_JS_WHITESPACE)}]+")
_TOMBSTONE_DOMAIN = "deepchat.agent-memory.tombstone.v1"
_SCOPED_CONTENT_DOMAIN = "deepchat.agent-memory.tombstone.content.v2"
_FOLDED_CONTENT_DOMAIN = "agent-memory.tombstone.content.folded.v1"
_WORKING_SEED = "session-working-blob"


def canonical_content(text: str) -> str:
    """Trim, collapse whitespace runs to one space, NFC. Case is preserved."""
    return unicodedata.normalize("NFC", _WHITESPACE_RUN.sub(" ", text.strip(_JS_WHITESPACE)))


def _reading_of(char: str) -> str:
    """What one character of NFKC-casefolded text keeps of its reading: nothing for a format
    character, a space for punctuation and whitespace, else the character itself."""
    category = unicodedata.category(char)
    if category == "Cf":
        return ""
    return " " if category[0] in "PZ" or char.isspace() else char


# NFKC leaves every ASCII character as it is and casefold lower-cases it, so ASCII text (most
# content) folds by one table (issue 15: this ran per character of every claim written).
_ASCII_READING = str.maketrans({chr(code): _reading_of(chr(code)) for code in range(128)})


def folded_content(text: str) -> str:
    """The form two texts that read the same share: NFKC, casefold, format characters
    dropped, punctuation and whitespace runs to one space, trimmed."""
    if text.isascii():
        return " ".join(text.lower().translate(_ASCII_READING).split())
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join("".join(map(_reading_of, folded)).split())


def _json_array(items: list[str]) -> str:
    # Same text as JavaScript's JSON.stringify for an array of strings: that of
    # `json.dumps(items, separators=(",", ":"), ensure_ascii=False)`, without building an
    # encoder per call.
    return "[" + ",".join(map(_json_string, items)) + "]"


def _sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def provenance_key(agent_id: str, kind: ClaimKind | str, scope: Scope, content: str) -> str:
    """The scoped provenance key of a claim.

    Agent scope keeps the v2 identity (scope left out) so existing keys stay stable;
    narrow scopes use v3, whose JSON framing avoids NUL ambiguity.
    """
    kind_value = str(kind)
    normalised = canonical_content(content)
    if scope.is_agent:
        digest = _sha256_hex(f"{agent_id}\0{kind_value}\0{normalised}")
        return f"v2:{kind_value}:{digest}"
    assert scope.scope_id is not None
    digest = _sha256_hex(
        _json_array([agent_id, kind_value, scope.kind.value, scope.scope_id, normalised])
    )
    return f"v3:{kind_value}:{digest}"


def legacy_provenance_key(agent_id: str, kind: ClaimKind | str, content: str) -> str:
    """The v1 key (32-bit FNV-1a). Accepted only at read and migration boundaries."""
    kind_value = str(kind)
    lowered = _WHITESPACE_RUN.sub(" ", content.strip(_JS_WHITESPACE).lower())
    value = 0x811C9DC5
    # FNV-1a over UTF-16 code units, as JavaScript's charCodeAt sees the string.
    text = f"{agent_id}:{kind_value}:{lowered}"
    units = text.encode("utf-16-le")
    for index in range(0, len(units), 2):
        value ^= units[index] | (units[index + 1] << 8)
        value = (value * 0x01000193) & 0xFFFFFFFF
    # JavaScript's `(hash >>> 0).toString(16)`: no zero padding.
    return f"{kind_value}:{value:x}"


def working_provenance_key(agent_id: str) -> str:
    """The one working-projection row per agent is keyed by a fixed seed."""
    return provenance_key(agent_id, "working", Scope.agent(), _WORKING_SEED)


def query_hash(agent_id: str, query: str) -> str:
    """A content-free identity of a recall query, recorded in manifests."""
    return provenance_key(agent_id, "query", Scope.agent(), query.strip())


class TombstoneKind(StrEnum):
    PROVENANCE = "provenance"
    CONTENT = "content"


@attrs.frozen(kw_only=True)
class TombstoneIdentity:
    """One hash-only suppression identity. Holds no plaintext. A `folded` identity is stored
    as a `content` one (its own hash domain keeps them apart), so no store needs a new kind."""

    kind: TombstoneKind
    hash: str
    folded: bool = False


def tombstone_identities(
    agent_id: str, scope: Scope, content: str, stored_provenance_key: str | None
) -> tuple[TombstoneIdentity, ...]:
    """The identities that suppress a replay of a forgotten claim.

    The content identity leaves the kind out, so a forgotten semantic claim also blocks an
    identical episodic replay; Agent scope keeps the pre-scope layout for compatibility. The
    folded identity leaves the scope out too: it suppresses a replay that only reads the same,
    at any scope of the owner. Both are stored as `content` identities.
    """
    identities: list[TombstoneIdentity] = []
    if stored_provenance_key is not None:
        identities.append(
            TombstoneIdentity(
                kind=TombstoneKind.PROVENANCE,
                hash=_sha256_hex(
                    _json_array([_TOMBSTONE_DOMAIN, "provenance", agent_id, stored_provenance_key])
                ),
            )
        )
    normalised = canonical_content(content)
    if scope.is_agent:
        content_text = _json_array([_TOMBSTONE_DOMAIN, "content", agent_id, normalised])
    else:
        assert scope.scope_id is not None
        content_text = _json_array(
            [_SCOPED_CONTENT_DOMAIN, agent_id, scope.kind.value, scope.scope_id, normalised]
        )
    identities.append(TombstoneIdentity(kind=TombstoneKind.CONTENT, hash=_sha256_hex(content_text)))
    folded = folded_content(content)
    if folded:  # text of punctuation only has no reading to suppress
        folded_text = _json_array([_FOLDED_CONTENT_DOMAIN, agent_id, folded])
        identities.append(
            TombstoneIdentity(
                kind=TombstoneKind.CONTENT, hash=_sha256_hex(folded_text), folded=True
            )
        )
    return tuple(identities)
