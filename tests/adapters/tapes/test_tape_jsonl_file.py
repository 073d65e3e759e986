"""The JSONL tape file: its exact format, reopening, torn last lines and strict parsing."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memory_adapters.tapes import JsonlTape, TapeFormatError
from memory_core.ports.tape import Anchor, AnchorKind, EntryStatus


def _lines(path: Path) -> list[dict]:
    text = path.read_text(encoding="utf-8")
    return [json.loads(line) for line in text.split("\n") if line.strip()]


def test_every_write_is_one_documented_json_line(tmp_path: Path, call) -> None:
    """R-HOST-3: the line shapes of docs/tape-format.md, in write order."""
    path = tmp_path / "tape.jsonl"
    with JsonlTape(path) as tape:
        first = tape.append_message("s1", "user", "I moved to Lisbon.\nIn May.")
        tape.replace("s1", first.id, "I moved to Lisbon.")
        tape.retract("s1", first.id)
        anchor = Anchor(
            kind=AnchorKind.VIEW_ASSEMBLED, agent_id="agent-1", session_id="s1",
            message_id=first.id, payload={"selected": ["c1"]},
        )  # fmt: skip
        call(tape.append, anchor)

    assert _lines(path) == [
        {"id": "m-1", "session": "s1", "order_seq": 1, "role": "user",
         "content": "I moved to Lisbon.\nIn May.", "status": "sent", "kind": "message"},
        {"id": "r-2", "session": "s1", "kind": "replacement", "message_id": "m-1",
         "content": "I moved to Lisbon.", "status": "sent"},
        {"id": "x-3", "session": "s1", "kind": "retraction", "message_id": "m-1"},
        {"id": "a-4", "session": "s1", "kind": "anchor", "anchor_kind": "memory/view_assembled",
         "agent_id": "agent-1", "message_id": "m-1", "payload": {"selected": ["c1"]}},
    ]  # fmt: skip
    assert path.read_bytes().endswith(b"\n") and path.read_bytes().count(b"\n") == 4


def test_reopening_restores_entries_anchors_and_a_current_projection(tmp_path: Path, call) -> None:
    """R-WRITE-8: the file is the tape; the projection is rebuilt from it on open."""
    path = tmp_path / "tape.jsonl"
    with JsonlTape(path) as tape:
        kept = tape.append_message("s1", "user", "kept")
        gone = tape.append_message("s1", "assistant", "gone")
        tape.retract("s1", gone.id)
        tape.append_message("s1", "user", "unprojected", project=False)
        call(tape.append, Anchor(kind="memory/view_assembled", agent_id="A", session_id="s1",
                                 message_id=None, payload={"n": 1}))  # fmt: skip
        before = list(call(tape.get_by_session, "s1"))

    with JsonlTape(path) as reopened:
        assert list(call(reopened.get_by_session, "s1")) == before
        assert before[0] == kept
        found = call(reopened.read_current_range, "s1", 0)
        assert found.current and list(found.entries) == before
        (record,) = call(reopened.list_memory_view_manifests_by_agent, "A")
        assert record.payload == {"n": 1}
        assert reopened.append_message("s1", "user", "next").id == "m-6"


def test_a_hand_written_file_may_omit_defaults_blank_lines_and_the_final_newline(
    tmp_path: Path, call
) -> None:
    """R-HOST-3: status/kind default; blank lines are skipped; a complete last line without
    its newline is read, and the next append ends it before writing."""
    path = tmp_path / "demo.jsonl"
    path.write_text(
        '{"id":"u1","session":"demo","order_seq":1,"role":"user","content":"I am vegan."}\n'
        "\n"
        '{"id":"a1","session":"demo","order_seq":2,"role":"assistant","content":"Noted."}',
        encoding="utf-8",
    )
    with JsonlTape(path) as tape:
        assert [e.id for e in call(tape.get_by_session, "demo")] == ["u1", "a1"]
        tape.append_message("demo", "user", "And I live in Porto.")

    assert [line["id"] for line in _lines(path)] == ["u1", "a1", "m-3"]
    with JsonlTape(path) as reopened:
        assert len(call(reopened.get_by_session, "demo")) == 3


@pytest.mark.parametrize(
    "torn",
    [
        b'{"id":"m-2","session":"s","order_seq":2,"role":"us',
        b'{"id":"m-2","session":"s","order_seq":2,"role":"user","content":"\xe4\xb8',  # mid-UTF-8
        b"{",
    ],
)
def test_a_torn_last_line_is_ignored_and_truncated_by_the_next_append(
    tmp_path: Path, call, torn: bytes
) -> None:
    """R-HOST-3: a crash mid-write leaves a torn last line: readers skip it, the writer
    drops it before appending, and the file stays valid."""
    path = tmp_path / "tape.jsonl"
    with JsonlTape(path) as tape:
        tape.append_message("s", "user", "complete")
    with path.open("ab") as file:
        file.write(torn)

    with JsonlTape(path) as tape:
        assert [e.content for e in call(tape.get_by_session, "s")] == ["complete"]
        tape.append_message("s", "user", "after the crash")

    assert [line["content"] for line in _lines(path)] == ["complete", "after the crash"]


MESSAGE = '{"id":"m1","session":"s","order_seq":1,"role":"user","content":"hi"}'


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ("{not json", "not a JSON value"),
        ("[1, 2]", "must be a JSON object"),
        ('{"id":"m2","session":"s","order_seq":2,"role":"user","content":"x","extra":1}', "extra"),
        ('{"id":"m2","session":"s","order_seq":2,"role":"robot","content":"x"}', "role"),
        ('{"id":"m2","session":"s","order_seq":"2","role":"user","content":"x"}', "order_seq"),
        ('{"id":"m2","session":"s","order_seq":1,"role":"user","content":"x"}', "order_seq"),
        ('{"id":"m1","session":"s","order_seq":2,"role":"user","content":"x"}', "already used"),
        ('{"id":"r1","session":"s","kind":"replacement","message_id":"nope","content":"x"}',
         "no effective message"),
        ('{"id":"a1","session":"s","kind":"anchor","anchor_kind":"memory/x","agent_id":"A"}',
         "anchor_kind"),
        ('{"id":"a1","session":"s","kind":"anchor","anchor_kind":"memory/extract",'
         '"agent_id":"A","payload":{"x":NaN}}', "not a JSON value"),
        ('{"id":"z","session":"s","kind":"comment"}', "kind"),
    ],
)  # fmt: skip
def test_a_malformed_line_before_the_last_is_an_error_naming_its_line(
    tmp_path: Path, bad: str, reason: str
) -> None:
    """R-DOM-4: anything but a torn last line is strict: TapeFormatError names the line
    number and the field."""
    path = tmp_path / "tape.jsonl"
    path.write_text(f"{MESSAGE}\n\n{bad}\n{MESSAGE.replace('m1', 'm9')}\n", encoding="utf-8")

    with pytest.raises(TapeFormatError) as excinfo:
        JsonlTape(path)
    assert excinfo.value.line == 3
    assert "line 3" in str(excinfo.value) and reason in str(excinfo.value)


def test_invalid_utf8_before_the_last_line_is_an_error(tmp_path: Path) -> None:
    """R-DOM-4: bytes that are not UTF-8 are malformed, not torn, unless at the very end."""
    path = tmp_path / "tape.jsonl"
    path.write_bytes(MESSAGE.encode() + b"\n\xff\xfe\n")
    with pytest.raises(TapeFormatError) as excinfo:
        JsonlTape(path)
    assert excinfo.value.line == 2


def test_a_reader_takes_in_lines_another_writer_appended(tmp_path: Path, call) -> None:
    """R-WRITE-8: a second process's appends are seen by the next call, and a projection
    that was current follows them."""
    path = tmp_path / "tape.jsonl"
    with JsonlTape(path) as writer, JsonlTape(path) as reader:
        first = writer.append_message("s", "user", "one")
        assert list(call(reader.get_by_session, "s")) == [first]
        second = writer.append_message("s", "assistant", "two", status=EntryStatus.ERROR)
        found = call(reader.read_current_range, "s", 1)
        assert found.current and list(found.entries) == [second]


def test_a_file_shrinking_under_an_open_tape_is_an_error(tmp_path: Path, call) -> None:
    """R-VEC-3 (spirit): an outside truncation is reported, never read as a shorter tape."""
    from memory_core.domain.errors import StoreError

    path = tmp_path / "tape.jsonl"
    with JsonlTape(path) as tape:
        tape.append_message("s", "user", "one")
        path.write_bytes(b"")
        with pytest.raises(StoreError):
            call(tape.get_by_session, "s")


def test_the_documented_example_file_reads_as_documented(tmp_path: Path, call) -> None:
    """R-HOST-3: the example in docs/tape-format.md is a valid tape (no doc drift)."""
    doc = Path(__file__).parents[3] / "docs" / "tape-format.md"
    example = doc.read_text(encoding="utf-8").split("```json\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "example.jsonl"
    path.write_text(example, encoding="utf-8")

    with JsonlTape(path) as tape:
        (entry,) = call(tape.get_by_session, "s1")
        assert (entry.id, entry.content) == ("m-1", "I moved to Lisbon in June.")
        assert entry.created_at == datetime(2025, 6, 2, 9, 30, tzinfo=UTC)
        (record,) = call(tape.list_memory_view_manifests_by_agent, "agent-1")
        assert record.payload == {"selected": ["c1"]}


def test_created_at_is_an_optional_iso_field_normalised_to_utc(tmp_path: Path, call) -> None:
    """R-TIME-1: when a message was said survives the file; lines without it stay valid."""
    path = tmp_path / "tape.jsonl"
    path.write_text(
        '{"id":"m-1","session":"s","order_seq":1,"role":"user","content":"old"}\n'
        '{"id":"m-2","session":"s","order_seq":2,"role":"user","content":"dated",'
        '"created_at":"2025-06-02T11:30:00+02:00"}\n',
        encoding="utf-8",
    )
    with JsonlTape(path) as tape:
        old, dated = call(tape.get_by_session, "s")
        assert old.created_at is None
        assert dated.created_at == datetime(2025, 6, 2, 9, 30, tzinfo=UTC)
        tape.append_message("s", "user", "new", created_at=datetime(2025, 7, 1, tzinfo=UTC))
    last = json.loads(path.read_text(encoding="utf-8").splitlines()[-1])
    assert last["created_at"] == "2025-07-01T00:00:00+00:00"


def test_a_naive_created_at_is_an_error_naming_the_field(tmp_path: Path) -> None:
    """R-TIME-1: a time without an offset is rejected, never guessed."""
    path = tmp_path / "tape.jsonl"
    path.write_text(
        '{"id":"m-1","session":"s","order_seq":1,"role":"user","content":"x",'
        '"created_at":"2025-06-02T11:30:00"}\n'
        '{"id":"m-2","session":"s","order_seq":2,"role":"user","content":"y"}\n',
        encoding="utf-8",
    )
    with pytest.raises(TapeFormatError, match="created_at"):
        JsonlTape(path)


def test_integer_ids_are_kept_as_their_decimal_strings(tmp_path: Path, call) -> None:
    """R-HOST-3: a host keyed by integers writes `"id": 7`; a replacement naming message 7
    finds it, and appends after it write the ids back as strings."""
    path = tmp_path / "tape.jsonl"
    path.write_text(
        '{"id":7,"session":42,"order_seq":1,"role":"user","content":"first"}\n'
        '{"id":8,"session":42,"kind":"replacement","message_id":7,"content":"edited"}\n',
        encoding="utf-8",
    )
    with JsonlTape(path) as tape:
        (entry,) = call(tape.get_by_session, "42")
        assert (entry.id, entry.session_id, entry.content) == ("7", "42", "edited")
        tape.retract("42", "7")
        assert call(tape.get_by_session, "42") == ()
    assert _lines(path)[-1]["message_id"] == "7"


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ('{"id":true,"session":"s","order_seq":1,"role":"user","content":"x"}', "id"),
        ('{"id":1.5,"session":"s","order_seq":1,"role":"user","content":"x"}', "id"),
        ('{"id":"m","session":["s"],"order_seq":1,"role":"user","content":"x"}', "session"),
    ],
)
def test_other_id_types_are_errors_naming_the_field(tmp_path: Path, line: str, field: str) -> None:
    path = tmp_path / "tape.jsonl"
    path.write_text(line + "\n" + line.replace('"x"', '"y"') + "\n", encoding="utf-8")
    with pytest.raises(TapeFormatError, match=field):
        JsonlTape(path)
