"""HTTP embedders against a real loopback server: shapes, retries, faults (R-PROV-6, R-PROV-5)."""

from __future__ import annotations

import asyncio
import socket
import time

import pytest
from httpx_loopback import VECTORS, Loopback, drop, json_reply, partial, raw, stall

from memory_adapters.clocks import MonotonicClock
from memory_adapters.httpx_providers import OllamaEmbedder, OpenAICompatibleEmbedder
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import (
    DeadlineExceeded,
    OperationCancelled,
    ProviderResponseError,
    ProviderUnavailable,
    ValidationError,
)
from memory_core.ports.providers import EmbeddingPurpose

CLOCK = MonotonicClock()
KEY = "loop-key-8d1f0c2b"


@pytest.fixture
def server():
    with Loopback() as loopback:
        yield loopback


def embed(provider, texts, seconds: float = 10.0, cancel: CancellationToken | None = None):
    async def run():
        try:
            return await provider.embed(
                texts,
                purpose=EmbeddingPurpose.BATCH,
                deadline=Deadline.after(CLOCK, seconds),
                cancel=cancel or CancellationToken(),
            )
        finally:
            await provider.aclose()

    return asyncio.run(run())


def openai(server, suffix: str = "", **kwargs):
    return OpenAICompatibleEmbedder(
        base_url=server.url + suffix, model="bge-small", api_key=KEY, **kwargs
    )


def ollama(server, **kwargs):
    return OllamaEmbedder(base_url=server.url, model="nomic-embed-text", **kwargs)


# --- request and answer shapes ------------------------------------------------------------
@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/v1/"])
def test_openai_compatible_posts_to_v1_embeddings_with_or_without_v1(server, suffix) -> None:
    """R-PROV-6: base URLs of vLLM, llama.cpp, LM Studio and OpenAI come both ways."""
    vectors = embed(openai(server, suffix), ["a", "b"])
    (request,) = server.requests
    assert request.path == "/v1/embeddings"
    assert request.body == {"model": "bge-small", "input": ["a", "b"]}
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert [tuple(v) for v in vectors] == [VECTORS.vector("a"), VECTORS.vector("b")]


def test_openai_compatible_orders_vectors_by_their_index(server) -> None:
    server.then(
        json_reply(
            {"data": [{"index": 1, "embedding": [0.0, 1.0]}, {"index": 0, "embedding": [1.0, 0.0]}]}
        )
    )
    assert embed(openai(server), ["first", "second"]) == [[1.0, 0.0], [0.0, 1.0]]


def test_configured_dimensions_are_requested_and_enforced(server) -> None:
    """R-PROV-4: `dimensions` is sent; an answer of another size is refused."""
    with pytest.raises(ProviderResponseError, match="inconsistent dimension"):
        embed(openai(server, dimensions=8), ["a"])  # the server answers with 12
    assert server.requests[0].body["dimensions"] == 8


def test_ollama_posts_to_api_embed_without_an_authorization_header(server) -> None:
    """R-PROV-6: Ollama's /api/embed; no key configured, no header sent."""
    vectors = embed(ollama(server), ["x"])
    (request,) = server.requests
    assert request.path == "/api/embed"
    assert request.body == {"model": "nomic-embed-text", "input": ["x"]}
    assert "authorization" not in request.headers
    assert tuple(vectors[0]) == VECTORS.vector("x")


def test_ollama_accepts_a_base_url_ending_in_api(server) -> None:
    embed(OllamaEmbedder(base_url=server.url + "/api/", model="m"), ["x"])
    assert server.requests[0].path == "/api/embed"


def test_dimension_discovery_embeds_one_probe_and_is_cached(server) -> None:
    provider = ollama(server)

    async def run():
        deadline = Deadline.after(CLOCK, 10)
        first = await provider.dimensions(deadline=deadline, cancel=CancellationToken())
        second = await provider.dimensions(deadline=deadline, cancel=CancellationToken())
        await provider.aclose()
        return first, second

    assert asyncio.run(run()) == (12, 12)
    assert len(server.requests) == 1


