"""One agent's open v2 store: its connection, identity, generation and resident matrix.

The methods here are blocking and run in guard worker threads, one at a time per agent (the
store's per-agent lock). Writes are batched: one transaction per upsert batch, the smallest
batches through DuckDB's appender and the rest as a registered numpy scan (measured in
`benchmarks/vectors.py`; row-at-a-time inserts manage about 1k rows/s). Once warm, every
committed change is applied to the resident matrix in the same worker call, so the durable
store and the scanned matrix never disagree. A file-backed store warms from its snapshot
when one matches the file (see `snapshot`) and removes it before its first change.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Sequence

import duckdb
import numpy as np

from memory_core.domain.claims import EmbeddingIdentity
from memory_core.ports.vectors import ReadyCertificate

from . import snapshot
from .files import StoreFiles
from .guard import AbortFlag
from .matrix import ResidentMatrix
from .schema import FILE_MEMORY_LIMIT
from .validation import normalise_in_place, unit_rows, usable_rows

__all__ = ["AgentStore"]

_log = logging.getLogger(__name__)

# Above this many rows a batch is written as one registered numpy scan; below it the
# appender wins. The appender converts every float into a DuckDB value (~0.12 ms a row:
# 12.5 ms for a drain batch of 100 × 384); the scan of an object column of row arrays pays
# ~0.7 ms more per call and ~0.04 ms a row (6.5 ms for 100, 38 ms for 1000 against 106 ms,
# CPU medians with the delete and commit; crossover near 20 rows).
APPENDER_MAX_ROWS = 16
# Rows per rowid-range page when reading the matrix into memory.
READ_PAGE_ROWS = 16_384

# `= ANY(list)` probes the key index; `IN (SELECT unnest(list))` joins against a full scan
# (measured at 1M rows: 3.9 ms against 33 ms for 50 ids).
_DELETE = "DELETE FROM memory_vector WHERE memory_id = ANY(?::VARCHAR[])"
_view_names = itertools.count()


class AgentStore:
    """An open namespace. `matrix` is None until the first warm-up reads it into memory."""

    def __init__(
        self,
        conn: duckdb.DuckDBPyConnection,
        identity: EmbeddingIdentity,
        generation: int,
        *,
        files: StoreFiles | None = None,
    ) -> None:
        self.conn = conn
        # None for an in-memory database: no scrub marker, no snapshot.
        self.files = files
        self._snapshot_dropped = False
        self.identity = identity
        self.generation = generation
        self.matrix: ResidentMatrix | None = None
        self.certificate: ReadyCertificate | None = None

    def interrupt(self) -> None:
        self.conn.interrupt()

    def close(self) -> None:
        self.certificate = None
        self.matrix = None
        self.conn.close()

    def write(self, ids: list[str], rows: np.ndarray, abort: AbortFlag) -> None:
        """Replace-or-insert one batch in one transaction, then mirror it in the matrix."""
        abort.check()
        self._before_change()
        conn = self.conn
        try:
            # Inside the try: an interrupt that lands in BEGIN itself may leave the
            # transaction open, and it must be rolled back like any other.
            conn.execute("BEGIN")
            conn.execute(_DELETE, [ids])
            abort.check()
            if len(ids) <= APPENDER_MAX_ROWS:
                appender = conn.appender("memory_vector")
                appender.append_rows(zip(ids, rows, strict=True))
                appender.flush()
            else:
                self._insert_registered(ids, rows)
            abort.check()
            conn.execute("COMMIT")
        except BaseException:
            _rollback(conn)
            raise
        if self.matrix is not None:
            self.matrix.upsert(ids, unit_rows(rows))

    def delete(self, ids: Sequence[str], abort: AbortFlag) -> list[str]:
        """Delete by id in one statement; returns the ids that were present."""
        abort.check()
        if self.files is not None:
            self.files.mark_scrub()
        self._before_change()
        deleted = [
            row[0]
            for row in self.conn.execute(_DELETE + " RETURNING memory_id", [list(ids)]).fetchall()
        ]
        if self.matrix is not None:
            self.matrix.remove(deleted)
        return deleted

    def list_ids(self, abort: AbortFlag) -> list[str]:
        abort.check()
        if self.matrix is not None:
            return self.matrix.ids()
        result = self.conn.execute(
            "SELECT memory_id FROM memory_vector ORDER BY memory_id"
        ).fetchnumpy()
        return [str(claim_id) for claim_id in result["memory_id"].tolist()]

    def read_matrix(self, abort: AbortFlag) -> tuple[ResidentMatrix, list[str]]:
        """Every stored vector as a resident matrix, plus the ids of unusable stored rows
        (non-finite or zero), which are left out of the matrix. From the snapshot when one
        matches the file (its rows were unit rows of a matrix already), else from DuckDB."""
        found = None if self.files is None else snapshot.validate(self.files)
        if found is not None and found.identity == self.identity:

            def fill(rows: np.ndarray) -> list[str]:
                assert found is not None
                return snapshot.load(found, rows, abort)

            try:
                return ResidentMatrix.filled(self.identity.dim, found.count, fill), []
            except (OSError, ValueError) as exc:
                _log.warning(
                    "vector snapshot unreadable (%s): reading the store", type(exc).__name__
                )
        if self.files is not None:
            snapshot.drop(self.files)
        conn = self.conn
        count, high = conn.execute(
            "SELECT count(*), coalesce(max(rowid), -1) FROM memory_vector"
        ).fetchall()[0]
        # Headroom, so the first upserts after warm-up do not copy the whole matrix to grow.
        matrix = ResidentMatrix(self.identity.dim, capacity=int(count) + int(count) // 16)
        unusable: list[str] = []
        for low in range(0, int(high) + 1, READ_PAGE_ROWS):
            abort.check()
            page = conn.execute(
                "SELECT memory_id, embedding FROM memory_vector WHERE rowid >= ? AND rowid < ?",
                [low, low + READ_PAGE_ROWS],
            ).fetchnumpy()
            ids = [str(claim_id) for claim_id in page["memory_id"].tolist()]
            if not ids:
                continue
            rows = _stack(page["embedding"], self.identity.dim)
            usable = usable_rows(rows)
            unusable.extend(ids[i] for i in np.flatnonzero(~usable))
            if usable.all():
                matrix.upsert(ids, normalise_in_place(rows))
            else:
                keep = np.flatnonzero(usable)
                matrix.upsert([ids[i] for i in keep], unit_rows(rows[keep]))
        self._release_read_pages()
        return matrix, unusable

    def _before_change(self) -> None:
        """The snapshot describes the file as it was opened: it goes, durably, before the
        first change, so no crash can leave it beside a file it no longer matches."""
        if self.files is not None and not self._snapshot_dropped:
            snapshot.drop(self.files)
            self._snapshot_dropped = True

    def _release_read_pages(self) -> None:
        """Reading every page left them in DuckDB's buffer pool (up to FILE_MEMORY_LIMIT): a
        second resident copy of the matrix just built (2.9x the raw matrix at 100k). Lowering
        the limit for a moment evicts them; a file-backed database re-reads pages on demand.
        An in-memory database keeps its data in that pool and is left alone."""
        (path,) = self.conn.execute(
            "SELECT path FROM duckdb_databases() WHERE database_name = current_database()"
        ).fetchall()[0]
        if path:
            self.conn.execute(f"SET memory_limit = '{_RELEASE_LIMIT}'")
            self.conn.execute(f"SET memory_limit = '{FILE_MEMORY_LIMIT}'")

    def _insert_registered(self, ids: list[str], rows: np.ndarray) -> None:
        # An object column holding each row's float32 array (views, no copy) is read as one
        # list per row and cast to FLOAT[dim]: the values are bound in bulk, not one by one
        # (and not as `dim` columns reassembled by `array_value`, ~15 ms of fixed cost).
        suffix = next(_view_names)
        view = f"vector_rows_{suffix}"
        arrays = np.empty(len(ids), dtype=object)
        arrays[:] = list(rows)
        self.conn.register(view, {"memory_id": np.asarray(ids, dtype=object), "row": arrays})
        try:
            self.conn.execute(
                f"INSERT INTO memory_vector SELECT memory_id, row::FLOAT[{self.identity.dim}] "
                f"FROM {view}"
            )
        finally:
            self.conn.unregister(view)


# Low enough to evict every unpinned page, high enough for the statement that sets it.
_RELEASE_LIMIT = "16MB"


def _stack(column: np.ndarray, dim: int) -> np.ndarray:
    """Per-row arrays from `fetchnumpy()` as one float32 matrix; a NULL row becomes NaN."""
    values = column.tolist()
    try:
        return np.stack(values).astype(np.float32, copy=False)
    except (TypeError, ValueError):
        rows = np.full((len(values), dim), np.nan, dtype=np.float32)
        for position, value in enumerate(values):
            if value is not None:
                rows[position] = value
        return rows


# The guard re-interrupts an overrunning call every 20 ms until it settles, so the ROLLBACK
# of an interrupted write can itself be interrupted; it is retried, or the connection stays
# in an aborted transaction and every later call fails (seen under load).
_ROLLBACK_ATTEMPTS = 100


def _rollback(conn: duckdb.DuckDBPyConnection) -> None:
    for _ in range(_ROLLBACK_ATTEMPTS):
        try:
            conn.execute("ROLLBACK")
        except duckdb.InterruptException:
            continue
        except duckdb.Error:
            return  # no transaction left: the interrupted statement already ended it
        return
