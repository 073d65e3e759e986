"""The offline embedders: the MiniLM default and the deterministic hashing embedder."""

from __future__ import annotations

import asyncio
import math
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

from memory_adapters.local_embedder import HashingEmbedder, MiniLMEmbedder
from memory_adapters.local_embedder.wordpiece import WordPieceTokenizer
from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import (
    DeadlineExceeded,
    OperationCancelled,
    ProviderUnavailable,
    ValidationError,
)
from memory_core.ports.providers import EmbeddingProvider, EmbeddingPurpose

VOCAB = Path(__file__).parents[3] / "adapters" / "memory_adapters" / "local_embedder" / "vocab.txt"


def _embed(provider: EmbeddingProvider, texts: list[str], seconds: float = 30.0):
    from memory_adapters.clocks import MonotonicClock

    deadline = Deadline.after(MonotonicClock(), seconds)
    return asyncio.run(
        provider.embed(
            texts, purpose=EmbeddingPurpose.BATCH, deadline=deadline, cancel=CancellationToken()
        )
    )


def _cosine(a, b) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


def test_minilm_ranks_the_relevant_fact_first(minilm: MiniLMEmbedder) -> None:
    """R-PROV-6: the offline default embedder ranks a matching fact above an unrelated one."""
    query, berlin, cat = _embed(
        minilm,
        ["Where does the user live?", "I moved to Berlin last year", "The cat sleeps on the sofa"],
    )
    assert len(query) == 384
    assert math.isclose(math.sqrt(_cosine(query, query)), 1.0, rel_tol=1e-4)
    assert _cosine(query, berlin) > _cosine(query, cat) + 0.1


