"""A smoke check per port family: the product answers one call under a deadline."""

from __future__ import annotations

import asyncio
import itertools
import math
from collections.abc import Awaitable, Callable, Mapping
from datetime import timedelta
from typing import Any

from memory_contracts.fakes import ManualClock
from memory_contracts.plugin.discovery import (
    AGENT,
    REAL_TIME,
)
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import ClaimDraft, ClaimKind, EmbeddingIdentity, WriteOrigin
from memory_core.domain.errors import DeadlineExceeded
from memory_core.ports.clock import DomainClock, InfraClock
from memory_core.ports.extraction import ExtractionRequest, ExtractionResult
from memory_core.ports.providers import ChatMessage, EmbeddingPurpose, TextRequest
from memory_plugins.hookspecs import PORT_FAMILIES

# --- smoke checks per family -----------------------------------------------------------------
Smoke = Callable[[Any, Deadline, ManualClock], Awaitable[None]]


def _calls(deadline: Deadline) -> dict[str, Any]:
    return {"deadline": deadline, "cancel": CancellationToken()}


def _ids(product: Any) -> None:
    for attribute in ("provider_id", "model_id"):
        value = getattr(product, attribute)
        assert isinstance(value, str) and value, f"{attribute} must be a non-empty string"


async def _expired_deadline_is_refused(call: Callable[[Deadline], Awaitable[Any]]) -> None:
    expired = Deadline.after(REAL_TIME, 0.0)
    try:
        await call(expired)
    except DeadlineExceeded:
        return
    raise AssertionError("a call with an expired deadline must raise DeadlineExceeded")


async def _embedding_provider(product: Any, deadline: Deadline, clock: ManualClock) -> None:
    _ids(product)
    dim = await product.dimensions(**_calls(deadline))
    assert isinstance(dim, int) and not isinstance(dim, bool) and dim > 0, (
        f"dimensions() must be a positive int, got {dim!r}"
    )
    texts = ["conformance probe: the user lives in Lisbon", "a second, different probe"]
    vectors = await product.embed(texts, purpose=EmbeddingPurpose.QUERY, **_calls(deadline))
    assert len(vectors) == len(texts), f"embed() returned {len(vectors)} vectors for 2 texts"
    for vector in vectors:
        assert len(vector) == dim, (
            f"embed() returned a vector of {len(vector)} floats; dimensions() says {dim}"
        )
        assert all(isinstance(v, float) and math.isfinite(v) for v in vector), (
            "embed() must return finite floats"
        )
    assert list(await product.embed([], purpose=EmbeddingPurpose.BATCH, **_calls(deadline))) == []
    await _expired_deadline_is_refused(
        lambda expired: product.embed(["x"], purpose=EmbeddingPurpose.QUERY, **_calls(expired))
    )


async def _text_provider(product: Any, deadline: Deadline, clock: ManualClock) -> None:
    # No completion: that needs the provider's backend; the contract suite covers it.
    _ids(product)
    request = TextRequest(messages=[ChatMessage(role="user", content="conformance probe")])
    await _expired_deadline_is_refused(lambda expired: product.complete(request, **_calls(expired)))


async def _vector_store(product: Any, deadline: Deadline, clock: ManualClock) -> None:
    identity = EmbeddingIdentity(provider="conformance", model="probe", dim=4)
    vectors = {"c1": [1.0, 0.0, 0.0, 0.0], "c2": [0.0, 1.0, 0.0, 0.0]}
    await product.upsert(AGENT, identity, vectors, **_calls(deadline))
    report = await product.warm(
        AGENT, identity, ["c1", "c2"], config_generation=1, **_calls(deadline)
    )
    hits = await product.query(
        AGENT, report.certificate, [1.0, 0.1, 0.0, 0.0], 1, **_calls(deadline)
    )
    assert [hit.claim_id for hit in hits] == ["c1"], "query() must find the nearest vector"


