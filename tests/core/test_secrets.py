"""The secret policy: what it flags, what it leaves alone, and how writes and logs use it."""

from __future__ import annotations

import itertools
import re
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core.domain.errors import SecretRejected, ValidationError
from memory_core.domain.secret_patterns import RegexDetector, luhn_valid
from memory_core.domain.secrets import PatternSecretPolicy, WriteMode, redact_for_log
from memory_core.ports.secrets import SecretPolicy

POLICY = PatternSecretPolicy()
REDACTING = PatternSecretPolicy(mode=WriteMode.REDACT)


def luhn_complete(partial: str) -> str:
    """`partial` plus the check digit that makes it pass Luhn."""
    for check in "0123456789":
        if luhn_valid(partial + check):
            return partial + check
    raise AssertionError("unreachable: one check digit always fits")


def luhn_break(number: str) -> str:
    """`number` with its last digit changed so the Luhn check fails."""
    return number[:-1] + str((int(number[-1]) + 1) % 10)


VISA = luhn_complete("411111111111111")  # 4111 1111 1111 1111
AMEX = luhn_complete("37828224631000")
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkZha2UifQ"
    ".c2lnbmF0dXJlLW5vdC1yZWFsLWZha2UtZmFrZQ"
)
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\n"
    "KUpRKfFLfRYC9AIKjbJTWit+CqvjWYzvQwECAwEAAQ==\n"
    "-----END RSA PRIVATE KEY-----"
)

# (kind, text, secret): one format-valid, obviously fake example per detector.
POSITIVES = [
    ("openai_key", "key: sk-FAKE0123456789abcdefGHIJ0123", "sk-FAKE0123456789abcdefGHIJ0123"),
    (
        "openai_key",
        "use sk-proj-FAKE_0123456789-abcdefXYZ now",
        "sk-proj-FAKE_0123456789-abcdefXYZ",
    ),
    (
        "anthropic_key",
        "sk-ant-api03-FAKEfakeFAKE0123456789-xyz",
        "sk-ant-api03-FAKEfakeFAKE0123456789-xyz",
    ),
    (
        "github_token",
        "token ghp_FAKE0123456789abcdefghijABCDEFGHIJ01",
        "ghp_FAKE0123456789abcdefghijABCDEFGHIJ01",
    ),
    (
        "github_token",
        "gho_0123456789FAKEfakeFAKEfake0123456789",
        "gho_0123456789FAKEfakeFAKEfake0123456789",
    ),
    (
        "github_token",
        "github_pat_11FAKE0123456789_abcdefghijklmnop",
        "github_pat_11FAKE0123456789_abcdefghijklmnop",
    ),
    (
        "slack_token",
        "xoxb-000000000000-000000000000-FAKEfakeFAKE",
        "xoxb-000000000000-000000000000-FAKEfakeFAKE",
    ),
    (
        "google_api_key",
        "AIzaSyFAKE-fake_FAKE0123456789abcdefghi ok",
        "AIzaSyFAKE-fake_FAKE0123456789abcdefghi",
    ),
    ("aws_access_key_id", "id AKIAFAKEFAKE01234567 here", "AKIAFAKEFAKE01234567"),
    ("aws_access_key_id", "ASIAFAKEFAKE76543210", "ASIAFAKEFAKE76543210"),
    (
        "aws_secret_key",
        "aws_secret_access_key = FAKEfakeFAKE/fake+FAKE0123456789abcdefgh",
        "FAKEfakeFAKE/fake+FAKE0123456789abcdefgh",
    ),
    ("stripe_key", "sk_live_FAKE0123456789abcdefgh", "sk_live_FAKE0123456789abcdefgh"),
    ("stripe_key", "rk_live_FAKE0123456789abcdefgh", "rk_live_FAKE0123456789abcdefgh"),
    ("bearer_token", "Authorization: Bearer fakefakefakefakefake", "fakefakefakefakefake"),
    ("bearer_token", "send Bearer FAKE0123456789abcdef please", "FAKE0123456789abcdef"),
    ("basic_auth", "Authorization: Basic ZmFrZTpmYWtlZmFrZQ==", "ZmFrZTpmYWtlZmFrZQ=="),
    ("jwt", f"session {JWT} expired", JWT),
    ("private_key", f"here:\n{PEM}\nbye", PEM),
    (
        "private_key",
        "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
    ),
    ("secret_assignment", "DB_PASSWORD=hunter22", "hunter22"),
    ("secret_assignment", "client_secret: Zq8-fake-Val", "Zq8-fake-Val"),
    ("secret_assignment", '{"password": "correct horse battery"}', "correct horse battery"),
    ("secret_assignment", "Api-Key = 'f4k3v4lu3'", "f4k3v4lu3"),
    ("password_phrase", "fyi my password is Tr0ub4dor&3 ok", "Tr0ub4dor&3"),
    ("password_phrase", "The passcode was 'sw0rdfish'.", "sw0rdfish"),
    ("password_phrase", "my PIN is 4821.", "4821"),
    ("card_number", f"card {VISA} thanks", VISA),
    ("card_number", "pay with 4111 1111 1111 1111.", "4111 1111 1111 1111"),
    ("card_number", "amex 3782-822463-10005", "3782-822463-10005"),
    ("card_number", f"amex {AMEX}", AMEX),
    ("url_password", "postgres://bob:s3cr3tFAKE@db.local/app", "s3cr3tFAKE"),
    (
        "url_secret_param",
        "GET https://api.example.test/v1?q=x&access_token=FAKEtoken42&p=1",
        "FAKEtoken42",
    ),
    ("url_secret_param", "https://cdn.example.test/f.png?signature=ab12cd34ef", "ab12cd34ef"),
]

