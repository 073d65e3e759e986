"""Message-aligned extraction chunks and fragments (reference §7.1).

Each extractable message is rendered `User: …` / `Assistant: …`; messages are packed whole
into chunks of at most `extraction_chunk_tokens` estimated tokens and
`extraction_chunk_code_points` code points (the rendered text, separators included). A
message too large for an empty chunk is split by code point, preferring a whitespace
boundary, into `User [fragment N]: …` pieces, one chunk each; its final fragment's chunk
goes on to take the following messages.

The cursor rule: a chunk's `cursor_commit_order_seq` is the highest order_seq *completed*
in it — a whole message, a final fragment, or a message that needs no extraction — so a
partially processed message never lets the cursor pass it. A chunk that ends mid-message
carries `resume`, the cursor position after it (the code points of that message done), so the
next pass starts at the following fragment instead of the first (R-WRITE-1); `chunk_messages`
resumes from such a position and stops after `max_chunks`, so a pass's work is bounded by its
chunk budget, not by the length of the message.

Not extracted, but passed over by the cursor: compaction markers, failed messages, system
and tool messages, blank messages. A pending (still streaming) message stops the plan: it
and everything after it wait for a later pass, so the cursor cannot skip it.
"""

from __future__ import annotations

import bisect
import itertools
import unicodedata
from collections.abc import Iterable
from datetime import datetime

import attrs

from memory_core.domain.errors import ValidationError
from memory_core.domain.tokens import is_cjk_like, token_weight
from memory_core.ports.cursor import CursorPosition
from memory_core.ports.tape import EntryKind, EntryRole, EntryStatus, TapeEntry
from memory_core.settings import CHUNK_MIN_CODE_POINTS, CHUNK_MIN_TOKENS, MemorySettings

__all__ = [
    "LABELS",
    "SEPARATOR",
    "Chunk",
    "ChunkLimits",
    "ChunkPart",
    "chunk_messages",
    "is_extractable",
    "split_chunk",
]

LABELS: dict[EntryRole, str] = {EntryRole.USER: "User", EntryRole.ASSISTANT: "Assistant"}
SEPARATOR = "\n\n"
# A whitespace cut is taken only in the back half of the window, so fragments stay large.
_WHITESPACE_WINDOW = 0.5
_JOINERS = frozenset("\u200c\u200d")


@attrs.frozen(kw_only=True)
class ChunkLimits:
    """Both ceilings of one chunk's rendered text."""

    max_tokens: int = attrs.field(validator=attrs.validators.instance_of(int))
    max_code_points: int = attrs.field(validator=attrs.validators.instance_of(int))

    def __attrs_post_init__(self) -> None:
        if self.max_tokens < CHUNK_MIN_TOKENS:
            raise ValidationError("max_tokens", f"must be >= {CHUNK_MIN_TOKENS}")
        if self.max_code_points < CHUNK_MIN_CODE_POINTS:
            raise ValidationError("max_code_points", f"must be >= {CHUNK_MIN_CODE_POINTS}")

    @classmethod
    def from_settings(cls, settings: MemorySettings) -> ChunkLimits:
        return cls(
            max_tokens=settings.extraction_chunk_tokens,
            max_code_points=settings.extraction_chunk_code_points,
        )

    @property
    def max_quarter_tokens(self) -> int:
        return 4 * self.max_tokens


@attrs.frozen(kw_only=True)
class ChunkPart:
    """A whole message (`fragment` None) or one fragment of it (`fragment` from 1)."""

    entry_id: str
    order_seq: int
    role: EntryRole
    text: str  # the message content, or this fragment's slice of it
    fragment: int | None = None
    final: bool = True  # the message's last piece: the message is complete after it
    created_at: datetime | None = None  # when the message was said, if the host knows

    def render(self) -> str:
        label = LABELS[self.role]
        if self.fragment is None:
            return f"{label}: {self.text}"
        return f"{label} [fragment {self.fragment}]: {self.text}"


