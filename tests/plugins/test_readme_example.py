"""The README's host example runs as written, so the first thing a reader copies works."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).parents[2] / "README.md"


def test_the_readme_host_example_runs(tmp_path: Path) -> None:
    """R-HOST-1: open, prepare a turn, place it, report the turn settled, close."""
    text = README.read_text(encoding="utf-8")
    match = re.search(r"## A host in twenty lines\n\n```python\n(.*?)```", text, re.S)
    assert match is not None, "README lost its host example"
    code = match.group(1)
    assert len(code.strip().splitlines()) <= 25
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert (tmp_path / "memory-data" / "memory.sqlite3").is_file()
