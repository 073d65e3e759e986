"""Deterministic provider fakes: a hash embedder and a scripted text provider.

Both pass the same contract suites as the HTTP adapters (`memory_contracts.providers`), so
service tests that use them test against the real port semantics: they honour deadlines and
cancellation, raise the typed errors, and never show their API key.

Latency is an injected awaitable factory. With a `ManualClock`, `latency=clock_step(clock,
0.3)` makes each call "take" 0.3 s of infrastructure time without real waiting, so deadline
and breaker logic is tested without sleeps; a call whose simulated latency runs past its
deadline raises DeadlineExceeded. `STALL` as a script step makes one call hang until its
deadline or its token ends it.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import struct
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Final

import attrs

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import DeadlineExceeded, ProviderResponseError
from memory_core.ports.providers import EmbeddingPurpose, TextRequest

__all__ = [
    "STALL",
    "EmbeddingCall",
    "FakeEmbeddingProvider",
    "ScriptedTextProvider",
    "Stall",
    "clock_step",
]

Latency = Callable[[], Awaitable[None]]


class Stall:
    """A script step: the call hangs until its deadline passes or its token is cancelled."""

    def __repr__(self) -> str:
        return "STALL"


STALL: Final = Stall()


def clock_step(clock: object, seconds: float) -> Latency:
    """A latency that advances a manual clock (anything with `advance(seconds)`) per call."""

    async def step() -> None:
        clock.advance(seconds)  # type: ignore[attr-defined]

    return step


async def _pause(
    latency: Latency | None, *, stall: bool, deadline: Deadline, cancel: CancellationToken
) -> None:
    """Wait out the simulated latency, but never past the deadline or the token."""
    cancel.raise_if_cancelled()
    deadline.raise_if_expired("fake provider call")
    if latency is None and not stall:
        return
    loop = asyncio.get_running_loop()
    stopped: asyncio.Future[None] = loop.create_future()

    def stop() -> None:
        # Tokens may be cancelled from another thread; futures may only be touched from theirs.
        loop.call_soon_threadsafe(lambda: stopped.done() or stopped.set_result(None))

    waiting: asyncio.Future[None] = (
        loop.create_future() if stall or latency is None else asyncio.ensure_future(latency())
    )
    unregister = cancel.on_cancel(stop)
    try:
        done, _ = await asyncio.wait(
            {waiting, stopped}, timeout=deadline.remaining(), return_when=asyncio.FIRST_COMPLETED
        )
    finally:
        unregister()
        waiting.cancel()
        stopped.cancel()
    cancel.raise_if_cancelled()
    if waiting not in done:
        raise DeadlineExceeded("fake provider call exceeded its deadline")
    waiting.result()
    deadline.raise_if_expired("fake provider call")


def _raise_or_pass(step: object) -> None:
    if isinstance(step, BaseException):
        raise step


@attrs.frozen(kw_only=True)
class EmbeddingCall:
    """What a `FakeEmbeddingProvider` was asked: texts and purpose (None for `dimensions`)."""

    texts: tuple[str, ...]
    purpose: EmbeddingPurpose | None


class FakeEmbeddingProvider:
    """`EmbeddingProvider` with deterministic, unit-length, hash-derived vectors.

    Scripted steps (`fail_next`) apply to the next calls in order — an exception is raised,
    `STALL` hangs, None succeeds; `failure`, when set, fails every call after the script.
    """

    def __init__(
        self,
        *,
        dim: int = 16,
        provider_id: str = "fake",
        model_id: str = "hash-v1",
        latency: Latency | None = None,
        failure: BaseException | None = None,
        api_key: str | None = None,
    ) -> None:
        if dim < 1:
            raise ValueError("dim must be positive")
        self._dim = dim
        self._provider_id = provider_id
        self._model_id = model_id
        self.latency = latency
        self.failure = failure
        self._api_key = api_key  # held like a real key would be: never shown
        self._script: deque[BaseException | Stall | None] = deque()
        self.calls: list[EmbeddingCall] = []
        self.closed = False

    def __repr__(self) -> str:
        return f"FakeEmbeddingProvider(provider_id={self._provider_id!r}, dim={self._dim})"

    @property
    def provider_id(self) -> str:
        return self._provider_id

    @property
    def model_id(self) -> str:
        return self._model_id

    def fail_next(self, *steps: BaseException | Stall | None) -> None:
        self._script.extend(steps)

    def vector(self, text: str) -> tuple[float, ...]:
        """The vector `embed` returns for `text`: same text, same vector, on every machine."""
        raw: list[float] = []
        counter = 0
        while len(raw) < self._dim:
            digest = hashlib.sha256(f"{self._model_id}\0{counter}\0{text}".encode()).digest()
            raw.extend(value / 2**31 - 1.0 for value in struct.unpack("<8I", digest))
            counter += 1
        raw = raw[: self._dim]
        norm = math.sqrt(sum(value * value for value in raw)) or 1.0
        return tuple(value / norm for value in raw)

    async def dimensions(self, *, deadline: Deadline, cancel: CancellationToken) -> int:
        self.calls.append(EmbeddingCall(texts=(), purpose=None))
        await self._step(deadline, cancel)
        return self._dim

    async def embed(
        self,
        texts: Sequence[str],
        *,
        purpose: EmbeddingPurpose,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> Sequence[Sequence[float]]:
        if not texts:
            return []
        self.calls.append(EmbeddingCall(texts=tuple(texts), purpose=purpose))
        await self._step(deadline, cancel)
        return [self.vector(text) for text in texts]

    async def aclose(self) -> None:
        self.closed = True

    async def _step(self, deadline: Deadline, cancel: CancellationToken) -> None:
        step = self._script.popleft() if self._script else self.failure
        await _pause(self.latency, stall=step is STALL, deadline=deadline, cancel=cancel)
        _raise_or_pass(step)


Response = str | BaseException | Stall | Callable[[TextRequest], str]


class ScriptedTextProvider:
    """`TextProvider` answering from a script: each call takes the next step — a string, an
    exception to raise, `STALL`, or a function of the request. When the script is used up,
    `default` answers (or, if None, the call fails with ProviderResponseError)."""

    def __init__(
        self,
        responses: Iterable[Response] = (),
        *,
        default: str | None = None,
        provider_id: str = "scripted",
        model_id: str = "script-v1",
        latency: Latency | None = None,
        api_key: str | None = None,
    ) -> None:
        self._script: deque[Response] = deque(responses)
        self._default = default
        self._provider_id = provider_id
        self._model_id = model_id
        self.latency = latency
        self._api_key = api_key
        self.requests: list[TextRequest] = []
        self.closed = False

    def __repr__(self) -> str:
        return f"ScriptedTextProvider(provider_id={self._provider_id!r}, left={len(self._script)})"

    @property
    def provider_id(self) -> str:
        return self._provider_id

    @property
    def model_id(self) -> str:
        return self._model_id

    def then(self, *responses: Response) -> ScriptedTextProvider:
        self._script.extend(responses)
        return self

    async def complete(
        self, request: TextRequest, *, deadline: Deadline, cancel: CancellationToken
    ) -> str:
        self.requests.append(request)
        step: Response | None = self._script.popleft() if self._script else self._default
        await _pause(self.latency, stall=step is STALL, deadline=deadline, cancel=cancel)
        _raise_or_pass(step)
        if step is None:
            raise ProviderResponseError("scripted text provider: the script is used up")
        if isinstance(step, str):
            return step
        if callable(step):
            return step(request)
        raise ProviderResponseError(f"scripted text provider: unusable step {type(step).__name__}")

    async def aclose(self) -> None:
        self.closed = True
