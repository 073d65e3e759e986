"""Canonical content, provenance keys and tombstone identities (R-DOM-3, R-FORGET-1).

Expected hashes are recomputed here from the byte layouts documented in reference §3.6, with
hashlib and an independent FNV-1a, never by calling the code under test.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_core.domain.claims import ClaimKind
from memory_core.domain.provenance import (
    TombstoneKind,
    canonical_content,
    legacy_provenance_key,
    provenance_key,
    query_hash,
    tombstone_identities,
    working_provenance_key,
)
from memory_core.domain.scope import Scope

HEX64 = re.compile(r"^[0-9a-f]{64}$")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fnv1a_js(text: str) -> str:
    """FNV-1a 32 over UTF-16 code units, printed like JavaScript `(h >>> 0).toString(16)`."""
    units: list[int] = []
    for char in text:
        code = ord(char)
        if code > 0xFFFF:
            code -= 0x10000
            units += [0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF)]
        else:
            units.append(code)
    value = 2166136261
    for unit in units:
        value = ((value ^ unit) * 16777619) % 2**32
    return format(value, "x")


# --- canonical content -------------------------------------------------------------------


def test_canonical_content_trims_collapses_whitespace_and_keeps_case() -> None:
    """R-DOM-3: trim, collapse any whitespace run to one space, NFC; case is preserved."""
    assert canonical_content("  Likes \t\n  Redis  ") == "Likes Redis"
    assert canonical_content("ALL CAPS stays") == "ALL CAPS stays"
    assert canonical_content("a\u3000\u00a0b") == "a b"


def test_canonical_content_composes_to_nfc() -> None:
    """R-DOM-3: decomposed and precomposed forms canonicalise to the same NFC text."""
    decomposed = "Cafe\u0301"
    assert canonical_content(decomposed) == "Caf\u00e9"
    assert canonical_content(decomposed) == canonical_content("Caf\u00e9")


def test_canonical_content_uses_javascript_whitespace() -> None:
    """R-DOM-3: keys must match DeepChat's bytes: U+FEFF is whitespace there, while the
    information separators U+001C..U+001F and NEL U+0085 are not."""
    assert canonical_content("\ufeffa\ufeff\ufeffb\ufeff") == "a b"
    assert canonical_content("a\x1cb\x85c") == "a\x1cb\x85c"
    assert canonical_content("\x1fa") == "\x1fa"


@given(st.text())
def test_canonical_content_is_idempotent(text: str) -> None:
    """R-DOM-3: canonicalising twice changes nothing."""
    once = canonical_content(text)
    assert canonical_content(once) == once


# --- v2 / v3 keys --------------------------------------------------------------------------


def test_agent_scope_key_is_v2_sha256_of_agent_nul_kind_nul_content() -> None:
    """R-DOM-3: Agent scope keeps the v2 identity, scope left out of the hash."""
    key = provenance_key("agent-1", ClaimKind.SEMANTIC, Scope.agent(), "  Likes   Redis ")
    expected = sha256_hex(b"agent-1\x00semantic\x00Likes Redis")
    assert key == f"v2:semantic:{expected}"


def test_v2_key_hashes_non_ascii_content_as_utf8() -> None:
    """R-DOM-3: content is hashed as UTF-8 bytes after NFC."""
    key = provenance_key("a", "episodic", Scope.agent(), "喜欢 Cafe\u0301")
    expected = sha256_hex("a\0episodic\0喜欢 Caf\u00e9".encode())
    assert key == f"v2:episodic:{expected}"


def test_narrow_scope_key_is_v3_sha256_of_compact_json_array() -> None:
    """R-DOM-3: narrow scopes hash `["agent","kind","scopeType","scopeId","content"]`."""
    key = provenance_key("a", ClaimKind.SEMANTIC, Scope.session("s1"), "x")
    framed = b'["a","semantic","session","s1","x"]'
    assert key == f"v3:semantic:{sha256_hex(framed)}"


def test_v3_framing_leaves_non_ascii_unescaped_and_escapes_quotes() -> None:
    """R-DOM-3: framing is JSON.stringify's — no spaces, non-ASCII raw, quotes escaped."""
    key = provenance_key("a", "semantic", Scope.project("项目"), 'say "猫"')
    framed = '["a","semantic","project","项目","say \\"猫\\""]'.encode()
    assert key == f"v3:semantic:{sha256_hex(framed)}"


