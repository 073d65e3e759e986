"""The detector table behind the secret policy (R-PRIV-1): what a credential looks like.

Each detector is named (the name becomes the `kind` of a finding) and ranked by specificity,
which decides the kind when detectors overlap on spans of equal length. The patterns are tuned
to stay quiet on ordinary prose ("my password manager is 1Password", "token economy"): generic
detectors need a credential context (`password=`, `Bearer`, a URL) and a plausible value.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Protocol, runtime_checkable

import attrs

__all__ = [
    "DEFAULT_DETECTORS",
    "CardNumberDetector",
    "Detector",
    "RegexDetector",
    "luhn_valid",
]

# Specificity ranks: a provider's own key format says more than a structural shape, which says
# more than a generic "key = value" context.
PROVIDER = 30
STRUCTURAL = 20
CONTEXT = 10
GENERIC = 5


@runtime_checkable
class Detector(Protocol):
    """One kind of secret: yields `(start, end)` spans of secret text, in any order."""

    @property
    def name(self) -> str: ...

    @property
    def specificity(self) -> int: ...

    def spans(self, text: str) -> Iterator[tuple[int, int]]: ...


def _secret_span(match: re.Match[str]) -> tuple[int, int]:
    # Patterns mark the secret with groups named `secret*` (alternations need distinct names);
    # the first that took part wins. Without one the whole match is the secret.
    for name, index in sorted(match.re.groupindex.items(), key=lambda item: item[1]):
        if name.startswith("secret") and match.start(index) != -1:
            return match.span(index)
    return match.span()


# Longer than any key, header or scheme that can precede a secret value.
_OVERLAP_WINDOW = 128


@attrs.frozen(kw_only=True)
class RegexDetector:
    """A detector from a compiled pattern, with an optional check on each match."""

    name: str
    pattern: re.Pattern[str]
    specificity: int = STRUCTURAL
    accept: Callable[[str], bool] | None = None

    def spans(self, text: str) -> Iterator[tuple[int, int]]:
        position = 0
        while (match := self.pattern.search(text, position)) is not None:
            # Resume inside the tail of the match, not after it: a match that swallows the next
            # credential's key ('password: "client_secret": "x"') must not hide that credential.
            # Only the tail, so long overlapping runs stay linear; the policy merges overlaps.
            position = max(match.start() + 1, match.end() - _OVERLAP_WINDOW)
            start, end = _secret_span(match)
            if end > start and (self.accept is None or self.accept(text[start:end])):
                yield start, end


def luhn_valid(digits: str) -> bool:
    """The Luhn checksum that every payment card number satisfies."""
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


# A maximal run of digits joined by single spaces or dashes, not continuing a decimal or a
# thousands-separated number on the left.
_DIGIT_RUN = re.compile(r"(?<!\d)(?<!\d[.,])\d+(?:[ -]\d+)*")


@attrs.frozen(kw_only=True)
class CardNumberDetector:
    """Payment card numbers: 13-19 digits (spaces/dashes allowed) that pass Luhn.

    Only a whole digit run counts: a Luhn-valid stretch inside a longer run (a 20-digit id, a
    list of numbers) is not a card, which keeps order numbers and ids from being flagged.
    """

    name: str = "card_number"
    specificity: int = STRUCTURAL

    def spans(self, text: str) -> Iterator[tuple[int, int]]:
        for match in _DIGIT_RUN.finditer(text):
            end = match.end()
            if end + 1 < len(text) and text[end] in ".," and text[end + 1].isdigit():
                continue  # a decimal fraction or a thousands group follows: a quantity
            digits = re.sub(r"\D", "", match.group())
            if 13 <= len(digits) <= 19 and len(set(digits)) > 1 and luhn_valid(digits):
                yield match.span()


def _has_digit_and_letter(value: str) -> bool:
    # Random keys of 16+ characters carry both; hyphenated prose ("sk-learn-is-great") does not.
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


_PLACEHOLDERS = frozenset({"null", "none", "nil", "true", "false", "undefined", "changeme"})
# Words that follow "password is" / "password:" in prose rather than a password.
_PROSE_WORDS = frozenset(
    """
    also always being blank changed complex compromised correct different easy empty encrypted
    expired forgotten good hard hashed here hidden incorrect insecure invalid leaked long lost
    managed mandatory missing needed never only optional private protected random ready really
    required reset safe same saved secret secure sent shared short shown simple stolen still
    stored strong that there this unique unknown updated used valid very visible weak what which
    wrong
    """.split()  # noqa: SIM905 - a word list reads better as text
)


def _plausible_value(value: str) -> bool:
    bare = value.strip("\"'")
    if len(bare) < 4 or bare.lower() in _PLACEHOLDERS:
        return False
    if len(set(bare)) == 1 or bare.startswith(("${", "{{", "%(")) or "[REDACTED:" in bare:
        return False  # masks (****), templates and our own redaction markers
    return not (bare.isalpha() and bare.islower() and bare in _PROSE_WORDS)


_ASSIGNMENT_KEYS = (
    "password|passwd|pwd|passphrase|secret|token|api_key|apikey|access_token|refresh_token"
    "|auth_token|client_secret|private_key|secret_key"
)
# The key may carry a namespace (DB_PASSWORD, github.token, x-api-key) but must end in one of
# the credential words, so `max_tokens` or `token_count` are not keys.
_KEY = (
    r"(?<![A-Za-z0-9_.-])[\"']?(?i:(?:[a-z0-9]+[_.-])*?"
    r"(?:" + _ASSIGNMENT_KEYS.replace("_", "[_-]") + r"))[\"']?"
)
_VALUE = (
    r"(?:\"(?P<secret_dq>(?:[^\"\\\n]|\\.){4,})\""
    r"|'(?P<secret_sq>(?:[^'\\\n]|\\.){4,})'"
    # Unquoted: stop at whitespace, quotes and `&` (query strings); drop trailing punctuation.
    r"|(?P<secret>[^\s\"'&<>]{3,}[^\s\"'&<>.,;:)\]}!?]))"
)
_TOKEN = r"[A-Za-z0-9._~+/-]{16,}=*"  # RFC 6750 b64token
_URL_PARAMS = (
    "api_key|apikey|access_token|refresh_token|token|key|secret|client_secret|signature"
    "|sig|password|x-amz-signature|x-amz-credential"
)


def _rx(
    name: str, pattern: str, specificity: int, accept: Callable[[str], bool] | None = None
) -> RegexDetector:
    return RegexDetector(
        name=name, pattern=re.compile(pattern), specificity=specificity, accept=accept
    )


DEFAULT_DETECTORS: tuple[Detector, ...] = (
    _rx("anthropic_key", r"(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,}", PROVIDER),
    _rx(
        "openai_key",
        r"(?<![A-Za-z0-9_-])sk-(?!ant-)[A-Za-z0-9_-]{20,}",
        PROVIDER,
        _has_digit_and_letter,
    ),
    _rx(
        "github_token",
        r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})",
        PROVIDER,
    ),
    _rx(
        "slack_token",
        r"(?<![A-Za-z0-9])xox[abprs]-[A-Za-z0-9-]{10,}",
        PROVIDER,
        _has_digit_and_letter,
    ),
    _rx("google_api_key", r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])", PROVIDER),
    _rx("aws_access_key_id", r"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])", PROVIDER),
    _rx(
        "aws_secret_key",
        r"(?i:(?:aws[_-]?)?secret[_-]?access[_-]?key)[\"']?\s*[:=]\s*[\"']?"
        r"(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
        PROVIDER,
    ),
    _rx("stripe_key", r"(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}", PROVIDER),
    # Formats after gitleaks' and detect-secrets' rules: each a fixed prefix and a length, so
    # identifiers such as `hf_hub_download` or `npm_config_cache` are not keys.
    _rx("huggingface_token", r"(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{34,40}(?![A-Za-z0-9_])", PROVIDER),
    _rx(
        "gitlab_token",
        r"(?<![A-Za-z0-9_-])gl(?:pat|ptt|dt|rt|soat|cbt)-[A-Za-z0-9_-]{20,}",
        PROVIDER,
    ),
    _rx("npm_token", r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])", PROVIDER),
    _rx("pypi_token", r"(?<![A-Za-z0-9_-])pypi-AgE[A-Za-z0-9_-]{50,}", PROVIDER),
    _rx(
        "sendgrid_key",
        r"(?<![A-Za-z0-9_.-])SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])",
        PROVIDER,
    ),
    _rx("twilio_key", r"(?<![A-Za-z0-9_])SK[0-9a-fA-F]{32}(?![A-Za-z0-9_])", PROVIDER),
    _rx(
        "azure_storage_key",
        r"(?i:Account|SharedAccess)Key=(?P<secret>[A-Za-z0-9+/]{40,}={0,2})",
        PROVIDER,
    ),
    _rx(
        "telegram_bot_token",
        r"(?<![A-Za-z0-9_:-])\d{5,16}:A[A-Za-z0-9_-]{34}(?![A-Za-z0-9_-])",
        PROVIDER,
    ),
    _rx(
        "discord_webhook",
        r"(?i:https?://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/)\d{5,25}/"
        r"[A-Za-z0-9_-]{60,70}",
        PROVIDER,
    ),
    _rx(
        "private_key",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----"
        # A block cut short still leaks its body: take the base64 lines and PEM headers.
        r"|[A-Za-z0-9+/=\s:,-]*)",
        STRUCTURAL,
    ),
    _rx(
        "jwt",
        r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*",
        STRUCTURAL,
    ),
    CardNumberDetector(),
    _rx(
        "bearer_token",
        r"(?i:authorization)[\"']?\s*[:=]\s*[\"']?(?i:bearer)\s+(?P<secret>" + _TOKEN + ")",
        CONTEXT,
    ),
    # Without the header, "bearer" is also an English word: require a random-looking token.
    _rx(
        "bearer_token",
        r"(?<![A-Za-z])(?i:bearer)\s+(?P<secret>" + _TOKEN + ")",
        CONTEXT,
        _has_digit_and_letter,
    ),
    _rx(
        "basic_auth",
        r"(?i:authorization)[\"']?\s*[:=]\s*[\"']?(?i:basic)\s+(?P<secret>[A-Za-z0-9+/]{8,}={0,2})",
        CONTEXT,
    ),
    _rx(
        "url_password",
        r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s/?#@:\[\]]*:"
        r"(?P<secret>(?:(?!\[REDACTED:)[^\s/?#@])+)@",
        CONTEXT,
    ),
    _rx(
        "url_secret_param",
        r"[?&](?i:" + _URL_PARAMS + r")=(?P<secret>(?!\[REDACTED)[^&#\s\"'<>]{4,})",
        CONTEXT,
    ),
    # Same line only: after a bare "password:" the next line is another key, not its value.
    _rx("secret_assignment", _KEY + r"[ \t]*[:=][ \t]*" + _VALUE, GENERIC, _plausible_value),
    _rx(
        "password_phrase",
        r"(?<![A-Za-z])(?i:password|passcode|passphrase)\s+(?i:is|was)\s*:?\s*[\"'“‘]?"
        r"(?P<secret>[^\s\"'”’<>]{3,}[^\s\"'”’<>.,;:)\]}!?])",
        GENERIC,
        _plausible_value,
    ),
    _rx(
        "password_phrase",
        r"(?<![A-Za-z])(?i:pin)(?:\s+(?i:code|number))?\s*(?:(?i:is|was)\s*:?|[:=])\s*"
        r"(?P<secret>\d{4,8})(?!\d)",
        GENERIC,
    ),
)