def test_one_pooled_connection_serves_consecutive_requests(server) -> None:
    """R-PROV-6: one shared AsyncClient per provider with keep-alive connections."""
    provider = openai(server)

    async def run():
        for text in ("a", "b", "c"):
            await provider.embed(
                [text],
                purpose=EmbeddingPurpose.BATCH,
                deadline=Deadline.after(CLOCK, 10),
                cancel=CancellationToken(),
            )
        await provider.aclose()

    asyncio.run(run())
    assert len({request.client_port for request in server.requests}) == 1


# --- faults ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("reply", "match"),
    [
        (json_reply({"data": [{"index": 0, "embedding": [1.0]}]}), "1 vectors for 2 texts"),
        (raw("{not json"), "not valid JSON"),
        (json_reply({"result": []}), "no 'data'"),
        (json_reply({"data": [{"embedding": "AAAA"}] * 2}), "base64"),
        (json_reply({"data": [{"embedding": [1.0]}, {"embedding": [1.0, 2.0]}]}), "dimension"),
        (json_reply({"data": [{"embedding": [True]}, {"embedding": [1.0]}]}), "non-number"),
        (raw('{"data": [{"embedding": [NaN]}, {"embedding": [1.0]}]}'), "non-finite"),
        (
            json_reply(
                {"data": [{"index": 0, "embedding": [1.0]}, {"index": 5, "embedding": [1.0]}]}
            ),
            "indexes",
        ),
    ],
    ids=["count", "malformed", "shape", "base64", "dimension", "bool", "nan", "index"],
)
def test_an_unusable_answer_is_a_response_error_and_is_not_retried(server, reply, match) -> None:
    """R-PROV-4: wrong count, shape, dimension or values never pass as vectors."""
    server.then(reply)
    with pytest.raises(ProviderResponseError, match=match):
        embed(openai(server), ["a", "b"])
    assert len(server.requests) == 1


def test_a_dimension_change_between_calls_is_refused(server) -> None:
    """R-PROV-4: a provider that starts answering in another dimension is an error."""
    provider = ollama(server)

    async def run():
        deadline = Deadline.after(CLOCK, 10)
        await provider.embed(
            ["a"], purpose=EmbeddingPurpose.BATCH, deadline=deadline, cancel=CancellationToken()
        )
        server.then(json_reply({"embeddings": [[1.0, 2.0]]}))
        try:
            await provider.embed(
                ["b"], purpose=EmbeddingPurpose.BATCH, deadline=deadline, cancel=CancellationToken()
            )
        finally:
            await provider.aclose()

    with pytest.raises(ProviderResponseError, match="inconsistent dimension: 2 instead of 12"):
        asyncio.run(run())


def test_429_with_retry_after_is_retried_once_within_the_deadline(server) -> None:
    """Embeddings are idempotent: one retry after 429, honouring Retry-After."""
    server.then(json_reply({"error": {"message": "slow down"}}, 429, Retry_After="0"))
    assert len(embed(openai(server), ["a"])) == 1
    assert len(server.requests) == 2


def test_a_retry_after_beyond_the_deadline_fails_at_once(server) -> None:
    """A wait that cannot fit in the deadline is not attempted."""
    server.then(json_reply({"error": {"message": "slow down"}}, 429, Retry_After="120"))
    started = time.monotonic()
    with pytest.raises(ProviderUnavailable, match="HTTP 429: slow down"):
        embed(openai(server), ["a"], seconds=5)
    assert time.monotonic() - started < 10  # far from the 120 s the server asked for
    assert len(server.requests) == 1


@pytest.mark.parametrize("status", [502, 503, 504])
def test_gateway_statuses_are_retried_once_then_reported(server, status) -> None:
    server.then(json_reply({}, status), json_reply({}, status))
    with pytest.raises(ProviderUnavailable, match=f"HTTP {status}"):
        embed(openai(server), ["a"])
    assert len(server.requests) == 2


def test_500_is_unavailable_and_not_retried(server) -> None:
    server.then(json_reply({"error": "model crashed"}, 500))
    with pytest.raises(ProviderUnavailable, match="HTTP 500: model crashed"):
        embed(ollama(server), ["a"])
    assert len(server.requests) == 1


