"""`JsonlTape`: a tape kept in one append-only JSON Lines file (format: docs/tape-format.md).

One JSON object per line, UTF-8, each line ending in "\\n":

    {"id":"m-1","session":"s1","order_seq":1,"role":"user","content":"I moved to Lisbon.",
     "status":"sent","kind":"message"}
    {"id":"r-3","session":"s1","kind":"replacement","message_id":"m-1","content":"…"}
    {"id":"x-4","session":"s1","kind":"retraction","message_id":"m-1"}
    {"id":"a-5","session":"s1","kind":"anchor","anchor_kind":"memory/view_assembled",
     "agent_id":"agent-1","message_id":"m-1","payload":{"selected":["c1"]}}

(shown wrapped; a real line is one line). Messages carry `kind` "message" or "compaction";
replacements, retractions and anchors refer to a message by `message_id`. Ids are unique
across the file; a message's `order_seq` increases within its session. Blank lines are
skipped.

Durability: every append is one `write` of whole lines followed by `fsync`. A crash can
leave only the last line torn; readers ignore an unterminated last line that is not a
complete JSON value, and the next append truncates it before writing. Any other malformed
line is an error naming its line number (`TapeFormatError`), never silently skipped.

One writing process at a time; other processes may read the file while it grows — each
call first takes in the lines appended since the last one. The ingestion projection is
held in memory and rebuilt from the file when it is opened.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path

from memory_adapters.tapes.base import EventTape
from memory_adapters.tapes.events import TapeEvent
from memory_adapters.tapes.jsonl_format import TapeFormatError, format_event, parse_line
from memory_core.domain.errors import AgentMemoryError, StoreError

__all__ = ["JsonlTape", "TapeFormatError"]

_log = logging.getLogger(__name__)
_READ_BLOCK = 1 << 20


class JsonlTape(EventTape):
    """All four tape ports plus the host writes of `EventTape`, persisted to `path`."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__()
        self._path = Path(path)
        self._offset = 0  # bytes of the file taken into the state
        self._lines = 0  # physical lines taken in, for error messages
        self._terminated = True  # whether the bytes taken in end with "\n"
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            created = not self._path.exists()
            flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
            self._fd: int | None = os.open(self._path, flags, 0o600)
            if created:
                _fsync_directory(self._path.parent)
        except OSError as exc:
            raise StoreError(f"cannot open tape file: {type(exc).__name__}") from exc
        try:
            with self._lock:
                self._refresh()
        except BaseException:
            self.close()
            raise

    @property
    def path(self) -> Path:
        return self._path

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> JsonlTape:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # --- hooks of EventTape --------------------------------------------------------------
    def _refresh(self) -> None:
        fd = self._require_open()
        try:
            size = os.fstat(fd).st_size
            if size < self._offset:
                raise StoreError(f"{self._path.name} shrank under the tape; reopen it")
            data = _read_from(fd, self._offset, size)
        except OSError as exc:
            raise StoreError(f"cannot read tape file: {type(exc).__name__}") from exc
        start = 0
        while (end := data.find(b"\n", start)) != -1:
            self._take_line(data[start:end], end + 1 - start)
            self._terminated = True
            start = end + 1
        tail = data[start:]
        if tail and _is_complete_json(tail):
            # The last line lacks only its newline (a hand-written file): it is whole.
            self._take_line(tail, len(tail))
            self._terminated = False

    def _persist(self, events: Sequence[TapeEvent]) -> None:
        fd = self._require_open()
        data = b"".join(format_event(event) for event in events)
        if not self._terminated:
            data = b"\n" + data  # end the newline-less last line before ours
        try:
            if os.fstat(fd).st_size > self._offset:
                # Only a torn last line is left unread by `_refresh`; as the one writer we
                # drop it, or our first line would be glued to it and the file corrupted.
                _log.warning("truncating a torn last line of %s", self._path.name)
                os.ftruncate(fd, self._offset)
            _write_all(fd, data)
            os.fsync(fd)
        except OSError as exc:
            raise StoreError(f"cannot append to tape file: {type(exc).__name__}") from exc
        self._offset += len(data)
        self._lines += len(events)
        self._terminated = True

    # --- helpers -------------------------------------------------------------------------
    def _take_line(self, raw: bytes, length: int) -> None:
        number = self._lines + 1
        if raw.strip():
            try:
                event = parse_line(raw.decode("utf-8"), self._state.last_seq + 1)
                self._state.check(event)
            except UnicodeDecodeError:
                raise TapeFormatError(self._path.name, number, "not UTF-8") from None
            except AgentMemoryError as exc:
                raise TapeFormatError(self._path.name, number, str(exc)) from None
            self._state.apply(event)
        self._lines = number
        self._offset += length

    def _require_open(self) -> int:
        if self._fd is None:
            raise StoreError("the tape file is closed")
        return self._fd


def _read_from(fd: int, offset: int, size: int) -> bytes:
    chunks: list[bytes] = []
    while offset < size:
        block = os.pread(fd, min(_READ_BLOCK, size - offset), offset)
        if not block:
            break
        chunks.append(block)
        offset += len(block)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _is_complete_json(raw: bytes) -> bool:
    # A JSON object has no proper prefix that is itself JSON, so a torn line never passes
    # this test, while a whole line missing only its newline does (and is then parsed as
    # strictly as any other line).
    try:
        json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return False
    return True


def _fsync_directory(directory: Path) -> None:
    # The new file's directory entry must reach the disk too, or a crash can lose the file.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
