"""httpx outcomes -> the core's typed provider errors, with every message made safe (R-PROV-5).

Retryable (ProviderUnavailable): transport failures, 408, 429 and 5xx. Not retryable
(ProviderResponseError): other 4xx, malformed or mis-shaped answers. A message names the
operation, the status and a short, redacted excerpt of the server's own error text — never a
URL, a header or the key (the key is scrubbed by value, then `redact_for_log` removes
anything else that looks like a credential).
"""

from __future__ import annotations

import email.utils
import json
import math
import time
from collections.abc import Iterable, Mapping

import httpx

from memory_core.domain.errors import ProviderError, ProviderResponseError, ProviderUnavailable
from memory_core.domain.secrets import redact_for_log

__all__ = [
    "ProviderRequestRefused",
    "ProviderResponseTooLarge",
    "malformed",
    "retry_after_seconds",
    "safe_text",
    "status_error",
    "transport_error",
]

_DETAIL_LIMIT = 200


def safe_text(text: str, secrets: Iterable[str] = (), limit: int = _DETAIL_LIMIT) -> str:
    """`text` with the known secrets removed by value, then redacted and shortened."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[REDACTED]")
    return redact_for_log(text, limit=limit)


def transport_error(exc: httpx.TransportError, what: str) -> ProviderUnavailable:
    detail = safe_text(str(exc), limit=120)
    suffix = f" ({detail})" if detail else ""
    return ProviderUnavailable(f"{what}: {type(exc).__name__}{suffix}")


def _server_message(body: bytes) -> str:
    # OpenAI-style {"error": {"message": ...}}, Ollama {"error": "..."}, or plain text.
    try:
        parsed = json.loads(body)
    except (ValueError, RecursionError):
        return body.decode("utf-8", errors="replace")
    if isinstance(parsed, Mapping):
        error = parsed.get("error")
        if isinstance(error, Mapping) and isinstance(error.get("message"), str):
            return error["message"]
        if isinstance(error, str):
            return error
    return json.dumps(parsed)[:1_000]


def status_error(status: int, body: bytes, what: str, secrets: Iterable[str]) -> ProviderError:
    """The error of an HTTP failure `status` whose body (or its first bytes) is `body`."""
    detail = safe_text(_server_message(body), secrets)
    message = f"{what}: HTTP {status}" + (f": {detail}" if detail else "")
    if status in (408, 429) or status >= 500:
        return ProviderUnavailable(message)
    if status in (400, 422):
        return ProviderRequestRefused(message)
    return ProviderResponseError(message)


class ProviderRequestRefused(ProviderResponseError):
    """The server refused the request as sent (HTTP 400/422) before generating anything —
    e.g. a `response_format` it does not support — so another form of it may be sent."""


class ProviderResponseTooLarge(ProviderResponseError):
    """The answer is longer than the cap named in the message; reading stopped there (the
    rest was never received). Not retryable: the same request would get the same answer."""

    def __init__(self, what: str, limit_bytes: int, limit_name: str) -> None:
        self.limit_bytes = limit_bytes
        self.limit_name = limit_name
        super().__init__(f"{what}: the response exceeds {limit_bytes} bytes ({limit_name})")


def malformed(what: str, problem: str) -> ProviderResponseError:
    return ProviderResponseError(f"{what}: {problem}")


def retry_after_seconds(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds to wait per a `Retry-After` header (delta-seconds or HTTP-date); None if absent
    or unreadable."""
    value = headers.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when is None or when.tzinfo is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if not math.isfinite(seconds):
        return None
    return max(0.0, seconds)