NEGATIVES = [
    "I prefer tea",
    "my password manager is 1Password",
    "token economy",
    "the word token alone",
    "token",
    "Token: the unit of text",
    "the password is incorrect",
    "Password: required",
    "password=abc",
    "Bearer of bad news",
    "Bearer abc123",
    "sk-learn-is-a-nice-library-for-ml",
    "sk-0123",
    "max_tokens: 1000 and token_count=12345",
    'password: "****"',
    "password=${DB_PASSWORD}",
    f"order number {luhn_break(VISA)}",
    f"order 4111 1111 1111 111{luhn_break(VISA)[-1]}",
    "0000 0000 0000 0000",
    "pi is 3.14159265358979323846",
    f"id {VISA}9999",  # a Luhn-valid card inside a longer digit run
    f"ids 1234 {VISA}",
    "revenue 4,111,111,111,111,111",
    "https://example.test:8080/path?q=1",
    "the pin is 4 inches long",
    "password:\n  rotation: monthly",
]


@pytest.mark.parametrize(("kind", "text", "secret"), POSITIVES)
def test_each_detector_flags_its_secret(kind: str, text: str, secret: str) -> None:
    """R-PRIV-1: API keys, tokens, passwords, card numbers and private keys are detected."""
    findings = POLICY.find(text)
    assert [f.kind for f in findings] == [kind]
    assert secret in text[findings[0].start : findings[0].end]
    assert secret not in POLICY.redact(text)


@pytest.mark.parametrize("text", NEGATIVES)
def test_ordinary_text_is_not_flagged(text: str) -> None:
    """R-PRIV-1: the policy stays quiet on prose, short values and non-card numbers."""
    assert list(POLICY.find(text)) == []
    assert POLICY.check_write(text) == text


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("password=hunter22", "hunter22"),
        ('{"api_key": "f4k3-v4lu3"}', "f4k3-v4lu3"),
        ("my password is hunter22.", "hunter22"),
        ("https://u:pa55word@host.test", "pa55word"),
    ],
)
def test_context_detectors_cover_only_the_value(text: str, value: str) -> None:
    """R-PRIV-1: key=value, phrases and URL credentials redact the value, not the context."""
    (finding,) = POLICY.find(text)
    assert text[finding.start : finding.end] == value


