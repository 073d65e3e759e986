"""The detector table behind the secret policy (R-PRIV-1): what a credential looks like.

Each detector is named (the name becomes the `kind` of a finding) and ranked by specificity,
which decides the kind when detectors overlap on spans of equal length. The patterns are tuned
to stay quiet on ordinary prose ("my password manager is 1Password", "token economy"): generic
detectors need a credential context (`password=`, `Bearer`, a URL) and a plausible value.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from memory_core.domain.secret_patterns.detectors import (
    CONTEXT,
    GENERIC,
    PROVIDER,
    STRUCTURAL,
    CardNumberDetector,
    Detector,
    RegexDetector,
)
from memory_core.domain.secret_patterns.hints import Hint

__all__ = ["DEFAULT_DETECTORS"]


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