def test_minilm_loads_and_embeds_with_the_network_disabled(tmp_path: Path) -> None:
    """R-PROV-6: no network at run time — every socket is refused in the child process."""
    script = textwrap.dedent(
        """
        import asyncio, socket
        def refuse(*args, **kwargs):
            raise OSError("network disabled for this test")
        socket.socket.connect = refuse
        socket.socket.connect_ex = refuse
        socket.create_connection = refuse
        socket.getaddrinfo = refuse
        from memory_adapters.clocks import MonotonicClock
        from memory_adapters.local_embedder import MiniLMEmbedder
        from memory_core.domain.cancellation import CancellationToken, Deadline
        from memory_core.ports.providers import EmbeddingPurpose
        vectors = asyncio.run(MiniLMEmbedder().embed(
            ["offline"], purpose=EmbeddingPurpose.QUERY,
            deadline=Deadline.after(MonotonicClock(), 60), cancel=CancellationToken()))
        print(len(vectors[0]))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "384"


def test_minilm_refuses_a_model_file_that_fails_the_checksum(tmp_path: Path) -> None:
    """A tampered or truncated model file is refused, never run."""
    fake = tmp_path / "model.onnx"
    fake.write_bytes(b"not the pinned model")
    with pytest.raises(ProviderUnavailable, match="checksum"):
        _embed(MiniLMEmbedder(model_path=fake), ["text"])


def test_minilm_honours_an_expired_deadline_and_cancellation(minilm: MiniLMEmbedder) -> None:
    """R-PROV-3: the embedder stops at its deadline and on cancellation."""
    clock = ManualClock()
    expired = Deadline.after(clock, 1.0)
    clock.advance(2.0)
    with pytest.raises(DeadlineExceeded):
        asyncio.run(
            minilm.embed(
                ["x"], purpose=EmbeddingPurpose.QUERY, deadline=expired, cancel=CancellationToken()
            )
        )
    token = CancellationToken()
    token.cancel("host shut down")
    with pytest.raises(OperationCancelled):
        asyncio.run(
            minilm.embed(
                ["x"],
                purpose=EmbeddingPurpose.QUERY,
                deadline=Deadline.after(clock, 5),
                cancel=token,
            )
        )


def test_minilm_stops_a_long_batch_at_its_deadline(minilm: MiniLMEmbedder) -> None:
    """R-PROV-3: a run in flight is terminated when the deadline passes, not awaited."""
    texts = [f"sentence {i} about travel plans and preferences" for i in range(4000)]
    with pytest.raises(DeadlineExceeded):
        _embed(minilm, texts, seconds=0.05)


def test_wordpiece_matches_bert_ids_for_known_text() -> None:
    """The vendored tokenizer gives BERT-uncased ids (checked against HF tokenizers offline)."""
    tokenizer = WordPieceTokenizer(VOCAB)
    assert tokenizer.token_ids("Hello, world!") == [7592, 1010, 2088, 999]
    assert tokenizer.token_ids("Café") == tokenizer.token_ids("cafe")
    assert tokenizer.encode("x")[0] == tokenizer.cls_id
    assert len(tokenizer.encode("word " * 1000)) == 256


def test_hashing_embedder_is_deterministic_normalised_and_lexical() -> None:
    """The hashing embedder gives identical unit vectors for identical text."""
    embedder = HashingEmbedder(dimensions=128)
    first, again, related, other = _embed(
        embedder,
        [
            "resolveAgentCache3 in /workspace/api/config.yaml",
            "resolveAgentCache3 in /workspace/api/config.yaml",
            "config.yaml for the api workspace",
            "用户喜欢简洁的回答",
        ],
    )
    assert first == again
    assert math.isclose(_cosine(first, first), 1.0, rel_tol=1e-9)
    assert _cosine(first, related) > _cosine(first, other)
    assert len(_embed(embedder, ["?!"])[0]) == 128


def test_hashing_embedder_rejects_an_unusable_dimension() -> None:
    with pytest.raises(ValidationError, match="dimensions"):
        HashingEmbedder(dimensions=3)


def test_minilm_reads_a_long_text_past_its_first_window(minilm: MiniLMEmbedder) -> None:
    """Issue 14, R-READ-3: a fact after the first 254 word-pieces still shapes the vector
    (windows pooled), and the windows are bounded: a huge paste is read as far as
    MAX_WINDOWS windows of at most 256 ids each."""
    from memory_adapters.local_embedder.minilm import MAX_WINDOWS

    filler = "The quarterly planning meeting covered staffing and office logistics. " * 30
    tail = "Finally the team chose PostgreSQL as the database for the billing service."
    windows, unknown = minilm.windows(filler + tail)
    assert len(windows) >= 2 and unknown == 0.0
    assert all(len(window) <= 256 for window in windows)
    huge, _ = minilm.windows("word " * 100_000)
    assert len(huge) == MAX_WINDOWS

    question, document, head = _embed(
        minilm, ["which database did the billing service choose", filler + tail, filler]
    )
    # The head alone (the first window only, as before) lacks the answer.
    assert _cosine(question, document) > _cosine(question, head) + 0.03


def test_minilm_tells_unrelated_chinese_sentences_apart(minilm: MiniLMEmbedder) -> None:
    """Issue 14, R-READ-3: most Chinese characters are [UNK] to MiniLM; unrelated Chinese
    sentences used to score 0.43–0.50 (above the 0.2 floor). Blended with character n-grams
    by their unknown share, the related pair scores above the floor and the unrelated one
    below it, while English (no [UNK]) embeds exactly as the bare model does."""
    _, unknown = minilm.windows("用户喜欢在周末去爬山")
    assert unknown > 0.5
    query, related, unrelated = _embed(
        minilm, ["用户喜欢在周末做什么", "用户喜欢在周末去爬山。", "公司的报销流程需要经理签字。"]
    )
    assert _cosine(query, related) > 0.2 > _cosine(query, unrelated)
    assert minilm.windows("I like hiking on weekends")[1] == 0.0


_MIXED = [
    "ok",
    "I moved to Berlin last year and started a new job at a bakery near the river.",
    "用户喜欢在周末去爬山",
    "The quarterly planning meeting covered staffing and office logistics. " * 30,
    *(f"note {n}: the user prefers tea over coffee in the afternoon" for n in range(9)),
]


def test_minilm_runs_side_by_side_give_the_vectors_of_one_run() -> None:
    """Issue 15: sub-batches run on several cores at once embed every text as one inline
    run of the whole request does — long texts' windows, [UNK] blends and order included."""
    side_by_side = _embed(MiniLMEmbedder(threads=2, batch_size=2), _MIXED)
    inline = _embed(MiniLMEmbedder(threads=1, batch_size=64), _MIXED)
    assert len(side_by_side) == len(_MIXED)
    for a, b in zip(side_by_side, inline, strict=True):
        assert max(abs(x - y) for x, y in zip(a, b, strict=True)) < 1e-5


class _GatedSession:
    """Stands in for the onnxruntime session: each run waits at a gate, so a test sees how
    many run at once and can hold them."""

    def __init__(self, parties: int) -> None:
        self.together = threading.Barrier(parties, timeout=10)
        self.release = threading.Event()
        self.passed = 0  # runs through the barrier
        self._count = threading.Lock()

    def run(self, outputs, feeds, run_options):
        self.together.wait()  # breaks (BrokenBarrierError) unless `parties` run at once
        with self._count:
            self.passed += 1
        assert self.release.wait(10)
        ids = feeds["input_ids"]
        return [np.ones((*ids.shape, 384), dtype=np.float32)]


def _gated(threads: int) -> tuple[MiniLMEmbedder, _GatedSession]:
    embedder = MiniLMEmbedder(threads=threads, batch_size=1)
    embedder._load()  # the real session and the runs' threads, then the stand-in session
    gate = _GatedSession(threads)
    embedder._session = gate
    return embedder, gate


def test_minilm_runs_threads_sub_batches_at_once() -> None:
    """Issue 15: `threads` sub-batches are in the model together (each on its own core)."""
    embedder, gate = _gated(threads=2)
    gate.release.set()
    vectors = _embed(embedder, ["one", "two", "three", "four"])
    assert len(vectors) == 4
    assert not gate.together.broken


def test_minilm_closed_during_a_request_is_unavailable_not_a_refusal() -> None:
    """R-PROV-3: the runs not yet started when the embedder closes are dropped: the request fails as
    ProviderUnavailable (retried later), never as a refusal that would mark claims failed."""
    embedder, gate = _gated(threads=2)

    async def scenario() -> None:
        from memory_adapters.clocks import MonotonicClock

        call = asyncio.ensure_future(
            embedder.embed(
                ["one", "two", "three", "four"],
                purpose=EmbeddingPurpose.BATCH,
                deadline=Deadline.after(MonotonicClock(), 30),
                cancel=CancellationToken(),
            )
        )
        for _ in range(10_000):  # the two first runs are in; two more wait to start
            if gate.passed == 2 or call.done():
                break
            await asyncio.sleep(0.001)
        assert gate.passed == 2
        await embedder.aclose()
        gate.release.set()
        with pytest.raises(ProviderUnavailable, match="closed"):
            await call

    asyncio.run(scenario())
