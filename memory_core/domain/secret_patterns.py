"""The detector table behind the secret policy (R-PRIV-1): what a credential looks like.

Each detector is named (the name becomes the `kind` of a finding) and ranked by specificity,
which decides the kind when detectors overlap on spans of equal length. The patterns are tuned
to stay quiet on ordinary prose ("my password manager is 1Password", "token economy"): generic
detectors need a credential context (`password=`, `Bearer`, a URL) and a plausible value.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import Protocol, runtime_checkable

import attrs

__all__ = [
    "DEFAULT_DETECTORS",
    "CardNumberDetector",
    "Detector",
    "Hint",
    "Prefilter",
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
_DIGITLESS = str.maketrans("", "", "0123456789")


def _groups(groups: Iterable[Iterable[str]]) -> tuple[frozenset[str], ...]:
    return tuple(frozenset(group) for group in groups)


@attrs.frozen(kw_only=True)
class Hint:
    """What a text must hold for a detector to match it: a prefilter, so the policy runs a
    detector's pattern only over text that could hold a match (most text holds none; the
    patterns cost most of a write's CPU, issue 15). Each group needs one of its strings.

    `cased` strings are searched in the text as it is: the pattern spells each of them
    outside any case-insensitive group, so every match holds one verbatim. `lowered` strings
    and `digits` are judged only when the text is ASCII, over its `lower()`: there a
    `(?i:...)` group matches exactly what lower-casing makes equal, and `\\d` only ASCII
    digits. In other text Unicode case rules (the Kelvin sign matches `k`, `ſ` matches `s`)
    and Unicode digits apply, so those groups admit it and the pattern decides."""

    cased: tuple[frozenset[str], ...] = attrs.field(default=(), converter=_groups)
    lowered: tuple[frozenset[str], ...] = attrs.field(default=(), converter=_groups)
    digits: int = 0  # an ASCII text holds at least this many ASCII digits

    def admits(self, text: str, lowered: str | None, digits: int) -> bool:
        """Whether `text` may hold a match, given its `lower()` (None: it is not ASCII) and
        its count of ASCII `digits`."""
        for group in self.cased:
            if not any(needle in text for needle in group):
                return False
        if lowered is None:
            return True
        if digits < self.digits:
            return False
        return all(any(needle in lowered for needle in group) for group in self.lowered)


@attrs.frozen
class Prefilter:
    """The detectors of a table (by position) that may match a text, by their hints (None:
    always run). Each hint string is searched once per text, whichever hints share it, and
    only the hints one of whose strings the text holds are asked (most text holds none)."""

    hints: tuple[Hint | None, ...] = attrs.field(converter=tuple)
    # Positions asked whatever the text holds: no hint, or a hint of digits only.
    _always: frozenset[int] = attrs.field(init=False)
    # Positions by each string of the hint's first group (cased first, else lowered): a hint
    # can admit only a text holding one of them.
    _by_cased: dict[str, frozenset[int]] = attrs.field(init=False)
    _by_lowered: dict[str, frozenset[int]] = attrs.field(init=False)
    # Positions whose first group is lowered: asked for every text that is not ASCII.
    _unless_ascii: frozenset[int] = attrs.field(init=False)

    @_always.default
    def _positions_always(self) -> frozenset[int]:
        return frozenset(
            index
            for index, hint in enumerate(self.hints)
            if hint is None or not (hint.cased or hint.lowered)
        )

    @_by_cased.default
    def _positions_by_cased(self) -> dict[str, frozenset[int]]:
        return _by_string((i, h.cased[0]) for i, h in enumerate(self.hints) if h and h.cased)

    @_by_lowered.default
    def _positions_by_lowered(self) -> dict[str, frozenset[int]]:
        return _by_string(
            (i, h.lowered[0]) for i, h in enumerate(self.hints) if h and not h.cased and h.lowered
        )

    @_unless_ascii.default
    def _positions_unless_ascii(self) -> frozenset[int]:
        return frozenset().union(*self._by_lowered.values())

    def admitted(self, text: str) -> list[int]:
        """Positions of the detectors to run over `text`, in table order."""
        asked = set(self._always)
        for needle, positions in self._by_cased.items():
            if needle in text:
                asked |= positions
        lowered: str | None = None
        digits = 0
        if text.isascii():
            lowered = text.lower()
            for needle, positions in self._by_lowered.items():
                if needle in lowered:
                    asked |= positions
            digits = len(text) - len(text.translate(_DIGITLESS))
        else:
            asked |= self._unless_ascii
        hints = self.hints
        return [
            index
            for index in sorted(asked)
            if (hint := hints[index]) is None or hint.admits(text, lowered, digits)
        ]


def _by_string(groups: Iterable[tuple[int, frozenset[str]]]) -> dict[str, frozenset[int]]:
    positions: dict[str, set[int]] = {}
    for index, group in groups:
        for needle in group:
            positions.setdefault(needle, set()).add(index)
    return {needle: frozenset(indexes) for needle, indexes in positions.items()}


@attrs.frozen(kw_only=True)
class RegexDetector:
    """A detector from a compiled pattern, with an optional check on each match."""

    name: str
    pattern: re.Pattern[str]
    specificity: int = STRUCTURAL
    accept: Callable[[str], bool] | None = None
    hint: Hint | None = None  # None: run over every text

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
    hint: Hint = Hint(digits=13)

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
# What every key above holds, lower-cased: its hint (each credential word holds one).
_KEY_STEMS = ("pass", "pwd", "secret", "token", "api", "private")
_TOKEN = r"[A-Za-z0-9._~+/-]{16,}=*"  # RFC 6750 b64token
_URL_PARAMS = (
    "api_key|apikey|access_token|refresh_token|token|key|secret|client_secret|signature"
    "|sig|password|x-amz-signature|x-amz-credential"
)
# The end of every parameter above with its `=`, lower-cased: the hint of a match.
_URL_PARAM_ENDINGS = ("key=", "token=", "secret=", "sig=", "signature=", "password=", "credential=")


def _rx(
    name: str,
    pattern: str,
    specificity: int,
    accept: Callable[[str], bool] | None = None,
    *,
    cased: tuple[tuple[str, ...], ...] = (),
    lowered: tuple[tuple[str, ...], ...] = (),
    digits: int = 0,
) -> RegexDetector:
    return RegexDetector(
        name=name,
        pattern=re.compile(pattern),
        specificity=specificity,
        accept=accept,
        hint=Hint(cased=cased, lowered=lowered, digits=digits),
    )


DEFAULT_DETECTORS: tuple[Detector, ...] = (
    _rx(
        "anthropic_key",
        r"(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,}",
        PROVIDER,
        cased=(("sk-ant-",),),
    ),
    _rx(
        "openai_key",
        r"(?<![A-Za-z0-9_-])sk-(?!ant-)[A-Za-z0-9_-]{20,}",
        PROVIDER,
        _has_digit_and_letter,
        cased=(("sk-",),),
    ),
    _rx(
        "github_token",
        r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})",
        PROVIDER,
        cased=(("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),),
    ),
    _rx(
        "slack_token",
        r"(?<![A-Za-z0-9])xox[abprs]-[A-Za-z0-9-]{10,}",
        PROVIDER,
        _has_digit_and_letter,
        cased=(("xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-"),),
    ),
    _rx(
        "google_api_key",
        r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])",
        PROVIDER,
        cased=(("AIza",),),
    ),
    _rx(
        "aws_access_key_id",
        r"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])",
        PROVIDER,
        cased=(("AKIA", "ASIA"),),
    ),
    _rx(
        "aws_secret_key",
        r"(?i:(?:aws[_-]?)?secret[_-]?access[_-]?key)[\"']?\s*[:=]\s*[\"']?"
        r"(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
        PROVIDER,
        cased=((":", "="),),
        lowered=(("secret",), ("access",)),
    ),
    _rx(
        "stripe_key",
        r"(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}",
        PROVIDER,
        cased=(("sk_live_", "sk_test_", "rk_live_", "rk_test_"),),
    ),
    # Formats after gitleaks' and detect-secrets' rules: each a fixed prefix and a length, so
    # identifiers such as `hf_hub_download` or `npm_config_cache` are not keys.
    _rx(
        "huggingface_token",
        r"(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{34,40}(?![A-Za-z0-9_])",
        PROVIDER,
        cased=(("hf_",),),
    ),
    _rx(
        "gitlab_token",
        r"(?<![A-Za-z0-9_-])gl(?:pat|ptt|dt|rt|soat|cbt)-[A-Za-z0-9_-]{20,}",
        PROVIDER,
        cased=(("glpat-", "glptt-", "gldt-", "glrt-", "glsoat-", "glcbt-"),),
    ),
    _rx(
        "npm_token",
        r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])",
        PROVIDER,
        cased=(("npm_",),),
    ),
    _rx(
        "pypi_token",
        r"(?<![A-Za-z0-9_-])pypi-AgE[A-Za-z0-9_-]{50,}",
        PROVIDER,
        cased=(("pypi-AgE",),),
    ),
    _rx(
        "sendgrid_key",
        r"(?<![A-Za-z0-9_.-])SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])",
        PROVIDER,
        cased=(("SG.",),),
    ),
    _rx(
        "twilio_key",
        r"(?<![A-Za-z0-9_])SK[0-9a-fA-F]{32}(?![A-Za-z0-9_])",
        PROVIDER,
        cased=(("SK",),),
    ),
    _rx(
        "azure_storage_key",
        r"(?i:Account|SharedAccess)Key=(?P<secret>[A-Za-z0-9+/]{40,}={0,2})",
        PROVIDER,
        cased=(("Key=",),),
        lowered=(("accountkey=", "sharedaccesskey="),),
    ),
    _rx(
        "telegram_bot_token",
        r"(?<![A-Za-z0-9_:-])\d{5,16}:A[A-Za-z0-9_-]{34}(?![A-Za-z0-9_-])",
        PROVIDER,
        cased=((":A",),),
        digits=5,
    ),
    _rx(
        "discord_webhook",
        r"(?i:https?://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/)\d{5,25}/"
        r"[A-Za-z0-9_-]{60,70}",
        PROVIDER,
        cased=(("/",),),
        lowered=(("/api/webhooks/",), ("discord",)),
        digits=5,
    ),
    _rx(
        "private_key",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----"
        # A block cut short still leaks its body: take the base64 lines and PEM headers.
        r"|[A-Za-z0-9+/=\s:,-]*)",
        STRUCTURAL,
        cased=(("-----BEGIN ",), ("PRIVATE KEY-----",)),
    ),
    _rx(
        "jwt",
        r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*",
        STRUCTURAL,
        cased=(("eyJ",), (".",)),
    ),
    CardNumberDetector(),
    _rx(
        "bearer_token",
        r"(?i:authorization)[\"']?\s*[:=]\s*[\"']?(?i:bearer)\s+(?P<secret>" + _TOKEN + ")",
        CONTEXT,
        cased=((":", "="),),
        lowered=(("authorization",), ("bearer",)),
    ),
    # Without the header, "bearer" is also an English word: require a random-looking token.
    _rx(
        "bearer_token",
        r"(?<![A-Za-z])(?i:bearer)\s+(?P<secret>" + _TOKEN + ")",
        CONTEXT,
        _has_digit_and_letter,
        lowered=(("bearer",),),
        digits=1,
    ),
    _rx(
        "basic_auth",
        r"(?i:authorization)[\"']?\s*[:=]\s*[\"']?(?i:basic)\s+(?P<secret>[A-Za-z0-9+/]{8,}={0,2})",
        CONTEXT,
        cased=((":", "="),),
        lowered=(("authorization",), ("basic",)),
    ),
    _rx(
        "url_password",
        r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s/?#@:\[\]]*:"
        r"(?P<secret>(?:(?!\[REDACTED:)[^\s/?#@])+)@",
        CONTEXT,
        cased=(("://",), ("@",)),
    ),
    _rx(
        "url_secret_param",
        r"[?&](?i:" + _URL_PARAMS + r")=(?P<secret>(?!\[REDACTED)[^&#\s\"'<>]{4,})",
        CONTEXT,
        cased=(("?", "&"), ("=",)),
        lowered=(_URL_PARAM_ENDINGS,),
    ),
    # Same line only: after a bare "password:" the next line is another key, not its value.
    _rx(
        "secret_assignment",
        _KEY + r"[ \t]*[:=][ \t]*" + _VALUE,
        GENERIC,
        _plausible_value,
        cased=((":", "="),),
        lowered=(_KEY_STEMS,),
    ),
    _rx(
        "password_phrase",
        r"(?<![A-Za-z])(?i:password|passcode|passphrase)\s+(?i:is|was)\s*:?\s*[\"'“‘]?"
        r"(?P<secret>[^\s\"'”’<>]{3,}[^\s\"'”’<>.,;:)\]}!?])",
        GENERIC,
        _plausible_value,
        lowered=(("pass",), ("is", "was")),
    ),
    _rx(
        "password_phrase",
        r"(?<![A-Za-z])(?i:pin)(?:\s+(?i:code|number))?\s*(?:(?i:is|was)\s*:?|[:=])\s*"
        r"(?P<secret>\d{4,8})(?!\d)",
        GENERIC,
        lowered=(("pin",),),
        digits=4,
    ),
)