@pytest.mark.parametrize(
    "scope", [Scope.agent(), Scope.user("u1"), Scope.project("p1"), Scope.session("s1")]
)
def test_whitespace_and_normalisation_variants_give_the_same_key(scope: Scope) -> None:
    """R-DOM-3: trivially different spellings of one fact share one provenance key."""
    keys = {
        provenance_key("a", "semantic", scope, variant)
        for variant in ("Café au lait", "  Café   au\tlait\n", "Cafe\u0301 au lait")
    }
    assert len(keys) == 1


def test_case_changes_the_key() -> None:
    """R-DOM-3: v2 normalisation preserves case, so case variants are different facts."""
    assert provenance_key("a", "semantic", Scope.agent(), "Redis") != provenance_key(
        "a", "semantic", Scope.agent(), "redis"
    )


def test_different_scopes_agents_and_kinds_give_different_keys() -> None:
    """R-DOM-3, R-SCOPE-3: the same content in another scope, owner or kind is independent."""
    keys = {
        provenance_key("a", "semantic", Scope.agent(), "x"),
        provenance_key("a", "semantic", Scope.session("s1"), "x"),
        provenance_key("a", "semantic", Scope.session("s2"), "x"),
        provenance_key("a", "semantic", Scope.user("s1"), "x"),
        provenance_key("a", "semantic", Scope.project("s1"), "x"),
        provenance_key("b", "semantic", Scope.agent(), "x"),
        provenance_key("a", "episodic", Scope.agent(), "x"),
    }
    assert len(keys) == 7


def test_v3_framing_avoids_separator_ambiguity() -> None:
    """R-DOM-3: moving a character between scope id and content changes the key."""
    assert provenance_key("a", "semantic", Scope.session("s1"), "x y") != provenance_key(
        "a", "semantic", Scope.session("s1 x"), "y"
    )


def test_working_key_is_the_v2_key_of_the_fixed_seed() -> None:
    """R-DOM-3: one working row per agent, keyed by `session-working-blob`."""
    expected = sha256_hex(b"agent-1\x00working\x00session-working-blob")
    assert working_provenance_key("agent-1") == f"v2:working:{expected}"


def test_query_hash_is_the_v2_key_of_kind_query_over_the_trimmed_query() -> None:
    """R-DOM-3: manifests record a content-free identity of the query."""
    expected = sha256_hex(b"a\x00query\x00where do I live")
    assert query_hash("a", "  where do I live \n") == f"v2:query:{expected}"


# --- legacy v1 key -------------------------------------------------------------------------


def test_legacy_key_is_fnv1a_over_utf16_of_lowercased_content() -> None:
    """R-DOM-3: legacy keys (read/migration only) are `kind:` + FNV-1a hex of
    `agent:kind:<lowercase, trimmed, collapsed content>`."""
    key = legacy_provenance_key("agent-1", "semantic", "  Likes   REDIS ")
    assert key == "semantic:" + fnv1a_js("agent-1:semantic:likes redis")


def test_legacy_key_counts_astral_characters_as_two_utf16_units() -> None:
    """R-DOM-3: JavaScript's charCodeAt sees surrogate pairs; so must we."""
    key = legacy_provenance_key("a", "semantic", "emoji 😀 and 𠀀")
    assert key == "semantic:" + fnv1a_js("a:semantic:emoji 😀 and 𠀀")


def test_legacy_key_hex_is_not_zero_padded() -> None:
    """R-DOM-3: stored legacy keys come from `(h >>> 0).toString(16)`, so a hash with a
    leading zero nibble has fewer than eight digits."""
    content = next(
        f"fact {index}" for index in range(10_000) if len(fnv1a_js(f"a:semantic:fact {index}")) < 8
    )
    digest = fnv1a_js(f"a:semantic:{content}")
    assert legacy_provenance_key("a", "semantic", content) == f"semantic:{digest}"
    assert len(digest) < 8


