"""The write-path helpers made cheaper for issue 15 decide exactly what their former versions
(tests/core/former_write_path.py) decided: the secret policy's findings, whose detectors now
run only over text that holds their hints (R-PRIV-1), and the folded content and JSON framing
behind tombstone identities (R-FORGET-1, R-DOM-3), over planted and generated inputs."""

from __future__ import annotations

import json
import re

import pytest
from former_write_path import former_find, former_folded_content, former_json_array
from hypothesis import given, settings
from hypothesis import strategies as st
from test_secrets import NEGATIVES, POSITIVES

from memory_core.domain.folding import fold
from memory_core.domain.provenance import _json_array, folded_content
from memory_core.domain.secret_patterns import DEFAULT_DETECTORS, RegexDetector
from memory_core.domain.secrets import PatternSecretPolicy

POLICY = PatternSecretPolicy()
EXTRA = PatternSecretPolicy(
    extra_detectors=[RegexDetector(name="ticket", pattern=re.compile(r"(?i:t)-\d{4}"))]
)

# Format-valid, obviously fake examples of the detectors test_secrets.POSITIVES leaves out.
MORE_POSITIVES = [
    "hf_FAKEfakeFAKEfake0123456789abcdefgh",
    "glpat-FAKEfakeFAKE0123456789",
    "npm_FAKEfakeFAKEfake0123456789abcdefghij",
    "pypi-AgEIcHlwaS5vcmcFAKE" + "x" * 40,
    "SG." + "F" * 22 + "." + "k" * 43,
    "SK" + "0123456789abcdef" * 2,
    "AccountKey=" + "FAKEfake0123456789+/" * 3,
    "SharedAccessKey=" + "FAKEfake0123456789+/" * 3 + "==",
    "bot 123456789:A" + "FAKEfake0_-" * 3 + "F",
    "https://discord.com/api/webhooks/123456789/" + "FAKEfake01" * 7,
    "xoxp-FAKE0123456789-fake",
    "sk_test_FAKE0123456789abcdefgh",
    "ghs_FAKE0123456789abcdefghijABCDEFGHIJ",
    "ghu_FAKE0123456789abcdefghijABCDEFGHIJ",
    "ghr_FAKE0123456789abcdefghijABCDEFGHIJ",
    "glcbt-FAKEfakeFAKE0123456789",
    "x-api-key: f4k3v4lu3",
    "refresh_token=FAKEtoken42",
    "https://h.test/?x-amz-credential=FAKEcred42",
    "https://h.test/?sig=FAKEsig42",
    "PIN: 4821",
    "my pin code is 123456",
    "passphrase was hunter22!",
    "AWS_SECRET_ACCESS_KEY: FAKEfakeFAKE/fake+FAKE0123456789abcdefgh",
    "authorization = Basic ZmFrZTpmYWtlZmFrZQ==",
    "AUTHORIZATION: BEARER fakefakefakefakefake",
    "ftp://ann:pa55w0rdFAKE@files.test",
]
PLANTED = [text for _, text, _ in POSITIVES] + MORE_POSITIVES


def _variants(text: str) -> list[str]:
    """The text, re-cased, inside non-ASCII prose, split by format characters and in
    fullwidth: each a text some detector may match differently, or not at all."""
    fullwidth = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)
    return [
        text,
        text.upper(),
        text.lower(),
        text.swapcase(),
        f"注意：{text}。",
        f"Grüße — {text} — ok",
        "\u200b".join(text),
        text.replace("s", "\u017f").replace("k", "\u212a"),  # long s, Kelvin sign
        fullwidth,
        f"\x00{text}\x00",
    ]


CASES = [variant for text in PLANTED for variant in _variants(text)] + NEGATIVES
VARIED = [
    "",
    " ",
    "\x00",
    "a\x00b",
    "\ud800 lone surrogate \udfff",
    "我住在东京，密码是 hunter22",
    "ｐａｓｓｗｏｒｄ ｉｓ ｈｕｎｔｅｒ２２",
    "pa\u00adss\u200dword is Tr0ub4dor&3",
    "p\u0130n is 4821",
    "٤١١١ ١١١١ ١١١١ ١١١١",
    "4111\u00a01111\u20091111\u202f1111",
    "The user enjoys kayaking with their brother Tom 0 on weekends.",
    "The user's sister Ana 1 plays the cello in Lyon.",
]