def test_redact_replaces_each_finding_with_its_kind() -> None:
    """R-PRIV-1: redaction names the detector and keeps the surrounding text."""
    text = f"pw: password=hunter22 and card {VISA}."
    assert POLICY.redact(text) == (
        "pw: password=[REDACTED:secret_assignment] and card [REDACTED:card_number]."
    )


def test_findings_are_ordered_and_disjoint_across_several_secrets() -> None:
    """R-PRIV-1: findings come back ordered by start and never overlap."""
    text = f"{JWT} then AKIAFAKEFAKE01234567 then token=abcd1234 then {VISA}"
    findings = POLICY.find(text)
    assert [f.kind for f in findings] == [
        "jwt",
        "aws_access_key_id",
        "secret_assignment",
        "card_number",
    ]
    assert all(a.end <= b.start for a, b in itertools.pairwise(findings))


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (f"Authorization: Bearer {JWT}", "jwt"),
        ("api_key=sk-proj-FAKE_0123456789-abcdefXYZ", "openai_key"),
        ("https://h.test/?key=AIzaSyFAKE-fake_FAKE0123456789abcdefghi", "google_api_key"),
        ("password: sk-ant-api03-FAKEfakeFAKE0123456789", "anthropic_key"),
    ],
)
def test_overlapping_detectors_yield_one_finding_named_by_the_most_specific(
    text: str, kind: str
) -> None:
    """R-PRIV-1: where detectors overlap on one span, one finding of the specific kind."""
    assert [f.kind for f in POLICY.find(text)] == [kind]


def test_overlap_of_unequal_spans_covers_the_union_under_the_longest() -> None:
    """R-PRIV-1: a longer match wins the kind and the finding covers every flagged character."""
    text = f'"token": "Bearer {JWT}"'
    (finding,) = POLICY.find(text)
    assert finding.kind == "secret_assignment"
    assert text[finding.start : finding.end] == f"Bearer {JWT}"


def test_a_value_that_swallows_the_next_key_does_not_hide_that_credential() -> None:
    """R-PRIV-1: 'password: "client_secret": "x"' still redacts the client secret."""
    text = 'PASSWORD: "client_secret": "Zq8fake9"'
    assert "Zq8fake9" not in POLICY.redact(text)


def test_redaction_markers_inside_urls_are_not_read_as_credentials() -> None:
    """R-PRIV-1: '[REDACTED:kind]' in a URL's user part is not a new url_password finding."""
    redacted = POLICY.redact("A0://-----BEGIN PRIVATE KEY-----@host")
    assert list(POLICY.find(redacted)) == []


@pytest.mark.parametrize(
    "text",
    [
        "password=" * 12_000,
        "-----BEGIN PRIVATE KEY-----" * 4_000,
        'token: "' * 12_000,
        "a_" * 50_000 + "password=x",
    ],
)
def test_pathological_input_is_scanned_without_leaking_or_failing(text: str) -> None:
    """R-PRIV-1: the policy sits on every write path, so crafted input must be handled whole.

    These inputs took seconds when a pattern backtracked quadratically; a regression shows as
    a slow suite, not as a timing assertion here."""
    findings = POLICY.find(text)
    assert all(a.end <= b.start for a, b in itertools.pairwise(findings))
    assert len(redact_for_log(text)) <= 500


def test_reject_mode_raises_naming_field_and_kinds_but_not_the_secret() -> None:
    """R-PRIV-1: a secret-bearing write is refused; the error never repeats the secret."""
    text = f"token=abcd1234 card {VISA} key sk-FAKE0123456789abcdefGHIJ0123 pw=zz99zz"
    with pytest.raises(SecretRejected) as caught:
        POLICY.check_write(text, field="claim.content")
    error = caught.value
    assert error.field == "claim.content"
    assert error.kinds == ("card_number", "openai_key", "secret_assignment")
    for secret in ("abcd1234", VISA, "sk-FAKE0123456789abcdefGHIJ0123", "zz99zz"):
        assert secret not in str(error)


