"""Fixtures for plugin-host tests: throwaway installed distributions, no pip involved.

`fake_dist(...)` writes `<name>-<version>.dist-info/{METADATA,entry_points.txt}` and the
plugin modules into a temporary directory on `sys.path`; importlib_metadata then discovers
them exactly as it would an installed third-party plugin.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

FakeDist = Callable[..., str]


@pytest.fixture
def fake_dist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeDist]:
    root = tmp_path / "site"
    root.mkdir()
    modules: list[str] = []

    def make(
        name: str,
        version: str,
        *,
        entry_points: Mapping[str, str],
        files: Mapping[str, str],
    ) -> str:
        """Install `name==version` with `[agent_memory]` entry points and module files."""
        info = root / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
        )
        lines = "".join(f"{ep} = {target}\n" for ep, target in entry_points.items())
        (info / "entry_points.txt").write_text(f"[agent_memory]\n{lines}", encoding="utf-8")
        for module, source in files.items():
            (root / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
            modules.append(module)
        return name

    monkeypatch.syspath_prepend(str(root))
    yield make
    for module in modules:
        sys.modules.pop(module, None)


GOOD_PLUGIN = """
    from memory_plugins import hookimpl
    from memory_plugins.builtin.clocks import SystemClocks

    @hookimpl
    def agent_memory_register_clocks(register):
        register("{name}", lambda context: SystemClocks(), description="{description}")
"""


@pytest.fixture
def clock_plugin_source() -> Callable[..., str]:
    """Source of a plugin module registering one working clock called `name`."""

    def source(name: str, description: str = "a test clock") -> str:
        return GOOD_PLUGIN.format(name=name, description=description)

    return source
