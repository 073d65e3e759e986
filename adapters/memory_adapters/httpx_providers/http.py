"""One pooled httpx client per provider: JSON POSTs under a deadline and a token, safe retries.

Deadline: the remaining time becomes the httpx timeout of each attempt (capped by the
provider's own `timeout_cap`) and, through `run_cancellable`, an asyncio deadline over the
whole call including retries. Retries: an idempotent request (embeddings) is sent at most
twice — after a transport failure, 429, 502, 503 or 504 — waiting as `Retry-After` says only
if that still fits in the deadline; a non-idempotent one (chat) is re-sent only when the
first attempt never connected.

Size: an answer is streamed and reading stops at its cap (`ResponseLimit`), so an endless
or huge body costs at most the cap in memory and time and ends in ProviderResponseTooLarge;
an error answer is read only as far as its excerpt needs. Parsing: an answer over
`INLINE_PARSE_BYTES` is decoded, and read into its result, on a worker thread under the same
deadline, so the event loop keeps serving other turns meanwhile (R-READ-1).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Mapping
from typing import TypeVar
from urllib.parse import urlsplit

import attrs
import httpx

from memory_adapters.httpx_providers.calls import run_cancellable
from memory_adapters.httpx_providers.credentials import ApiKey
from memory_adapters.httpx_providers.errors import (
    ProviderResponseTooLarge,
    malformed,
    retry_after_seconds,
    status_error,
    transport_error,
)
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import DeadlineExceeded, ProviderUnavailable, ValidationError

__all__ = [
    "INLINE_PARSE_BYTES",
    "RETRY_STATUSES",
    "JsonEndpoint",
    "ResponseLimit",
    "display_url",
    "validate_base_url",
]

logger = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({429, 502, 503, 504})
# Without a Retry-After, a short pause: long enough for a restarting server's listener,
# short enough for a query deadline.
_DEFAULT_RETRY_PAUSE = 0.1
# Below this a thread hop costs more than the parse itself.
INLINE_PARSE_BYTES = 256 * 1024
# An error answer is only quoted in a short excerpt; more of it is never read.
_ERROR_BODY_BYTES = 64 * 1024

T = TypeVar("T")


@attrs.frozen(slots=True)
class ResponseLimit:
    """The most bytes an answer may have, and the setting that says so (for the message)."""

    max_bytes: int
    name: str

    def __attrs_post_init__(self) -> None:
        if isinstance(self.max_bytes, bool) or not isinstance(self.max_bytes, int):
            raise ValidationError(self.name, "must be an integer")
        if self.max_bytes < 1:
            raise ValidationError(self.name, "must be positive")


@attrs.frozen(slots=True)
class _Answer:
    status: int
    headers: httpx.Headers
    body: bytes


def _thread_float(text: str) -> float:
    # A Python-level hook, so a worker thread gives the GIL up between numbers: the C decoder
    # alone holds it for the whole document (measured on an 85 MB answer: the loop stalled
    # 2.7 s with the parse on a thread, 0.13 s with this hook).
    return float(text)


def _decode(data: bytes, read: Callable[[object], T], what: str, threaded: bool) -> T:
    try:
        body = json.loads(data, parse_float=_thread_float) if threaded else json.loads(data)
    except (ValueError, RecursionError):  # RecursionError: absurdly deep nesting
        raise malformed(what, "the response is not valid JSON") from None
    return read(body)


def validate_base_url(url: object, field: str = "base_url") -> str:
    """The URL without trailing slashes; http(s) with a host, else ValidationError."""
    if not isinstance(url, str) or not url.strip():
        raise ValidationError(field, "must be an http(s) URL")
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValidationError(field, "must be an http(s) URL with a host")
    if parts.query or parts.fragment:
        raise ValidationError(field, "must not have a query or fragment")
    return url.strip().rstrip("/")


def display_url(url: str) -> str:
    """For reprs: scheme, host, port and path — never user info or query (may hold secrets)."""
    parts = urlsplit(url)
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{parts.hostname}{port}{parts.path}"


async def _read_capped(response: httpx.Response, limit: ResponseLimit, what: str) -> bytes:
    """The body, or ProviderResponseTooLarge as soon as it is known to pass the cap."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit.max_bytes:
        raise ProviderResponseTooLarge(what, limit.max_bytes, limit.name)
    chunks: list[bytes] = []
    size = 0
    # Decoded bytes are counted, so a compressed answer is capped at its expanded size.
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit.max_bytes:
            raise ProviderResponseTooLarge(what, limit.max_bytes, limit.name)
        chunks.append(chunk)
    return b"".join(chunks)