async def _claim_store(product: Any, deadline: Deadline, clock: ManualClock) -> None:
    draft = ClaimDraft(agent_id=AGENT, kind=ClaimKind.SEMANTIC, content="The probe likes tea.")
    outcome = product.insert(draft, origin=WriteOrigin.USER_ADD, now=clock.now())
    assert outcome.claim is not None, f"insert() stored nothing ({outcome.status})"
    stored = product.get(AGENT, outcome.claim.id)
    assert stored.content == draft.content, "get() must return the inserted claim"


async def _cursor_store(product: Any, deadline: Deadline, clock: ManualClock) -> None:
    key = ("conformance-agent", "conformance-session")
    assert product.get(*key) == 0, "an unknown (agent, session) starts at 0"
    assert product.advance(*key, 3) == 3
    assert product.get(*key) == 3


async def _extractor(product: Any, deadline: Deadline, clock: ManualClock) -> None:
    name = product.name
    assert isinstance(name, str) and name, "name must be a non-empty string"
    request = ExtractionRequest(
        agent_id=AGENT,
        session_id="conformance-session",
        entries=(),
        reference_time=clock.now(),
        timezone=clock.timezone(),
    )
    result = await product.extract(request, **_calls(deadline))
    assert isinstance(result, ExtractionResult), "extract() must return an ExtractionResult"


async def _tape(product: Any, deadline: Deadline, clock: ManualClock) -> None:
    entries = await product.get_by_session("conformance-no-such-session", **_calls(deadline))
    assert list(entries) == [], "an unknown session must have no entries"


async def _clock(product: Any, deadline: Deadline, clock: ManualClock) -> None:
    if isinstance(product, DomainClock):
        now = product.now()
        assert now.tzinfo is not None and now.utcoffset() == timedelta(0), (
            f"now() must be an aware UTC datetime, got {now!r}"
        )
        assert isinstance(product.timezone(), str) and product.timezone()
    if isinstance(product, InfraClock):
        first, second = product.monotonic(), product.monotonic()
        assert isinstance(first, float) and second >= first, "monotonic() must never go back"


async def _secret_policy(product: Any, deadline: Deadline, clock: ManualClock) -> None:
    clean = "The user prefers green tea in the morning."
    assert list(product.find(clean)) == [], "a clean text has no findings"
    assert product.redact(clean) == clean and product.check_write(clean) == clean
    probe = "key AKIAIOSFODNN7EXAMPLE and password=hunter2hunter2 end"
    findings = list(product.find(probe))
    assert findings == sorted(findings, key=lambda finding: finding.start)
    for before, after in itertools.pairwise(findings):
        assert before.end <= after.start, "findings must not overlap"
    redacted = product.redact(probe)
    for finding in findings:
        assert 0 <= finding.start < finding.end <= len(probe)
        assert probe[finding.start : finding.end] not in redacted, "redact() left a finding"


SMOKE_CHECKS: Mapping[str, Smoke] = {
    "embedding_provider": _embedding_provider,
    "text_provider": _text_provider,
    "vector_store": _vector_store,
    "claim_store": _claim_store,
    "cursor_store": _cursor_store,
    "extractor": _extractor,
    "tape": _tape,
    "clock": _clock,
    "secret_policy": _secret_policy,
}
assert set(SMOKE_CHECKS) == set(PORT_FAMILIES), "every plugin family needs a smoke check"


async def _close(product: Any) -> None:
    closer = getattr(product, "aclose", None)
    if callable(closer):
        await closer()
        await closer()  # idempotent, as every port with aclose promises
        return
    closer = getattr(product, "close", None)
    if callable(closer):
        closer()


async def _smoke(product: Any, family: str, clock: ManualClock, seconds: float) -> None:
    try:
        deadline = Deadline.after(REAL_TIME, seconds)
        # The deadline asks the product to stop; wait_for stops a product that ignores it.
        await asyncio.wait_for(SMOKE_CHECKS[family](product, deadline, clock), seconds)
    finally:
        await _close(product)
