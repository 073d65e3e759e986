"""R-HOST-2: two processes on one data dir. The embedded stores are single-process; a second
process once quarantined and emptied the vector store with no error to anyone. Now the
second `open_memory` is refused with a StoreError naming the holder's pid (the CLI prints it
as one line), and the data dir is free again once the holder closes or dies."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memory_core.domain.errors import StoreError
from memory_plugins.bootstrap import open_memory
from memory_plugins.cli.main import main
from memory_plugins.config import MemoryConfig, PluginChoice

HOLDER = textwrap.dedent(
    """
    import sys
    from memory_plugins.bootstrap import open_memory
    from memory_plugins.config import MemoryConfig, PluginChoice
    plugins = dict(MemoryConfig().plugins)
    plugins["embedding_provider"] = PluginChoice(name="hashing")
    memory = open_memory(sys.argv[1], config=MemoryConfig(plugins=plugins))
    print("ready", flush=True)
    sys.stdin.readline()  # hold the data dir until the test says so
    """
)


def _config() -> MemoryConfig:
    plugins = dict(MemoryConfig().plugins)
    plugins["embedding_provider"] = PluginChoice(name="hashing")
    return MemoryConfig(plugins=plugins)


def _holder(data: Path) -> subprocess.Popen[str]:
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(data)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "ready"
    return child


def test_a_second_process_is_refused_with_the_holders_pid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    child = _holder(data)
    try:
        with pytest.raises(StoreError, match=f"in use by process {child.pid}"):
            open_memory(data, config=_config())
        assert main(["--data-dir", str(data), "list", "--agent", "ana"]) == 2
        [line] = capsys.readouterr().err.splitlines()
        assert f"in use by process {child.pid}" in line
    finally:
        child.kill()  # a SIGKILL leaves no stale lock: the kernel drops the flock
        child.wait()
    memory = open_memory(data, config=_config())
    asyncio.run(memory.aclose())


def test_the_lock_is_released_on_close_and_shared_within_a_process(tmp_path: Path) -> None:
    data = tmp_path / "data"

    async def go() -> None:
        first = open_memory(data, config=_config())
        second = open_memory(data, config=_config())  # same process: shares the hold
        await first.aclose()
        await asyncio.to_thread(_refused_while_held, data)
        await second.aclose()

    asyncio.run(go())
    # Closed by every holder: another process may take it now.
    child = _holder(data)
    child.kill()
    child.wait()


def _refused_while_held(data: Path) -> None:
    probe = subprocess.run(
        [sys.executable, "-c", HOLDER, str(data)],
        input="",
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert probe.returncode != 0
    assert f"in use by process {os.getpid()}" in probe.stderr