def _matching(text: str) -> list[int]:
    """Positions of the default detectors that match `text` (as the policy scans it)."""
    scanned = fold(text).text
    return [
        order
        for order, detector in enumerate(DEFAULT_DETECTORS)
        if any(e > s for s, e in detector.spans(scanned))
    ]


def test_the_planted_examples_exercise_every_detector() -> None:
    """Without this the prefilter test below could pass by planting nothing."""
    matched = {order for text in PLANTED for order in _matching(text)}
    assert matched == set(range(len(DEFAULT_DETECTORS)))


@pytest.mark.parametrize("text", CASES + VARIED)
def test_the_prefilter_admits_every_detector_that_matches(text: str) -> None:
    """R-PRIV-1: the prefilter is conservative — a detector it skips matches nothing."""
    admitted = set(POLICY._prefilter.admitted(fold(text).text))
    assert set(_matching(text)) <= admitted


@pytest.mark.parametrize("policy", [POLICY, EXTRA], ids=["default", "extra"])
@pytest.mark.parametrize("text", CASES + VARIED)
def test_findings_are_the_former_ones(policy: PatternSecretPolicy, text: str) -> None:
    """R-PRIV-1: the same findings (kinds and offsets), secret or not."""
    assert list(policy.find(text)) == list(former_find(policy, text))


# Fragments a detector keys on, to build texts near every hint's edge.
_FRAGMENTS = st.sampled_from(
    [
        "sk-", "ant-", "SK", "gh", "p_", "github_pat_", "xox", "b-", "AIza", "AKIA", "ASIA",
        "aws_", "Secret", "_access_", "KEY", "key", "=", ":", " ", "\t", "\n", "sk_", "live_",
        "hf_", "gl", "pat-", "npm_", "pypi-AgE", "SG.", "Account", "Key=", ":A", "/",
        "discord.com", "/api/webhooks/", "-----BEGIN ", "PRIVATE KEY-----", "eyJ", ".",
        "Authorization", "Bearer ", "basic ", "://", "@", "?", "&", "token", "pass", "word",
        "PIN", " is ", "was", "\u200b", "\u212a", "\u017f", "ｓ", "é", "中",
        "0123456789abcdefFAKE", "4111", "1111", "4821", "0" * 13, "x" * 40,
    ]
)  # fmt: skip
_BUILT = st.lists(_FRAGMENTS | st.text(max_size=4), max_size=14).map("".join)


@settings(max_examples=400, deadline=None)
@given(text=_BUILT)
def test_generated_texts_find_what_they_found_before(text: str) -> None:
    """R-PRIV-1: over texts assembled from the hints' own strings, nothing is skipped."""
    assert set(_matching(text)) <= set(POLICY._prefilter.admitted(fold(text).text))
    assert list(POLICY.find(text)) == list(former_find(POLICY, text))


_ANY_TEXT = st.text(st.characters(codec=None), max_size=60) | st.text(
    st.characters(max_codepoint=127), max_size=60
)


@pytest.mark.parametrize("text", [chr(code) for code in range(128)] + VARIED + CASES[:60])
def test_folded_content_is_the_former_one(text: str) -> None:
    """R-FORGET-1: the folded identity's text, ASCII or not."""
    assert folded_content(text) == former_folded_content(text)


@settings(max_examples=400, deadline=None)
@given(text=_ANY_TEXT)
def test_folded_content_of_generated_text_is_the_former_one(text: str) -> None:
    assert folded_content(text) == former_folded_content(text)


@settings(max_examples=300, deadline=None)
@given(items=st.lists(_ANY_TEXT | st.sampled_from(['"', "\\", "\x00", "\u2028", "\ud800"])))
def test_the_json_framing_is_the_former_one(items: list[str]) -> None:
    """R-DOM-3: keys and tombstones hash the same JSON text as before (and as JavaScript)."""
    assert _json_array(items) == former_json_array(items)
    assert json.loads(_json_array(items)) == items
