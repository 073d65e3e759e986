"""Host-side writes shared by the three first-party tapes: errors name the field, edits and
forks refuse what would corrupt the tape (R-DOM-4, R-WRITE-3)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from memory_core.domain.errors import NotFound, ValidationError
from memory_core.ports.tape import Anchor, AnchorKind, EntryRole, EntryStatus


def test_a_status_edit_settles_a_pending_message(any_tape: Any, call) -> None:
    """R-WRITE-1: a streamed message is appended pending and settled by a replacement."""
    pending = any_tape.append_message("s", "assistant", "Hel", status=EntryStatus.PENDING)
    settled = any_tape.replace("s", pending.id, "Hello!", status="sent")

    assert (settled.id, settled.order_seq, settled.status) == (
        pending.id, pending.order_seq, EntryStatus.SENT,
    )  # fmt: skip
    assert list(call(any_tape.get_by_session, "s")) == [settled]


def test_a_host_can_choose_message_ids_but_not_reuse_one(any_tape: Any) -> None:
    """R-DOM-4: ids are unique on a tape; the error names `message_id`."""
    first = any_tape.append_message("s", EntryRole.USER, "hi", message_id="host-1")
    assert first.id == "host-1"
    with pytest.raises(ValidationError) as excinfo:
        any_tape.append_message("other", EntryRole.USER, "again", message_id="host-1")
    assert excinfo.value.field == "message_id"


@pytest.mark.parametrize(
    ("field", "kwargs"),
    [
        ("role", {"role": "robot"}),
        ("status", {"status": "lost"}),
        ("kind", {"kind": "anchor"}),
        ("content", {"content": None}),
        ("session_id", {"session_id": ""}),
    ],
)
def test_an_invalid_message_is_refused_by_field(any_tape: Any, field: str, kwargs: dict) -> None:
    """R-DOM-4: a bad role, status, kind, content or session names the field."""
    values = {"session_id": "s", "role": "user", "content": "hi", **kwargs}
    with pytest.raises(ValidationError) as excinfo:
        any_tape.append_message(
            values.pop("session_id"), values.pop("role"), values.pop("content"), **values
        )
    assert excinfo.value.field == field


def test_edits_of_retracted_unknown_or_foreign_messages_are_not_found(any_tape: Any) -> None:
    """R-WRITE-3: replace/retract act on effective messages of the named session only."""
    message = any_tape.append_message("s", "user", "hi")
    any_tape.append_message("other", "user", "there")
    with pytest.raises(NotFound):
        any_tape.replace("other", message.id, "x")
    any_tape.retract("s", message.id)
    with pytest.raises(NotFound):
        any_tape.retract("s", message.id)
    with pytest.raises(NotFound):
        any_tape.replace("s", message.id, "x")
    with pytest.raises(NotFound):
        any_tape.retract("s", "no-such-id")


def test_a_fork_needs_an_empty_target_other_than_the_source(any_tape: Any) -> None:
    """R-WRITE-3: forking into a session with messages, or into itself, is refused."""
    any_tape.append_message("src", "user", "hi")
    any_tape.append_message("busy", "user", "already here")
    for target in ("busy", "src"):
        with pytest.raises(ValidationError) as excinfo:
            any_tape.fork("src", target, 1)
        assert excinfo.value.field == "target_session_id"
    with pytest.raises(ValidationError) as excinfo:
        any_tape.fork("src", "new", -1)
    assert excinfo.value.field == "up_to_order_seq"


def test_a_fork_of_nothing_leaves_the_target_empty_and_forkable(any_tape: Any, call) -> None:
    """R-WRITE-3: forking before the first sent message clones nothing."""
    any_tape.append_message("src", "assistant", "failed", status=EntryStatus.ERROR)
    assert any_tape.fork("src", "clone", 1) == ()
    assert list(call(any_tape.get_by_session, "clone")) == []
    assert [e.order_seq for e in any_tape.fork("src", "clone", 0)] == []


def test_a_forked_clone_is_projected_at_once(any_tape: Any, call) -> None:
    """R-WRITE-8: the clone's first terminal turn reads a current range, no rebuild."""
    any_tape.append_message("src", "user", "one")
    any_tape.append_message("src", "assistant", "two")
    clones = any_tape.fork("src", "clone", 2)

    found = call(any_tape.read_current_range, "clone", 0)
    assert found.current and tuple(found.entries) == clones


@pytest.mark.parametrize(
    "case",
    [
        ("get_effective_message_source_span", ("s", "m-1"), {}, "entry_ids"),
        ("get_effective_message_source_span", ("s", [1]), {}, "entry_ids"),
        ("read_current_range", ("s", -1), {}, "after_order_seq"),
        ("read_current_range", ("", 0), {}, "session_id"),
        ("list_memory_view_manifests_by_agent", ("",), {}, "agent_id"),
        ("list_memory_view_manifests_by_agent", ("A",), {"limit": True}, "limit"),
        ("get_by_session", (None,), {}, "session_id"),
    ],
)
def test_invalid_port_arguments_are_refused_by_name(any_tape: Any, call, case: tuple) -> None:
    """R-DOM-4: a bare string as ids, a negative cursor or an empty id names the argument."""
    method, args, kwargs, field = case
    with pytest.raises(ValidationError) as excinfo:
        call(getattr(any_tape, method), *args, **kwargs)
    assert excinfo.value.field == field


def test_anchor_payload_tuples_come_back_as_json_lists(any_tape: Any, call) -> None:
    """R-ARCH-2: payloads are JSON: a tuple of source ids is stored as a list."""
    anchor = Anchor(
        kind=AnchorKind.VIEW_ASSEMBLED, agent_id="A", session_id="s", message_id=None,
        payload={"sourceEntryIds": ("m-1", "m-2")},
    )  # fmt: skip
    call(any_tape.append, anchor)
    (record,) = call(any_tape.list_memory_view_manifests_by_agent, "A")
    assert record.payload == {"sourceEntryIds": ["m-1", "m-2"]}


def test_created_at_round_trips_through_reads_edits_projection_and_forks(
    any_tape: Any, call
) -> None:
    """R-TIME-1: when a message was said is kept as aware UTC, by every read path."""
    said = datetime(2025, 6, 2, 11, 30, tzinfo=timezone(timedelta(hours=2)))
    dated = any_tape.append_message("s", "user", "I moved", created_at=said)
    undated = any_tape.append_message("s", "assistant", "ok")
    assert dated.created_at == said and dated.created_at.tzinfo is UTC
    assert undated.created_at is None
    edited = any_tape.replace("s", dated.id, "I moved to Lisbon")
    assert edited.created_at == said  # a replacement keeps when the message was said
    assert [e.created_at for e in call(any_tape.get_by_session, "s")] == [said, None]
    found = call(any_tape.read_current_range, "s", 0)
    assert found.current and [e.created_at for e in found.entries] == [said, None]
    call(any_tape.rebuild_projection, "s")
    assert [e.created_at for e in call(any_tape.read_current_range, "s", 0).entries] == [
        said, None,
    ]  # fmt: skip
    clones = any_tape.fork("s", "f", 2)
    assert [clone.created_at for clone in clones] == [said, None]


def test_a_naive_created_at_is_refused_by_name(any_tape: Any) -> None:
    """R-TIME-1: naive datetimes are rejected, not guessed."""
    with pytest.raises(ValidationError) as excinfo:
        any_tape.append_message("s", "user", "hi", created_at=datetime(2025, 6, 2))
    assert excinfo.value.field == "created_at"
