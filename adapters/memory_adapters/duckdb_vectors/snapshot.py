"""A snapshot of one agent's resident matrix beside its DuckDB file, for a fast warm-up.

Reading 100k vectors back through DuckDB took 2.5 s and left a second copy in its buffer
pool and the allocator (issue 15); reading this file is one sequential `readinto` straight
into the matrix's preallocated rows. It holds what the v2 file holds — claim ids and floats
(the unit rows the scan uses), never text — and is written only from the resident matrix
when a namespace closes cleanly, so it has exactly the live rows (the forensic rule,
R-PRIV-3: a deleted row is in neither file).

It is an optimisation, never an authority. It is trusted only while the v2 file is exactly
the one it was written beside: the header records the identity, the row count and the v2
file's (inode, size, mtime), and there must be no WAL. Every path that changes the namespace
removes it first — the first write or delete after an open (`AgentStore`), a rebuild, a
compaction, a drop — so a kill after a change can never leave a stale snapshot that still
matches. Anything that does not match exactly is deleted and the warm-up reads DuckDB.

Layout: `AMVSNAP1`, a little-endian u32 header length, the JSON header, zero padding to a
64-byte boundary, `count × dim` little-endian float32 rows, then the ids as UTF-8 joined by
NUL (ids containing NUL are never snapshotted).
"""

from __future__ import annotations

import json
import logging
import os
import struct
from collections.abc import Sequence
from pathlib import Path

import attrs
import numpy as np

from memory_core.domain.claims import EmbeddingIdentity

from .files import StoreFiles, fsync_directory, remove_quietly
from .guard import AbortFlag

__all__ = ["FileStamp", "Snapshot", "drop", "load", "stamp_of", "validate", "write"]

_log = logging.getLogger(__name__)

MAGIC = b"AMVSNAP1"
_ALIGN = 64
# Rows per read or write between abort checks (about 24 MiB at 384 dimensions).
_CHUNK_ROWS = 16_384
_SEPARATOR = "\x00"


@attrs.frozen
class FileStamp:
    """What identifies one version of the v2 file without reading it."""

    inode: int
    size: int
    mtime_ns: int


def stamp_of(path: Path) -> FileStamp | None:
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return FileStamp(inode=stat.st_ino, size=stat.st_size, mtime_ns=stat.st_mtime_ns)


@attrs.frozen
class Snapshot:
    """A validated snapshot's header: where its rows start and how many there are."""

    path: Path
    identity: EmbeddingIdentity
    count: int
    rows_offset: int
    ids_length: int


def drop(files: StoreFiles) -> None:
    """Remove the snapshot (and a torn temporary), durably, before the namespace changes."""
    if files.snapshot.exists() or files.snapshot_tmp.exists():
        remove_quietly(files.snapshot, files.snapshot_tmp)
        fsync_directory(files.root)


def validate(files: StoreFiles) -> Snapshot | None:
    """The snapshot if it belongs to the v2 file as it is now; otherwise it is removed and
    None returned. Call before DuckDB opens the file (opening may replay a WAL)."""
    if not files.snapshot.exists():
        return None
    found = _read_header(files)
    if found is None:
        _log.info("vector snapshot %s does not match its store: removed", files.stem)
        drop(files)
    return found


def load(snapshot: Snapshot, rows: np.ndarray, abort: AbortFlag) -> list[str]:
    """Read the snapshot's rows into `rows[:count]` (C-contiguous float32) and return the ids."""
    count, dim = snapshot.count, snapshot.identity.dim
    target = rows[:count]
    if target.shape != (count, dim) or not target.flags.c_contiguous:
        raise ValueError("snapshot target rows do not fit")
    with open(snapshot.path, "rb") as handle:
        handle.seek(snapshot.rows_offset)
        view = memoryview(target).cast("B")
        done = 0
        while done < len(view):
            abort.check()
            read = handle.readinto(view[done : done + _CHUNK_ROWS * dim * 4])
            if not read:
                raise ValueError("vector snapshot is shorter than its header says")
            done += read
        blob = handle.read(snapshot.ids_length)
    ids = blob.decode("utf-8").split(_SEPARATOR) if count else []
    if len(ids) != count or len(set(ids)) != count:
        raise ValueError("vector snapshot ids do not match its header")
    return ids


def write(
    files: StoreFiles,
    identity: EmbeddingIdentity,
    ids: Sequence[str],
    rows: np.ndarray,
    abort: AbortFlag,
) -> bool:
    """Write the snapshot of a closed namespace (its v2 file final, no WAL): temporary
    file, fsync, rename. False when there is nothing to describe it by (no v2 file, a WAL
    left) or an id cannot be encoded; nothing is written then."""
    stamp = stamp_of(files.v2)
    if stamp is None or files.v2_wal.exists() or any(_SEPARATOR in claim_id for claim_id in ids):
        return False
    header = json.dumps(
        {
            "provider": identity.provider,
            "model": identity.model,
            "dim": identity.dim,
            "count": len(ids),
            "stamp": attrs.asdict(stamp),
        }
    ).encode("utf-8")
    blob = _SEPARATOR.join(ids).encode("utf-8")
    prefix = MAGIC + struct.pack("<I", len(header)) + header
    prefix += b"\x00" * (-len(prefix) % _ALIGN)
    body = np.ascontiguousarray(rows[: len(ids)], dtype="<f4")
    try:
        with open(files.snapshot_tmp, "wb") as handle:
            handle.write(prefix)
            for start in range(0, len(ids), _CHUNK_ROWS):
                abort.check()
                handle.write(memoryview(body[start : start + _CHUNK_ROWS]).cast("B"))
            handle.write(blob)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(files.snapshot_tmp, files.snapshot)
    except BaseException:
        remove_quietly(files.snapshot_tmp)
        raise
    fsync_directory(files.root)
    return True


def _read_header(files: StoreFiles) -> Snapshot | None:
    if files.v2_wal.exists():
        return None
    stamp = stamp_of(files.v2)
    try:
        with open(files.snapshot, "rb") as handle:
            if handle.read(len(MAGIC)) != MAGIC:
                return None
            (length,) = struct.unpack("<I", handle.read(4))
            header = json.loads(handle.read(length).decode("utf-8"))
            size = os.fstat(handle.fileno()).st_size
        identity = EmbeddingIdentity(
            provider=header["provider"], model=header["model"], dim=header["dim"]
        )
        count = header["count"]
        recorded = FileStamp(**header["stamp"])
    except (OSError, ValueError, KeyError, TypeError, struct.error):
        return None
    if recorded != stamp or type(count) is not int or count < 0 or type(identity.dim) is not int:
        return None
    rows_offset = len(MAGIC) + 4 + length
    rows_offset += -rows_offset % _ALIGN
    ids_offset = rows_offset + count * identity.dim * 4
    ids_length = size - ids_offset
    if ids_length < 0:
        return None
    return Snapshot(
        path=files.snapshot,
        identity=identity,
        count=count,
        rows_offset=rows_offset,
        ids_length=ids_length,
    )