def test_redact_mode_returns_the_redacted_text() -> None:
    """R-PRIV-1: in redact mode the write goes through with secrets replaced."""
    stored = REDACTING.check_write("my password is hunter22", field="content")
    assert stored == "my password is [REDACTED:password_phrase]"


@pytest.mark.parametrize("policy", [POLICY, REDACTING])
def test_clean_text_is_written_unchanged_in_either_mode(policy: PatternSecretPolicy) -> None:
    """R-PRIV-1: the policy never alters content without a finding."""
    assert policy.check_write("I prefer green tea in the morning") == (
        "I prefer green tea in the morning"
    )


def test_mode_accepts_its_string_value_and_rejects_unknown_modes() -> None:
    """Configuration passes the mode as a string; an unknown one is a ValidationError."""
    assert PatternSecretPolicy(mode="redact").mode is WriteMode.REDACT  # type: ignore[arg-type]
    with pytest.raises(ValidationError) as caught:
        PatternSecretPolicy(mode="ignore")  # type: ignore[arg-type]
    assert caught.value.field == "mode"


def test_extra_detectors_join_the_built_in_table() -> None:
    """R-PRIV-1: deployments can add detectors; they take part in the one shared policy."""
    badge = RegexDetector(name="badge_id", pattern=re.compile(r"BADGE-\d{6}"))
    policy = PatternSecretPolicy(extra_detectors=[badge])
    assert [f.kind for f in policy.find("swipe BADGE-123456 and password=hunter22")] == [
        "badge_id",
        "secret_assignment",
    ]
    assert list(POLICY.find("swipe BADGE-123456")) == []


def test_policy_satisfies_the_port() -> None:
    """The pattern policy is a SecretPolicy as the composition root expects."""
    assert isinstance(POLICY, SecretPolicy)


def test_redacted_text_is_clean_on_a_second_pass() -> None:
    """R-PRIV-1: redaction markers are not themselves read as secrets (stable re-checks)."""
    text = " ".join(t for _, t, _ in POSITIVES)
    redacted = POLICY.redact(text)
    assert list(POLICY.find(redacted)) == []
    assert POLICY.check_write(redacted) == redacted


# --- property tests ---------------------------------------------------------------------------

_ALNUM = string.ascii_letters + string.digits
_key_body = st.text(_ALNUM, min_size=36, max_size=48).map(lambda s: s + "7a")
_card_digits = st.text(string.digits, min_size=15, max_size=15).map(luhn_complete)


def _grouped(digits: str, separator: str) -> str:
    return separator.join(digits[i : i + 4] for i in range(0, len(digits), 4))


_password = st.text(_ALNUM + "!#%*+/@^~", min_size=3, max_size=20).map(lambda s: "Q" + s + "9")

SECRETS = st.one_of(
    _key_body.map(lambda b: (f"sk-proj-{b}", f"sk-proj-{b}")),
    _key_body.map(lambda b: (f"sk-ant-api03-{b}", f"sk-ant-api03-{b}")),
    _key_body.map(lambda b: (f"ghp_{b[:36]}", f"ghp_{b[:36]}")),
    _key_body.map(lambda b: (f"Authorization: Bearer {b}", b)),
    st.tuples(_card_digits.filter(lambda d: len(set(d)) > 1), st.sampled_from(["", " ", "-"])).map(
        lambda t: (_grouped(t[0], t[1]), _grouped(t[0], t[1]))
    ),
    _password.map(lambda p: (f"password={p}", p)),
    _password.map(lambda p: (f'"client_secret": "{p}"', p)),
    _password.map(lambda p: (f"my password is {p}", p)),
    st.just((PEM, "MIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu")),
    st.just((JWT, JWT)),
)
FILLER = st.text(st.characters(blacklist_categories=("Cs",)), max_size=80)