def test_4xx_is_a_response_error_without_the_key(server) -> None:
    """R-PROV-5: an error echoing the key (bare, unrecognisable by pattern) is scrubbed."""
    server.then(json_reply({"error": {"message": f"Incorrect key: {KEY} for model x"}}, 401))
    with pytest.raises(ProviderResponseError) as caught:
        embed(openai(server), ["a"])
    assert "HTTP 401" in str(caught.value)
    assert KEY not in str(caught.value) and KEY not in repr(caught.value)
    assert len(server.requests) == 1


@pytest.mark.parametrize("fault", [drop, partial], ids=["before-response", "mid-response"])
def test_a_dropped_connection_is_retried_once_for_embeddings(server, fault) -> None:
    """A closed socket is a transport failure; embeddings may safely be sent again."""
    server.then(fault())
    assert len(embed(openai(server), ["a"])) == 1
    assert len(server.requests) == 2


def test_a_connection_dropped_twice_is_unavailable(server) -> None:
    server.then(partial(), partial())
    with pytest.raises(ProviderUnavailable, match="RemoteProtocolError"):
        embed(openai(server), ["a"])


def test_nothing_listening_is_unavailable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    provider = OpenAICompatibleEmbedder(base_url=f"http://127.0.0.1:{port}", model="m")
    with pytest.raises(ProviderUnavailable, match="ConnectError"):
        embed(provider, ["a"])


def test_a_slow_server_raises_deadline_exceeded_near_the_deadline(server) -> None:
    """R-ARCH-6: the deadline becomes the request's timeout; no waiting for the server."""
    server.then(stall())
    started = time.monotonic()
    with pytest.raises(DeadlineExceeded):
        embed(openai(server), ["a"], seconds=0.3)
    assert time.monotonic() - started < 5  # the server would never answer


def test_a_timeout_cap_shorter_than_the_deadline_applies(server) -> None:
    server.then(stall())
    started = time.monotonic()
    with pytest.raises(DeadlineExceeded):
        embed(openai(server, timeout_cap=0.2), ["a"], seconds=20)
    assert time.monotonic() - started < 10  # far below the 20 s deadline


def test_cancelling_the_token_aborts_the_request(server) -> None:
    """R-PROV-3: cancellation reaches the HTTP request; the caller is answered at once."""
    server.then(stall())

    async def run():
        token = CancellationToken()
        asyncio.get_running_loop().call_later(0.1, token.cancel)
        provider = openai(server)
        started = time.monotonic()
        try:
            await provider.embed(
                ["a"],
                purpose=EmbeddingPurpose.QUERY,
                deadline=Deadline.after(CLOCK, 20),
                cancel=token,
            )
        except OperationCancelled:
            return time.monotonic() - started
        finally:
            await provider.aclose()
        pytest.fail("the call was not cancelled")

    assert asyncio.run(run()) < 1.0


def test_a_closed_provider_refuses_calls(server) -> None:
    provider = openai(server)

    async def run():
        await provider.aclose()
        await provider.embed(
            ["a"],
            purpose=EmbeddingPurpose.BATCH,
            deadline=Deadline.after(CLOCK, 5),
            cancel=CancellationToken(),
        )

    with pytest.raises(ProviderUnavailable, match="closed"):
        asyncio.run(run())


# --- configuration ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"base_url": "ftp://host", "model": "m"}, "base_url"),
        ({"base_url": "http://", "model": "m"}, "base_url"),
        ({"base_url": "http://h?key=1", "model": "m"}, "base_url"),
        ({"base_url": "http://h", "model": " "}, "model"),
        ({"base_url": "http://h", "model": "m", "dimensions": 0}, "dimensions"),
        ({"base_url": "http://h", "model": "m", "timeout_cap": 0}, "timeout_seconds"),
        ({"base_url": "http://h", "model": "m", "api_key": "two\nlines"}, "api_key"),
    ],
)
def test_bad_construction_arguments_name_the_field(kwargs, field) -> None:
    with pytest.raises(ValidationError) as caught:
        OpenAICompatibleEmbedder(**kwargs)
    assert caught.value.field == field


def test_the_repr_shows_model_and_host_but_no_key_or_user_info() -> None:
    """R-PROV-5."""
    provider = OpenAICompatibleEmbedder(
        base_url="https://user:hunter2@api.example:8443/v1", model="m", api_key=KEY
    )
    text = repr(provider)
    assert "api.example:8443/v1" in text and "'m'" in text
    assert KEY not in text and "hunter2" not in text