async def _read_excerpt(response: httpx.Response) -> bytes:
    """The first `_ERROR_BODY_BYTES` of an error answer; the rest is never read."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk[: _ERROR_BODY_BYTES - size])
        size += len(chunks[-1])
        if size >= _ERROR_BODY_BYTES:
            break
    return b"".join(chunks)


class JsonEndpoint:
    """POSTs JSON to `base_url` + path with the key as a bearer token; reads the JSON answer."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: ApiKey | None = None,
        timeout_cap: float | None = None,
        max_connections: int = 8,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if timeout_cap is not None and not timeout_cap > 0:
            raise ValidationError("timeout_seconds", "must be positive")
        if max_connections < 1:
            raise ValidationError("max_connections", "must be positive")
        self._api_key = api_key
        self._timeout_cap = timeout_cap
        self._closed = False
        self._client = httpx.AsyncClient(
            base_url=base_url + "/",
            transport=transport,
            limits=httpx.Limits(
                max_connections=max_connections, max_keepalive_connections=max_connections
            ),
            # A redirect could carry the Authorization header to another host.
            follow_redirects=False,
        )

    async def post(
        self,
        path: str,
        payload: Mapping[str, object],
        *,
        deadline: Deadline,
        cancel: CancellationToken,
        what: str,
        idempotent: bool,
        limit: ResponseLimit,
        read: Callable[[object], T],
    ) -> T:
        """`read(parsed JSON)` of the answer; `read` runs on a worker thread for a large one,
        so it must not touch loop objects."""
        if self._closed:
            raise ProviderUnavailable(f"{what}: the provider is closed")
        data = await run_cancellable(
            lambda: self._attempts(
                path, payload, deadline, what, idempotent=idempotent, limit=limit
            ),
            deadline=deadline,
            cancel=cancel,
            what=what,
        )
        if len(data) <= INLINE_PARSE_BYTES:
            return _decode(data, read, what, threaded=False)
        return await run_cancellable(
            lambda: asyncio.to_thread(_decode, data, read, what, True),
            deadline=deadline,
            cancel=cancel,
            what=what,
        )

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            await self._client.aclose()

    async def _attempts(
        self,
        path: str,
        payload: Mapping[str, object],
        deadline: Deadline,
        what: str,
        *,
        idempotent: bool,
        limit: ResponseLimit,
    ) -> bytes:
        secrets = () if self._api_key is None else (self._api_key.reveal(),)
        first = True
        while True:
            try:
                answer = await self._exchange(path, payload, deadline, what, limit)
            except httpx.TimeoutException:
                raise DeadlineExceeded(f"{what} exceeded its deadline") from None
            except httpx.TransportError as exc:
                retry = isinstance(exc, httpx.ConnectError) or (
                    idempotent and isinstance(exc, httpx.NetworkError | httpx.RemoteProtocolError)
                )
                if first and retry and deadline.remaining() > 0:
                    logger.debug("%s: retrying after %s", what, type(exc).__name__)
                    first = False
                    continue
                raise transport_error(exc, what) from None
            if 200 <= answer.status < 300:
                return answer.body
            if first and idempotent and answer.status in RETRY_STATUSES:
                pause = retry_after_seconds(answer.headers)
                pause = _DEFAULT_RETRY_PAUSE if pause is None else pause
                if pause < deadline.remaining():
                    logger.debug("%s: HTTP %s, retrying in %.2fs", what, answer.status, pause)
                    await asyncio.sleep(pause)
                    first = False
                    continue
            raise status_error(answer.status, answer.body, what, secrets)

    async def _exchange(
        self,
        path: str,
        payload: Mapping[str, object],
        deadline: Deadline,
        what: str,
        limit: ResponseLimit,
    ) -> _Answer:
        # Streamed, so nothing past the cap is ever buffered; leaving the block early closes
        # the connection instead of draining the rest into the pool.
        async with self._client.stream(
            "POST",
            path.lstrip("/"),
            json=payload,
            headers=self._headers(),
            timeout=self._timeout(deadline, what),
        ) as response:
            if response.is_success:
                body = await _read_capped(response, limit, what)
            else:
                body = await _read_excerpt(response)
            return _Answer(status=response.status_code, headers=response.headers, body=body)

    def _headers(self) -> dict[str, str]:
        if self._api_key is None:
            return {}
        return {"Authorization": f"Bearer {self._api_key.reveal()}"}

    def _timeout(self, deadline: Deadline, what: str) -> httpx.Timeout:
        remaining = deadline.remaining()
        if remaining <= 0:
            raise DeadlineExceeded(f"{what} exceeded its deadline")
        if self._timeout_cap is not None:
            remaining = min(remaining, self._timeout_cap)
        return httpx.Timeout(remaining)
