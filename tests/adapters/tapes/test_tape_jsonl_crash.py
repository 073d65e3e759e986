"""A writer killed mid-append loses nothing it acknowledged, and the file reopens clean."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from memory_adapters.tapes import JsonlTape

WRITER = textwrap.dedent(
    """
    import sys
    from memory_adapters.tapes import JsonlTape

    tape = JsonlTape(sys.argv[1])
    index = 0
    while True:
        tape.append_message("s", "user", f"message {index} " + "x" * 2000)
        print(index, flush=True)  # acknowledged: append_message returned after fsync
        index += 1
    """
)
ACKNOWLEDGED = 25


def test_a_killed_writer_keeps_every_acknowledged_append(tmp_path: Path, call) -> None:
    """R-HOST-3: fsync per append; a SIGKILL at any point leaves a readable tape holding
    every append that returned, and the next writer carries on."""
    path = tmp_path / "tape.jsonl"
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert writer.stdout is not None
        acknowledged = [int(writer.stdout.readline()) for _ in range(ACKNOWLEDGED)]
    finally:
        writer.kill()
        writer.wait()
        if writer.stdout is not None:
            writer.stdout.close()

    with JsonlTape(path) as tape:
        contents = [entry.content for entry in call(tape.get_by_session, "s")]
        assert len(contents) >= ACKNOWLEDGED
        for index in acknowledged:
            assert contents[index].startswith(f"message {index} ")
        tape.append_message("s", "user", "after the crash")
    with JsonlTape(path) as reopened:
        assert call(reopened.get_by_session, "s")[-1].content == "after the crash"