def test_legacy_key_ignores_case_where_v2_does_not() -> None:
    """R-DOM-3: the old key folded case; the current one does not."""
    assert legacy_provenance_key("a", "semantic", "Redis") == legacy_provenance_key(
        "a", "semantic", "REDIS"
    )


# --- tombstone identities ----------------------------------------------------------------


def test_tombstone_identities_of_an_agent_scope_claim() -> None:
    """R-FORGET-1: provenance identity over the stored key, content identity in the
    pre-scope layout; both are SHA-256 hex of compact JSON arrays (the third, folded one is
    ours, tested in tests/reliability/test_forget_tombstone_folding.py)."""
    key = provenance_key("a", "semantic", Scope.agent(), "Likes  Redis")
    identities = tombstone_identities("a", Scope.agent(), " Likes  Redis ", key)
    assert [identity.kind for identity in identities] == [
        TombstoneKind.PROVENANCE,
        TombstoneKind.CONTENT,
        TombstoneKind.CONTENT,
    ]
    provenance_text = f'["deepchat.agent-memory.tombstone.v1","provenance","a","{key}"]'
    content_text = '["deepchat.agent-memory.tombstone.v1","content","a","Likes Redis"]'
    assert identities[0].hash == sha256_hex(provenance_text.encode())
    assert identities[1].hash == sha256_hex(content_text.encode())


def test_tombstone_content_identity_of_a_narrow_scope_claim() -> None:
    """R-FORGET-1: narrow scopes use the v2 content domain with scope type and id."""
    identities = tombstone_identities("a", Scope.session("s1"), "猫 は かわいい", None)
    assert len(identities) == 2  # and the folded identity
    text = '["deepchat.agent-memory.tombstone.content.v2","a","session","s1","猫 は かわいい"]'
    assert identities[0].kind is TombstoneKind.CONTENT
    assert identities[0].hash == sha256_hex(text.encode())


def test_tombstone_without_stored_key_has_only_the_content_identity() -> None:
    """R-FORGET-1: the provenance identity exists only when the row had a key."""
    identities = tombstone_identities("a", Scope.agent(), "x", None)
    assert [identity.kind for identity in identities] == [TombstoneKind.CONTENT] * 2


def test_content_identity_ignores_the_kind() -> None:
    """R-FORGET-1: a forgotten semantic claim also blocks an identical episodic replay."""
    semantic = tombstone_identities(
        "a", Scope.agent(), "x", provenance_key("a", "semantic", Scope.agent(), "x")
    )
    episodic = tombstone_identities(
        "a", Scope.agent(), "x", provenance_key("a", "episodic", Scope.agent(), "x")
    )
    assert semantic[1] == episodic[1]
    assert semantic[0] != episodic[0]


def test_content_identity_differs_by_scope_and_owner() -> None:
    """R-FORGET-1, R-PRIV-2: tombstones never suppress across scopes or agents."""
    hashes = {
        tombstone_identities("a", Scope.agent(), "x", None)[0].hash,
        tombstone_identities("a", Scope.session("s1"), "x", None)[0].hash,
        tombstone_identities("a", Scope.session("s2"), "x", None)[0].hash,
        tombstone_identities("a", Scope.user("s1"), "x", None)[0].hash,
        tombstone_identities("b", Scope.agent(), "x", None)[0].hash,
    }
    assert len(hashes) == 5


def test_tombstones_hold_no_plaintext() -> None:
    """R-FORGET-1: identities are 64-hex digests and never contain the content."""
    content = "my secret diary entry"
    for identity in tombstone_identities(
        "a", Scope.project("p1"), content, provenance_key("a", "semantic", Scope.agent(), content)
    ):
        assert HEX64.match(identity.hash)
        assert content not in repr(identity)


@given(st.text(min_size=1))
def test_whitespace_variants_share_tombstone_identities(text: str) -> None:
    """R-FORGET-1: exact replay with different spacing or normal form is still suppressed."""
    variant = "  " + unicodedata.normalize("NFD", text).replace(" ", "\t ") + "\n"
    assert tombstone_identities("a", Scope.agent(), text, None) == tombstone_identities(
        "a", Scope.agent(), variant, None
    )
