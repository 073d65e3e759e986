"""The on-disk names of one agent's vector store, and the open decision read from names alone.

Format and state are decided from which files exist — no file is opened to find out (reference
§6): the v2 store `<stem>.v2.duckdb`, its WAL, the staging file `<stem>.v2.duckdb.migrating`
(never a commit point), the quarantine marker `<stem>.v2.duckdb.quarantine`, the scrub marker
`<stem>.v2.duckdb.scrub` (rows were deleted since the file was last rewritten), the warm-up
snapshot `<stem>.v2.snapshot` (see `snapshot`) and its temporary, and the legacy v1 store
`<stem>.duckdb`. The agent id is escaped into a file-name stem, so any id is safe and two
ids never share files.
"""

from __future__ import annotations

import contextlib
import enum
import logging
import os
from pathlib import Path
from urllib.parse import quote

import attrs

from memory_core.domain.errors import ValidationError

__all__ = ["OpenStep", "StoreFiles", "file_stem", "fsync_directory", "plan_open", "remove_quietly"]

_log = logging.getLogger(__name__)

# DuckDB keeps its write-ahead log next to the database as `<file>.wal`.
WAL_SUFFIX = ".wal"
MAX_AGENT_ID_LENGTH = 512


def file_stem(agent_id: str) -> str:
    """The agent id as a file-name stem: unreserved characters kept, everything else %-escaped.

    Percent-escaping is injective, so distinct ids never map to one stem; a leading dot is
    escaped too so no stem is hidden, `.` or `..`.
    """
    if not isinstance(agent_id, str) or not agent_id:
        raise ValidationError("agent_id", "must be a non-empty string")
    if len(agent_id) > MAX_AGENT_ID_LENGTH:
        raise ValidationError("agent_id", f"longer than {MAX_AGENT_ID_LENGTH} characters")
    stem = quote(agent_id, safe="")
    if stem.startswith("."):
        stem = "%2E" + stem[1:]
    return stem


@attrs.frozen(kw_only=True)
class StoreFiles:
    """Every path that belongs to one agent's vector store under `root`."""

    root: Path
    agent_id: str

    @property
    def stem(self) -> str:
        return file_stem(self.agent_id)

    @property
    def v2(self) -> Path:
        return self.root / f"{self.stem}.v2.duckdb"

    @property
    def v2_wal(self) -> Path:
        return _wal(self.v2)

    @property
    def staging(self) -> Path:
        return self.root / f"{self.stem}.v2.duckdb.migrating"

    @property
    def staging_wal(self) -> Path:
        return _wal(self.staging)

    @property
    def marker(self) -> Path:
        return self.root / f"{self.stem}.v2.duckdb.quarantine"

    @property
    def scrub(self) -> Path:
        return self.root / f"{self.stem}.v2.duckdb.scrub"

    @property
    def snapshot(self) -> Path:
        return self.root / f"{self.stem}.v2.snapshot"

    @property
    def snapshot_tmp(self) -> Path:
        return self.root / f"{self.stem}.v2.snapshot.tmp"

    @property
    def v1(self) -> Path:
        return self.root / f"{self.stem}.duckdb"

    @property
    def v1_wal(self) -> Path:
        return _wal(self.v1)

    def store_files(self) -> tuple[Path, ...]:
        """Every data file of the agent, the marker excluded (step 0 deletes the marker last)."""
        return (
            self.v2,
            self.v2_wal,
            self.staging,
            self.staging_wal,
            self.scrub,
            self.snapshot,
            self.snapshot_tmp,
            self.v1,
            self.v1_wal,
        )

    def mark_scrub(self) -> None:
        """Persist that deleted rows await a rewrite, before deleting them: DuckDB frees a
        deleted row's blocks without zeroing them, so its id stays readable in the file
        until `compact` rewrites it (R-PRIV-3). Content-free: the file is empty."""
        if self.scrub.exists():
            return
        with open(self.scrub, "wb") as handle:
            os.fsync(handle.fileno())
        fsync_directory(self.root)

    def write_marker(self, reason: str) -> None:
        """Persist the quarantine marker; the next open (step 0) wipes and republishes."""
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.marker, "w", encoding="utf-8") as handle:
            handle.write(reason + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        fsync_directory(self.root)


class OpenStep(enum.Enum):
    """What opening must do, decided from file names only (reference §6, steps 0–6)."""

    RECOVER_QUARANTINE = "recover-quarantine"  # 0: wipe every store file, then the marker
    OPEN_V2 = "open-v2"  # 2: the v2 file is authoritative, even with a residual WAL
    DISCARD_V1 = "discard-v1"  # 3: v1 with a WAL was mid-write; never opened, published empty
    MIGRATE_V1 = "migrate-v1"  # 4: v1 alone is preserved by a one-time migration
    PUBLISH_FRESH = "publish-fresh"  # 6: nothing usable exists


def plan_open(files: StoreFiles) -> OpenStep:
    """The open decision. Staging files (step 1) and an orphan v2 WAL (step 5) are always
    garbage; the opener deletes them whatever the step."""
    if files.marker.exists():
        return OpenStep.RECOVER_QUARANTINE
    if files.v2.exists():
        return OpenStep.OPEN_V2
    if files.v1.exists():
        return OpenStep.DISCARD_V1 if files.v1_wal.exists() else OpenStep.MIGRATE_V1
    return OpenStep.PUBLISH_FRESH


def remove_quietly(*paths: Path) -> None:
    """Best-effort delete; a file that is already gone is fine, other failures are logged."""
    for path in paths:
        try:
            path.unlink(missing_ok=True)
        except OSError as exc:
            _log.warning("could not remove %s: %s", path.name, type(exc).__name__)


def fsync_directory(directory: Path) -> None:
    """Make a rename or unlink in `directory` durable (a no-op where directories can't sync)."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _wal(path: Path) -> Path:
    return path.with_name(path.name + WAL_SUFFIX)
