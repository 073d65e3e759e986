"""The tape contract suite: what every tape adapter promises memory (R-ARCH-2, R-WRITE-8, R-HOST-3).

A host checks its own tape adapter with one pytest run (docs/tape-format.md, "Checking your
tape adapter"):

    import pytest
    from memory_contracts.tape import TapeContract

    class TestMyTape(TapeContract):
        @pytest.fixture
        def tape(self, tmp_path):
            return MyTape(tmp_path / "chat.db")

        @pytest.fixture
        def harness(self, tape):
            return MyTapeHarness(tape)  # implements TapeHarness with the host's own writes

The tape must be a `TapeRawEntryReader`. The other three ports and the harness's optional
`append_unprojected` are capabilities ("tape_anchor_writer", "tape_inspection_reader",
"ingestion_projection", "lagging_projection"): declare the ones your tape has in
`capabilities`, and with `memory_contracts.pytest_plugin` loaded the checks of the others
are deselected with the reason, while a declared one your tape lacks fails. Declare
nothing (the default) and checks of what the tape does not implement are skipped. Port
calls run through `run` (asyncio.run per call); override it if your adapter is bound to
one event loop.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Coroutine, Sequence
from typing import Any, ClassVar, Protocol, TypeVar

import pytest

from memory_contracts.fakes import ManualClock
from memory_contracts.pytest_plugin import require_declared, requires_capability
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import DeadlineExceeded, OperationCancelled, ValidationError
from memory_core.ports.tape import (
    Anchor,
    AnchorKind,
    EntryKind,
    EntryRole,
    EntryStatus,
    IngestionProjection,
    ProjectionRange,
    TapeAnchorWriter,
    TapeEntry,
    TapeInspectionReader,
    TapeRawEntryReader,
)
from memory_core.services.write.fork_cursor import fork_selection

__all__ = ["PORT_CAPABILITIES", "TapeContract", "TapeHarness"]

T = TypeVar("T")
USER, ASSISTANT = EntryRole.USER, EntryRole.ASSISTANT

# The optional tape ports, as the capability names a TapeContract subclass declares.
PORT_CAPABILITIES: dict[type, str] = {
    TapeAnchorWriter: "tape_anchor_writer",
    TapeInspectionReader: "tape_inspection_reader",
    IngestionProjection: "ingestion_projection",
}


class TapeHarness(Protocol):
    """The host's own writes, so the contract can set sessions up. Synchronous on purpose:
    the contract calls it outside any event loop, so a host may `asyncio.run` inside."""

    def append_message(
        self,
        session_id: str,
        role: EntryRole,
        content: str,
        *,
        status: EntryStatus = EntryStatus.SENT,
        kind: EntryKind = EntryKind.MESSAGE,
    ) -> TapeEntry:
        """Append a message the way the host normally does (projection maintained)."""
        ...

    def replace(self, session_id: str, message_id: str, content: str) -> object:
        """Edit a message's content in place (same id and order_seq)."""
        ...

    def retract(self, session_id: str, message_id: str) -> object:
        """Delete a message from the effective view."""
        ...

    def fork(self, source_session_id: str, target_session_id: str, up_to_order_seq: int) -> object:
        """Clone the source's sent messages up to `up_to_order_seq`, renumbered 1..n."""
        ...

    def append_unprojected(
        self, session_id: str, role: EntryRole, content: str
    ) -> TapeEntry | None:
        """Optional. Append a message without updating the projection (as a crashed or
        older writer would), or return None if the tape cannot lag its projection; without
        it the stale-path check is skipped (capability "lagging_projection")."""
        ...