@settings(max_examples=300, deadline=None)
@given(before=FILLER, secret=SECRETS, after=FILLER)
def test_redaction_never_leaks_an_embedded_secret(
    before: str, secret: tuple[str, str], after: str
) -> None:
    """R-PRIV-1: whatever surrounds it, an embedded secret does not survive redaction, and
    findings are ordered and disjoint."""
    snippet, value = secret
    text = f"{before} \n {snippet} \n {after}"
    findings = POLICY.find(text)
    assert all(a.end <= b.start for a, b in itertools.pairwise(findings))
    redacted = POLICY.redact(text)
    assert value not in redacted


@settings(max_examples=200, deadline=None)
@given(text=FILLER)
def test_findings_on_arbitrary_text_are_ordered_and_disjoint(text: str) -> None:
    """R-PRIV-1: the non-overlap contract of the port holds on any input."""
    findings = POLICY.find(text)
    assert all(0 <= f.start < f.end <= len(text) for f in findings)
    assert all(a.end <= b.start for a, b in itertools.pairwise(findings))


# --- redact_for_log -----------------------------------------------------------------------------


def test_log_redaction_hides_the_key_in_a_provider_error() -> None:
    """R-PROV-5: an 'incorrect API key provided' message loses the key and the URL."""
    message = (
        "Error code: 401 - Incorrect API key provided: sk-abcd1234****wxyz. "
        "You can find your API key at https://platform.example.test/account/api-keys."
    )
    safe = redact_for_log(message)
    assert "sk-abcd1234" not in safe
    assert "wxyz" not in safe
    assert "platform.example.test" not in safe
    assert "[URL]" in safe
    assert safe.startswith("Error code: 401 - Incorrect API key provided: [REDACTED]")


def test_log_redaction_strips_bearer_tokens_of_any_length_and_urls() -> None:
    """R-PROV-5: headers echoed in errors keep no token; every http(s) URL becomes [URL]."""
    safe = redact_for_log("sent Authorization: Bearer abc123 to http://10.0.0.1:8000/v1/chat")
    assert safe == "sent Authorization: Bearer [REDACTED] to [URL]"


def test_log_redaction_applies_the_write_policy_too() -> None:
    """R-PRIV-1: logs get the same detectors as writes (card numbers, private keys...)."""
    safe = redact_for_log(f"payload had card {VISA} and\n{PEM}")
    assert VISA not in safe
    assert "MIIBOg" not in safe
    assert "[REDACTED:card_number]" in safe
    assert "[REDACTED:private_key]" in safe


def test_log_redaction_handles_access_token_words_and_query_params() -> None:
    """R-PROV-5: 'access token: X' and '?token=X' values are removed from messages."""
    safe = redact_for_log("bad access token: abc.def refresh_token=zzz (query ?token=qqq&x=1)")
    for value in ("abc.def", "zzz", "qqq"):
        assert value not in safe


def test_log_redaction_collapses_whitespace_and_caps_length() -> None:
    """R-PROV-5: messages are single-line and bounded."""
    assert redact_for_log("a \n\t  b\r\n c  ") == "a b c"
    capped = redact_for_log("word " * 500, limit=120)
    assert len(capped) <= 120
    assert len(redact_for_log("x" * 2000)) <= 500
    with pytest.raises(ValidationError):
        redact_for_log("x", limit=0)


@settings(max_examples=200, deadline=None)
@given(before=FILLER, secret=SECRETS, after=FILLER, limit=st.integers(1, 600))
def test_log_redaction_never_leaks_and_respects_the_limit(
    before: str, secret: tuple[str, str], after: str, limit: int
) -> None:
    """R-PROV-5: no embedded secret survives into a log line, at any length limit."""
    snippet, value = secret
    safe = redact_for_log(f"{before} \n {snippet} \n {after}", limit=limit)
    assert value not in safe
    assert len(safe) <= limit
