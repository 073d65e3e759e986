"""Discovery imports registration modules only: an adapter's libraries load when the
settings choose that adapter (R-ARCH-3; issue 15, start-up cost).

Each check runs in a fresh interpreter, since this test process has imported everything.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memory_adapters.httpx_providers import DEFAULT_OLLAMA_URL
from memory_plugins.builtin import embedders

HEAVY = ("apsw", "duckdb", "httpx", "numpy", "onnxruntime", "memory_adapters.extractors")

_PROBE = r"""
import json, sys
from memory_plugins.loader import load_plugins
registry = load_plugins(strict=True, distributions={"agent-memory"}).registry
before = {name: name in sys.modules for name in json.loads(sys.argv[1])}
if sys.argv[2]:
    from pathlib import Path
    from memory_plugins.context import FactoryContext
    family, name, data_dir, options = json.loads(sys.argv[2])
    context = FactoryContext(data_dir=Path(data_dir), options=options)
    registry.get(family, name).factory(context)
after = {name: name in sys.modules for name in json.loads(sys.argv[1])}
print(json.dumps({"before": before, "after": after}))
"""


def _probe(build: list[object] | None = None) -> dict[str, dict[str, bool]]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(HEAVY), json.dumps(build) if build else ""],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2_000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def test_loading_every_first_party_plugin_imports_no_adapter_library() -> None:
    """R-ARCH-3: every registration is listed, yet no storage, HTTP or model library is
    imported until a factory runs."""
    loaded = _probe()["before"]
    assert [name for name, present in loaded.items() if present] == []


@pytest.mark.parametrize(
    ("family", "name", "options", "library"),
    [
        ("vector_store", "memory", {}, "duckdb"),
        ("embedding_provider", "ollama", {"model": "m"}, "httpx"),
    ],
)
def test_a_factory_imports_its_adapter_when_it_runs(
    tmp_path: Path, family: str, name: str, options: dict[str, str], library: str
) -> None:
    """The positive control: building the chosen plugin loads what it needs."""
    result = _probe([family, name, str(tmp_path), options])
    assert result["before"][library] is False
    assert result["after"][library] is True


def test_the_listed_ollama_default_is_the_adapters_own() -> None:
    assert embedders.DEFAULT_OLLAMA_URL == DEFAULT_OLLAMA_URL