@attrs.frozen(kw_only=True)
class Chunk:
    """One extraction unit: its text, where it came from, and how far it may move the cursor."""

    parts: tuple[ChunkPart, ...]
    covered_through_order_seq: int  # highest order_seq with anything in this chunk
    cursor_commit_order_seq: int | None  # highest order_seq completed here; None: no advance
    resume: CursorPosition | None = None  # ends mid-message: the position after this chunk
    text: str = attrs.field(init=False)

    @text.default
    def _render(self) -> str:
        return SEPARATOR.join(part.render() for part in self.parts)

    @property
    def source_entry_ids(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(part.entry_id for part in self.parts))

    @property
    def fragment_count(self) -> int:
        return sum(1 for part in self.parts if part.fragment is not None)


def is_extractable(entry: TapeEntry) -> bool:
    """Sent user/assistant messages with visible content; everything else is passed over."""
    return (
        entry.kind is EntryKind.MESSAGE
        and entry.status is EntryStatus.SENT
        and entry.role in LABELS
        and bool(entry.content.strip())
    )


def chunk_messages(
    entries: Iterable[TapeEntry],
    limits: ChunkLimits,
    *,
    start: CursorPosition | None = None,
    max_chunks: int | None = None,
) -> tuple[Chunk, ...]:
    """Pack `entries` (one session, order_seq ascending, all after `start.order_seq`) into
    chunks within `limits`, the first extractable message from `start.fragment_offset` on.
    At most `max_chunks` + 1 chunks are built (the one over says there is more). Nothing
    extractable yields no chunk."""
    start = start or CursorPosition()
    builder = _Builder(limits, start.order_seq, None if max_chunks is None else max_chunks + 1)
    offset = start.fragment_offset
    previous: TapeEntry | None = None
    for entry in entries:
        _check_order(previous, entry)
        previous = entry
        if entry.status is EntryStatus.PENDING or builder.full:
            break
        if not is_extractable(entry):
            builder.pass_over(entry.order_seq)
        elif offset:
            # The message a previous pass was part-way through: its remaining fragments.
            if offset < len(entry.content):
                builder.add_fragments(entry, begin=offset)
            else:
                builder.pass_over(entry.order_seq)
            offset = 0
        elif not builder.add_whole(entry):
            builder.add_fragments(entry)
    return builder.finish()


def split_chunk(chunk: Chunk) -> tuple[Chunk, Chunk] | None:
    """Two chunks of `chunk`'s parts, halved; None for a single part. Only the last part of
    a chunk can be an unfinished fragment, so the first half always ends on a completed
    message and may move the cursor past it; the second keeps the chunk's cursor rule."""
    if len(chunk.parts) < 2:
        return None
    middle = len(chunk.parts) // 2
    first, second = chunk.parts[:middle], chunk.parts[middle:]
    return (
        Chunk(
            parts=first,
            covered_through_order_seq=first[-1].order_seq,
            cursor_commit_order_seq=first[-1].order_seq,
        ),
        Chunk(
            parts=second,
            covered_through_order_seq=chunk.covered_through_order_seq,
            cursor_commit_order_seq=chunk.cursor_commit_order_seq,
            resume=chunk.resume,
        ),
    )


def _check_order(previous: TapeEntry | None, entry: TapeEntry) -> None:
    if previous is None:
        return
    if entry.order_seq <= previous.order_seq:
        raise ValidationError("entries", "order_seq must be strictly increasing")
    if entry.session_id != previous.session_id:
        raise ValidationError("entries", "must all belong to one session")


def _quarter_tokens(text: str) -> int:
    # estimate_tokens = ceil(1.5 × CJK + other / 4) = ceil((6 × CJK + other) / 4): integer
    # quarter-tokens add up exactly, so a chunk is checked without re-estimating its text.
    # The estimator's own weight (its length for ASCII), not a character-by-character sum.
    return token_weight(text)


