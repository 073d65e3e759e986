"""Shared pieces of the memory-command CLI tests: a data directory, a fast config, tapes.

Not a test module. The commands run through `main([...])` in-process; the config picks the
model-free hashing embedder so each invocation takes a fraction of a second.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from memory_plugins.cli.main import main

__all__ = ["API_KEY", "HASHING", "REPLY", "Cli", "write_tape"]

API_KEY = "sk-proj-Zq8xV3nL5tR7wY9aB2cD4eF6gH8jK0mN1pQ3"


class Cli:
    """`agent-memory --data-dir D --config C ...` in-process, with captured output."""

    def __init__(self, root: Path, capsys: pytest.CaptureFixture[str], config: str) -> None:
        self.data_dir = root / "data"
        self.config = root / "config.toml"
        self.config.write_text(config, encoding="utf-8")
        self._capsys = capsys

    def run(self, *args: str) -> tuple[int, str, str]:
        code = main(["--data-dir", str(self.data_dir), "--config", str(self.config), *args])
        captured = self._capsys.readouterr()
        return code, captured.out, captured.err

    def json(self, *args: str, expect: int = 0) -> Any:
        code, out, err = self.run("--json", *args)
        assert code == expect, (code, out, err)
        return json.loads(out)


HASHING = '[plugins.embedding_provider]\nname = "hashing"\n'
# A neutral assistant turn, long enough that a user line and it pass the admission
# threshold of a settled turn (2 messages, 160 visible characters).
REPLY = (
    "Thanks for telling me, I will keep that in mind. Is there anything else I can help you "
    "with today, for example planning, writing, or questions about one of your projects?"
)


def write_tape(
    path: Path, sessions: dict[str, Sequence[tuple[str, str]]], *, start: int = 1
) -> Path:
    """Append `(role, content)` messages per session to a JSONL tape (docs/tape-format.md),
    numbering each session's messages from `start`."""
    lines = []
    for session, messages in sessions.items():
        for order_seq, (role, content) in enumerate(messages, start=start):
            record = {
                "id": f"{session}-{order_seq}",
                "session": session,
                "order_seq": order_seq,
                "role": role,
                "content": content,
            }
            lines.append(json.dumps(record) + "\n")
    with path.open("a", encoding="utf-8") as handle:
        handle.writelines(lines)
    return path
