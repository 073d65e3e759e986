"""One pooled httpx client per provider: JSON POSTs under a deadline and a token, safe retries.

Deadline: the remaining time becomes the httpx timeout of each attempt (capped by the
provider's own `timeout_cap`) and, through `run_cancellable`, an asyncio deadline over the
whole call including retries. Retries: an idempotent request (embeddings) is sent at most
twice — after a transport failure, 429, 502, 503 or 504 — waiting as `Retry-After` says only
if that still fits in the deadline; a non-idempotent one (chat) is re-sent only when the
first attempt never connected.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from urllib.parse import urlsplit

import httpx

from memory_adapters.httpx_providers.calls import run_cancellable
from memory_adapters.httpx_providers.credentials import ApiKey
from memory_adapters.httpx_providers.errors import (
    malformed,
    retry_after_seconds,
    status_error,
    transport_error,
)
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import DeadlineExceeded, ProviderUnavailable, ValidationError

__all__ = ["RETRY_STATUSES", "JsonEndpoint", "display_url", "validate_base_url"]

logger = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({429, 502, 503, 504})
# Without a Retry-After, a short pause: long enough for a restarting server's listener,
# short enough for a query deadline.
_DEFAULT_RETRY_PAUSE = 0.1


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


class JsonEndpoint:
    """POSTs JSON to `base_url` + path with the key as a bearer token; returns parsed JSON."""

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
    ) -> object:
        if self._closed:
            raise ProviderUnavailable(f"{what}: the provider is closed")
        return await run_cancellable(
            lambda: self._attempts(path, payload, deadline, what, idempotent),
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
        idempotent: bool,
    ) -> object:
        secrets = () if self._api_key is None else (self._api_key.reveal(),)
        first = True
        while True:
            try:
                response = await self._client.post(
                    path.lstrip("/"),
                    json=payload,
                    headers=self._headers(),
                    timeout=self._timeout(deadline, what),
                )
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
            if response.is_success:
                try:
                    return response.json()
                except ValueError:
                    raise malformed(what, "the response is not valid JSON") from None
            if first and idempotent and response.status_code in RETRY_STATUSES:
                pause = retry_after_seconds(response.headers)
                pause = _DEFAULT_RETRY_PAUSE if pause is None else pause
                if pause < deadline.remaining():
                    status = response.status_code
                    logger.debug("%s: HTTP %s, retrying in %.2fs", what, status, pause)
                    await asyncio.sleep(pause)
                    first = False
                    continue
            raise status_error(response, what, secrets)

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