class TapeContract:
    """Subclass it as `Test…` and provide the `tape` and (unless the tape is its own
    harness) `harness` fixtures."""

    #: None: check at run time what the tape implements; or the set of capabilities the
    #: tape promises (see the module docstring), so missing ones are deselected, not run.
    capabilities: ClassVar[frozenset[str] | None] = None

    @pytest.fixture
    def tape(self) -> TapeRawEntryReader:
        pytest.fail("override the `tape` fixture with your adapter")

    @pytest.fixture
    def harness(self, tape: Any) -> TapeHarness:
        return tape  # first-party tapes carry their own host writes

    @pytest.fixture
    def clock(self) -> ManualClock:
        return ManualClock()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run(coroutine)

    # --- helpers -------------------------------------------------------------------------
    def _call(self, clock: ManualClock, method: Any, *args: Any, **kwargs: Any) -> Any:
        deadline = Deadline.after(clock, 30.0)
        return self.run(method(*args, deadline=deadline, cancel=CancellationToken(), **kwargs))

    def _entries(self, tape: Any, clock: ManualClock, session_id: str) -> list[TapeEntry]:
        return list(self._call(clock, tape.get_by_session, session_id))

    def _range(self, tape: Any, clock: ManualClock, session_id: str, after: int) -> ProjectionRange:
        return self._call(clock, tape.read_current_range, session_id, after)

    def _anchor(self, tape: Any, clock: ManualClock, **fields: Any) -> str:
        values = {"kind": AnchorKind.VIEW_ASSEMBLED, "message_id": None, "payload": {}, **fields}
        return self._call(clock, tape.append, Anchor(**values))

    def _require(self, tape: object, port: type) -> None:
        capability = PORT_CAPABILITIES[port]
        if require_declared(self, capability):
            if not isinstance(tape, port):
                pytest.fail(
                    f"{type(self).__qualname__} declares {capability!r}, but the tape "
                    f"({type(tape).__qualname__}) does not implement {port.__name__}"
                )
        elif not isinstance(tape, port):
            pytest.skip(f"the tape does not implement {port.__name__}")

    def _assert_range_consistent(self, tape: Any, clock: ManualClock, session_id: str) -> None:
        effective = self._entries(tape, clock, session_id)
        last = effective[-1].order_seq if effective else 0
        for cursor in range(last + 2):
            found = self._range(tape, clock, session_id, cursor)
            assert isinstance(found, ProjectionRange)
            assert found.current == (found.tape_head == found.projection_head)
            if found.current:
                assert list(found.entries) == [e for e in effective if e.order_seq > cursor]
            else:
                assert list(found.entries) == []

    # --- TapeRawEntryReader --------------------------------------------------------------
    def test_tape_is_a_raw_entry_reader(self, tape: object) -> None:
        """R-ARCH-2: memory reads a tape only through TapeRawEntryReader.get_by_session."""
        assert isinstance(tape, TapeRawEntryReader)

    def test_entries_come_back_in_order_with_what_was_appended(
        self, tape: Any, harness: TapeHarness, clock: ManualClock
    ) -> None:
        """R-ARCH-2: effective entries ordered by order_seq, fields as written."""
        appended = [
            harness.append_message("s1", USER, "I moved to Lisbon in May."),
            harness.append_message("s1", ASSISTANT, "Noted.", status=EntryStatus.ERROR),
            harness.append_message("s1", EntryRole.SYSTEM, "summary", kind=EntryKind.COMPACTION),
            harness.append_message("s1", ASSISTANT, "Nice — Lisbon! 🎉\nNew line."),
        ]
        entries = self._entries(tape, clock, "s1")
        assert entries == appended
        assert [e.order_seq for e in entries] == sorted({e.order_seq for e in entries})
        assert entries[0].order_seq >= 1
        assert self._entries(tape, clock, "no-such-session") == []

    def test_sessions_are_isolated(
        self, tape: Any, harness: TapeHarness, clock: ManualClock
    ) -> None:
        """R-ARCH-2, R-PRIV-2: one session's entries never appear in another's."""
        first = harness.append_message("s-a", USER, "alpha")
        second = harness.append_message("s-b", USER, "beta")
        third = harness.append_message("s-a", ASSISTANT, "gamma")
        assert self._entries(tape, clock, "s-a") == [first, third]
        assert self._entries(tape, clock, "s-b") == [second]

    def test_effective_view_applies_replacements_and_retractions(
        self, tape: Any, harness: TapeHarness, clock: ManualClock
    ) -> None:
        """R-ARCH-2, R-WRITE-3: edits keep id and order_seq; retracted messages disappear
        and their order_seq is not reused."""
        kept = harness.append_message("s1", USER, "I like tea")
        gone = harness.append_message("s1", ASSISTANT, "ok")
        harness.replace("s1", kept.id, "I like coffee")
        harness.retract("s1", gone.id)
        later = harness.append_message("s1", USER, "and cake")

        entries = self._entries(tape, clock, "s1")
        assert [(e.id, e.order_seq, e.content) for e in entries] == [
            (kept.id, kept.order_seq, "I like coffee"),
            (later.id, later.order_seq, "and cake"),
        ]
        assert later.order_seq > gone.order_seq

    def test_a_fork_clones_sent_messages_renumbered_densely(
        self, tape: Any, harness: TapeHarness, clock: ManualClock
    ) -> None:
        """R-WRITE-3: the clone holds the source's sent messages up to the fork point, as
        numbered by the core's fork_selection (so fork cursors map onto it); the source is
        untouched."""
        harness.append_message("src", USER, "one")
        harness.append_message("src", ASSISTANT, "failed", status=EntryStatus.ERROR)
        retracted = harness.append_message("src", USER, "withdrawn")
        harness.append_message("src", EntryRole.SYSTEM, "summary", kind=EntryKind.COMPACTION)
        harness.append_message("src", ASSISTANT, "two")
        harness.retract("src", retracted.id)
        tail = harness.append_message("src", USER, "three")
        harness.append_message("src", ASSISTANT, "after the fork point")
        source = self._entries(tape, clock, "src")

        harness.fork("src", "clone", tail.order_seq)

        clone = self._entries(tape, clock, "clone")
        expected = fork_selection(source, tail.order_seq)
        assert [e.order_seq for e in clone] == list(range(1, len(expected) + 1))
        assert [(e.role, e.content) for e in clone] == [(e.role, e.content) for e in expected]
        assert all(e.status is EntryStatus.SENT and e.kind is EntryKind.MESSAGE for e in clone)
        assert {e.id for e in clone}.isdisjoint({e.id for e in source})
        assert self._entries(tape, clock, "src") == source

    # --- TapeAnchorWriter + TapeInspectionReader -----------------------------------------
    @requires_capability("tape_anchor_writer")
    def test_anchors_get_unique_ids_and_stay_out_of_the_tape(
        self, tape: Any, harness: TapeHarness, clock: ManualClock
    ) -> None:
        """R-ARCH-2: an anchor is not a message: get_by_session never returns it."""
        self._require(tape, TapeAnchorWriter)
        message = harness.append_message("s1", USER, "hi")
        ids = [
            self._anchor(tape, clock, agent_id="agent", session_id="s1", message_id=message.id)
            for _ in range(3)
        ]
        assert all(isinstance(anchor_id, str) and anchor_id for anchor_id in ids)
        assert len(set(ids)) == 3
        assert self._entries(tape, clock, "s1") == [message]

    @requires_capability("tape_anchor_writer", "tape_inspection_reader")
    def test_view_manifests_are_listed_newest_first_and_filtered_in_storage(
        self, tape: Any, clock: ManualClock
    ) -> None:
        """R-ARCH-2: memory/view_assembled anchors of one agent, newest first, filtered by
        session and message, limited; other kinds and agents never appear; payloads round
        trip."""
        self._require(tape, TapeAnchorWriter)
        self._require(tape, TapeInspectionReader)
        payload = {"selected": ["c1", "c2"], "tokens": 412, "ratio": 0.25, "cut": None,
                   "ok": True, "note": "naïve – ü"}  # fmt: skip
        a1 = self._anchor(tape, clock, agent_id="A", session_id="s1", message_id="m1",
                          payload=payload)  # fmt: skip
        self._anchor(tape, clock, agent_id="A", session_id="s1", kind=AnchorKind.EXTRACT)
        self._anchor(tape, clock, agent_id="A", session_id="s1",
                     kind=AnchorKind.DIRECTIVE_VIEW_ASSEMBLED)  # fmt: skip
        self._anchor(tape, clock, agent_id="B", session_id="s1", message_id="m1")
        a2 = self._anchor(tape, clock, agent_id="A", session_id="s2", message_id="m2")
        a3 = self._anchor(tape, clock, agent_id="A", session_id="s1", message_id="m3")
        listing = tape.list_memory_view_manifests_by_agent

        everything = self._call(clock, listing, "A")
        assert [record.anchor_id for record in everything] == [a3, a2, a1]
        assert dict(everything[-1].payload) == payload
        assert (everything[-1].session_id, everything[-1].message_id) == ("s1", "m1")
        assert [r.anchor_id for r in self._call(clock, listing, "A", session_id="s1")] == [a3, a1]
        assert [r.anchor_id for r in self._call(clock, listing, "A", message_id="m2")] == [a2]
        assert [r.anchor_id for r in self._call(clock, listing, "A", limit=2)] == [a3, a2]
        assert list(self._call(clock, listing, "nobody")) == []

    @requires_capability("tape_anchor_writer", "tape_inspection_reader")
    def test_bad_limits_and_non_json_payloads_are_refused_by_name(
        self, tape: Any, clock: ManualClock
    ) -> None:
        """R-DOM-4: ValidationError names `limit` / `payload`; nothing is written."""
        self._require(tape, TapeAnchorWriter)
        self._require(tape, TapeInspectionReader)
        for limit in (0, 501):
            with pytest.raises(ValidationError) as excinfo:
                self._call(clock, tape.list_memory_view_manifests_by_agent, "A", limit=limit)
            assert excinfo.value.field == "limit"
        for payload in ({"x": object()}, {"x": math.nan}):
            with pytest.raises(ValidationError) as excinfo:
                self._anchor(tape, clock, agent_id="A", session_id="s1", payload=payload)
            assert excinfo.value.field == "payload"
        assert list(self._call(clock, tape.list_memory_view_manifests_by_agent, "A")) == []

    @requires_capability("tape_inspection_reader")
    def test_source_span_shows_only_effective_messages_of_the_session(
        self, tape: Any, harness: TapeHarness, clock: ManualClock
    ) -> None:
        """R-ARCH-2: the span applies retractions and replacements; None when nothing of
        the session is left."""
        self._require(tape, TapeInspectionReader)
        first = harness.append_message("s1", USER, "draft")
        gone = harness.append_message("s1", ASSISTANT, "retracted")
        other = harness.append_message("s2", USER, "elsewhere")
        harness.replace("s1", first.id, "final")
        harness.retract("s1", gone.id)
        span_of = tape.get_effective_message_source_span

        span = self._call(clock, span_of, "s1", [gone.id, first.id, other.id, "unknown"])
        assert span is not None and span.session_id == "s1"
        assert [(m.message_id, m.order_seq, m.role, m.content) for m in span.messages] == [
            (first.id, first.order_seq, USER, "final")
        ]
        assert self._call(clock, span_of, "s1", [gone.id]) is None
        assert self._call(clock, span_of, "s1", [other.id]) is None

    # --- IngestionProjection -------------------------------------------------------------
    @requires_capability("ingestion_projection")
    def test_a_current_range_is_exactly_the_effective_tape_after_the_cursor(
        self, tape: Any, harness: TapeHarness, clock: ManualClock
    ) -> None:
        """R-WRITE-8: current iff the heads agree; a current range holds the effective
        entries strictly after the cursor; one that is not current holds none."""
        self._require(tape, IngestionProjection)
        for index in range(4):
            harness.append_message("s1", USER if index % 2 == 0 else ASSISTANT, f"m{index}")
        assert self._range(tape, clock, "s1", 0).current, "host appends keep it current"
        self._assert_range_consistent(tape, clock, "s1")
        entries = self._entries(tape, clock, "s1")
        harness.replace("s1", entries[1].id, "edited")
        harness.retract("s1", entries[2].id)
        self._assert_range_consistent(tape, clock, "s1")
        self._call(clock, tape.rebuild_projection, "s1")
        assert self._range(tape, clock, "s1", 0).current
        self._assert_range_consistent(tape, clock, "s1")
        assert list(self._range(tape, clock, "unknown", 0).entries) == []

    @requires_capability("ingestion_projection", "tape_anchor_writer")
    def test_an_anchor_does_not_make_the_projection_stale(
        self, tape: Any, harness: TapeHarness, clock: ManualClock
    ) -> None:
        """R-WRITE-8: anchors are not messages, so appending one never forces a rebuild."""
        self._require(tape, IngestionProjection)
        self._require(tape, TapeAnchorWriter)
        message = harness.append_message("s1", USER, "hi")
        before = self._range(tape, clock, "s1", 0)
        self._anchor(tape, clock, agent_id="A", session_id="s1", message_id=message.id,
                     kind=AnchorKind.EXTRACT)  # fmt: skip
        after = self._range(tape, clock, "s1", 0)
        assert after.current and after.tape_head == before.tape_head

    @requires_capability("ingestion_projection", "lagging_projection")
    def test_a_lagging_projection_is_not_current_until_rebuilt(
        self, tape: Any, harness: TapeHarness, clock: ManualClock
    ) -> None:
        """R-WRITE-8: heads disagree -> not current and no entries; a rebuild from the
        effective tape makes it current again, including the message it had missed."""
        self._require(tape, IngestionProjection)
        harness.append_message("s1", USER, "seen")
        promised = require_declared(self, "lagging_projection")
        append_unprojected = getattr(harness, "append_unprojected", None)
        missed = None if append_unprojected is None else append_unprojected("s1", ASSISTANT, "x")
        if missed is None:
            if promised:
                pytest.fail(
                    f"{type(self).__qualname__} declares 'lagging_projection', but the "
                    "harness has no append_unprojected or it returned None"
                )
            pytest.skip("the harness cannot make the projection lag the tape")
        stale = self._range(tape, clock, "s1", 0)
        assert not stale.current and list(stale.entries) == []
        assert stale.tape_head != stale.projection_head
        assert self._entries(tape, clock, "s1")[-1] == missed

        self._call(clock, tape.rebuild_projection, "s1")
        rebuilt = self._range(tape, clock, "s1", 0)
        assert rebuilt.current and list(rebuilt.entries)[-1] == missed
        self._assert_range_consistent(tape, clock, "s1")

    # --- deadlines and cancellation ------------------------------------------------------
    def _port_calls(self, tape: Any) -> Sequence[tuple[str, Any, tuple[Any, ...], dict]]:
        anchor = Anchor(kind=AnchorKind.EXTRACT, agent_id="A", session_id="s1",
                        message_id=None, payload={})  # fmt: skip
        calls = [("get_by_session", TapeRawEntryReader, ("s1",), {})]
        calls += [
            ("append", TapeAnchorWriter, (anchor,), {}),
            ("get_effective_message_source_span", TapeInspectionReader, ("s1", ["x"]), {}),
            ("list_memory_view_manifests_by_agent", TapeInspectionReader, ("A",), {}),
            ("read_current_range", IngestionProjection, ("s1", 0), {}),
            ("rebuild_projection", IngestionProjection, ("s1",), {}),
        ]
        return [call for call in calls if isinstance(tape, call[1])]

    def test_every_port_call_refuses_a_cancelled_token(self, tape: Any, clock: ManualClock) -> None:
        """R-ARCH-2: every waiting port method honours its cancellation token."""
        for name, _, args, kwargs in self._port_calls(tape):
            cancel = CancellationToken()
            cancel.cancel("caller gave up")
            deadline = Deadline.after(clock, 30.0)
            method = getattr(tape, name)
            with pytest.raises(OperationCancelled):
                self.run(method(*args, deadline=deadline, cancel=cancel, **kwargs))
        if isinstance(tape, TapeInspectionReader):
            assert list(self._call(clock, tape.list_memory_view_manifests_by_agent, "A")) == []

    def test_every_port_call_refuses_an_expired_deadline(
        self, tape: Any, clock: ManualClock
    ) -> None:
        """R-ARCH-2: every waiting port method honours its deadline."""
        for name, _, args, kwargs in self._port_calls(tape):
            deadline = Deadline.after(clock, 1.0)
            clock.advance(2.0)
            method = getattr(tape, name)
            with pytest.raises(DeadlineExceeded):
                self.run(method(*args, deadline=deadline, cancel=CancellationToken(), **kwargs))