class _Builder:
    """Mutable packing state; only `chunk_messages` sees it."""

    def __init__(self, limits: ChunkLimits, done: int, most: int | None) -> None:
        self._limits = limits
        self._done = done  # highest order_seq completed by the chunks so far
        self._most = most
        self._chunks: list[Chunk] = []
        self._parts: list[ChunkPart] = []
        self._code_points = 0
        self._quarters = 0
        self._covered: int | None = None
        self._commit: int | None = None

    def pass_over(self, order_seq: int) -> None:
        # Nothing to extract, so it is complete wherever it lands; leading ones ride along
        # with the first chunk, the others with the chunk open at the time.
        self._covered = order_seq
        self._commit = order_seq

    def add_whole(self, entry: TapeEntry) -> bool:
        """Append the message whole, opening a new chunk if needed; False if it is too big."""
        part = ChunkPart(
            entry_id=entry.id,
            order_seq=entry.order_seq,
            role=entry.role,
            text=entry.content,
            created_at=entry.created_at,
        )
        rendered = part.render()
        if len(rendered) > self._limits.max_code_points:
            return False  # decided before weighing every character of a long paste
        cost = (len(rendered), _quarter_tokens(rendered))
        if not self._fits(*cost, alone=True):
            return False
        if not self._fits(*cost, alone=False):
            self._flush()
        self._append(part, *cost)
        return True

    @property
    def full(self) -> bool:
        return self._most is not None and len(self._chunks) >= self._most

    def add_fragments(self, entry: TapeEntry, begin: int = 0) -> None:
        """Split an oversized message from code point `begin`; every fragment but the last
        is a chunk of its own."""
        if self._parts:
            self._flush()
        content = entry.content
        start, number = begin, 1
        while start < len(content) and not self.full:
            prefix = ChunkPart(
                entry_id=entry.id,
                order_seq=entry.order_seq,
                role=entry.role,
                text="",
                fragment=number,
            ).render()
            end = self._fragment_end(content, start, prefix)
            final = end == len(content)
            part = ChunkPart(
                entry_id=entry.id,
                order_seq=entry.order_seq,
                role=entry.role,
                text=content[start:end],
                fragment=number,
                final=final,
                created_at=entry.created_at,
            )
            rendered = part.render()
            self._append(part, len(rendered), _quarter_tokens(rendered))
            if not final:
                self._flush(resume_offset=end)
            start, number = end, number + 1

    def _fragment_end(self, content: str, start: int, prefix: str) -> int:
        room_points = self._limits.max_code_points - len(prefix)
        room_quarters = self._limits.max_quarter_tokens - _quarter_tokens(prefix)
        # Weights of this fragment's window only: the cost of a cut never grows with the
        # length of the message.
        window = content[start : start + max(room_points, 0)]
        if window.isascii():  # every character weighs one: the room is a length
            end = start + min(len(window), max(room_quarters, 0))
        else:
            weights = itertools.accumulate(6 if is_cjk_like(char) else 1 for char in window)
            end = start + bisect.bisect_right(list(weights), room_quarters)
        if end <= start:
            raise ValidationError("max_tokens", "too small to hold one character of a fragment")
        if end == len(content):
            return end
        floor = start + max(1, int((end - start) * _WHITESPACE_WINDOW))
        for cut in range(end, floor - 1, -1):
            if content[cut - 1].isspace():
                return cut
        # No whitespace near the end: cut by code point, but not just before a combining mark
        # or joiner, which would detach it from the character it modifies.
        cut = end
        while cut > start + 1 and (unicodedata.combining(content[cut]) or content[cut] in _JOINERS):
            cut -= 1
        return cut

    def _fits(self, code_points: int, quarters: int, *, alone: bool) -> bool:
        if not alone and self._parts:
            code_points += self._code_points + len(SEPARATOR)
            quarters += self._quarters + _quarter_tokens(SEPARATOR)
        return (
            code_points <= self._limits.max_code_points
            and quarters <= self._limits.max_quarter_tokens
        )

    def _append(self, part: ChunkPart, code_points: int, quarters: int) -> None:
        if self._parts:
            code_points += len(SEPARATOR)
            quarters += _quarter_tokens(SEPARATOR)
        self._parts.append(part)
        self._code_points += code_points
        self._quarters += quarters
        self._covered = part.order_seq
        if part.final:
            self._commit = part.order_seq

    def _flush(self, resume_offset: int | None = None) -> None:
        if not self._parts:
            return
        assert self._covered is not None
        if self._commit is not None:
            self._done = self._commit
        self._chunks.append(
            Chunk(
                parts=tuple(self._parts),
                covered_through_order_seq=self._covered,
                cursor_commit_order_seq=self._commit,
                resume=None
                if resume_offset is None
                else CursorPosition(order_seq=self._done, fragment_offset=resume_offset),
            )
        )
        self._parts, self._code_points, self._quarters = [], 0, 0
        self._covered, self._commit = None, None

    def finish(self) -> tuple[Chunk, ...]:
        if not self.full:
            self._flush()
        return tuple(self._chunks[: self._most])
