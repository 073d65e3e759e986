"""The example plugin (`examples/plugin-hash-embedder`) as a third party would ship it.

Installed the fast way: its package and a `dist-info` (metadata and the entry points read
from its own pyproject.toml) in a temporary directory first on `sys.path`, which is all
importlib_metadata looks at. Then it is listed like any plugin, chosen by name in a config
file, and passes the contract suites through `pytester`; deliberately broken copies fail
them with messages that say what is wrong (R-ARCH-3, R-HOST-3).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import time
import tomllib
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_plugins.bootstrap import open_memory
from memory_plugins.cli.main import main
from memory_plugins.config import parse_config
from memory_plugins.loader import load_plugins

pytest_plugins = ["pytester"]

# Inner runs load only what they test: no cache files, and no hypothesis plugin (pytester
# drops the modules a run imported, so every run would import and rewrite hypothesis again).
QUIET = ("-p", "no:cacheprovider", "-p", "no:hypothesispytest")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "plugin-hash-embedder"
PACKAGE = "agent_memory_hash_embedder"
EMBEDDER = EXAMPLE / "src" / PACKAGE / "embedder.py"

Install = Callable[..., Path]


class _Monotonic:
    def monotonic(self) -> float:
        return time.monotonic()


REAL_TIME = _Monotonic()


def _project() -> Mapping[str, object]:
    with (EXAMPLE / "pyproject.toml").open("rb") as handle:
        return tomllib.load(handle)["project"]


def _forget_example_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    # A copy imported earlier (or the one a CI venv installs) must not stand in for ours.
    for name in [name for name in sys.modules if name.split(".")[0] == PACKAGE]:
        monkeypatch.delitem(sys.modules, name)


@pytest.fixture
def install_example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Install]:
    """`install(patches={old: new})` puts a (patched) copy of the example on sys.path."""

    def install(*, patches: Mapping[str, str] | None = None) -> Path:
        site = tmp_path / "site"
        shutil.copytree(EXAMPLE / "src" / PACKAGE, site / PACKAGE)
        embedder = site / PACKAGE / "embedder.py"
        source = embedder.read_text(encoding="utf-8")
        for old, new in (patches or {}).items():
            # A patch that no longer applies would make the "broken" copy a working one.
            assert source.count(old) == 1, f"the example changed; update the patch for {old!r}"
            source = source.replace(old, new)
        embedder.write_text(source, encoding="utf-8")
        project = _project()
        info = site / f"{PACKAGE}-{project['version']}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n",
            encoding="utf-8",
        )
        entry_points = project["entry-points"]["agent_memory"]  # type: ignore[index]
        lines = "".join(f"{name} = {target}\n" for name, target in entry_points.items())
        (info / "entry_points.txt").write_text(f"[agent_memory]\n{lines}", encoding="utf-8")
        monkeypatch.syspath_prepend(str(site))
        monkeypatch.setenv("PYTHONPATH", str(site))  # for subprocess runs
        _forget_example_modules(monkeypatch)
        return site

    yield install


def _contract_run(pytester: pytest.Pytester, *, subprocess: bool = False) -> pytest.RunResult:
    """The example's own tests, run the way its README says (`python -m pytest -q`)."""
    for path in (EXAMPLE / "tests").iterdir():
        if path.suffix == ".py":
            shutil.copy(path, pytester.path / path.name)
    args = ("-q", *QUIET)
    if subprocess:
        return pytester.runpytest_subprocess(*args)
    return pytester.runpytest(*args)


# --- installed, listed, chosen ----------------------------------------------------------------
def test_the_example_is_listed_like_an_installed_plugin(
    install_example: Install, capsys: pytest.CaptureFixture[str]
) -> None:
    """R-ARCH-3, R-HOST-2: `agent-memory plugins` shows it with its distribution."""
    install_example()

    assert main(["--json", "plugins", "--family", "embedding_provider"]) == 0

    document = json.loads(capsys.readouterr().out)
    [entry] = [r for r in document["registrations"] if r["name"] == "hash-embedder"]
    assert entry["distribution"] == "agent-memory-hash-embedder"
    assert entry["version"] == _project()["version"]
    assert entry["module"] == f"{PACKAGE}.plugin"
    assert not [f for f in document["failures"] if "hash-embedder" in f["distribution"]]


def test_the_example_chosen_in_config_embeds_the_vectors_recall_uses(
    install_example: Install, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R-ARCH-3, R-ARCH-5: chosen by name in a config file (the README's own TOML), it
    builds through the registry and its vectors serve recall."""
    install_example()
    readme = (EXAMPLE / "README.md").read_text(encoding="utf-8")
    toml = readme.split("```toml\n", 1)[1].split("```", 1)[0]
    monkeypatch.setenv("HASH_EMBEDDER_KEY", "a key only this test knows")
    config = parse_config(tomllib.loads(toml))
    registry = load_plugins(
        strict=True, distributions={"agent-memory", "agent-memory-hash-embedder"}
    ).registry

    async def scenario() -> None:
        memory = open_memory(tmp_path / "data", config=config, registry=registry)
        try:
            await memory.remember("agent-1", "The user keeps bees on the roof in Lisbon")
            await memory.remember("agent-1", "The user's sister plays the cello")
            assert await memory.warm("agent-1")
            result = await memory.recall("agent-1", "bees roof")
            assert [item.claim.content for item in result.items][:1] == [
                "The user keeps bees on the roof in Lisbon"
            ]
            assert result.items[0].similarity is not None  # the vector path took part
            vectors = memory.index.vectors
            assert vectors is not None
            identity = await vectors.stored_identity(
                "agent-1",
                deadline=Deadline.after(REAL_TIME, 10),
                cancel=CancellationToken(),
            )
            assert identity is not None
            assert (identity.provider, identity.dim) == ("hash-embedder", 128)
        finally:
            await memory.aclose()

    asyncio.run(scenario())


# --- the contract suites ------------------------------------------------------------------------
def test_the_example_passes_the_contract_suites(
    install_example: Install, pytester: pytest.Pytester
) -> None:
    """R-HOST-3: EmbeddingProviderContract and PluginConformance pass through the entry
    point; what a local provider cannot do is deselected with its reason, never skipped."""
    install_example()

    result = _contract_run(pytester)

    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) > 0
    assert {k: v for k, v in outcomes.items() if k not in ("passed", "deselected")} == {}, (
        result.stdout.str()
    )
    assert outcomes["deselected"] == 3
    result.stdout.fnmatch_lines(
        ["*test_a_failure_is_a_typed_error_without_the_secret: needs capability 'failing'*"]
    )


def test_a_copy_returning_vectors_of_the_wrong_dimension_fails_readably(
    install_example: Install, pytester: pytest.Pytester
) -> None:
    """R-PROV-4: one float short of `dimensions()` fails both suites, and the conformance
    message says exactly that."""
    install_example(
        patches={
            "return [value / norm for value in slots]": (
                "return [value / norm for value in slots][1:]"
            )
        }
    )

    result = _contract_run(pytester)

    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "embedding_provider 'hash-embedder' from agent-memory-hash-embedder 0.1.0: "
            "embed() returned a vector of 31 floats; dimensions() says 32",
            # A trailing `*`: under CI=true pytest prints the whole reason after the test id.
            "FAILED *TestHashEmbedderContract::test_one_finite_vector_per_text_of_the_reported"
            "_dimension*",
            "FAILED *TestHashEmbedderPlugin::test_every_registration_passes_its_family_smoke"
            "_check*",
        ],
        consecutive=False,
    )
    assert result.parseoutcomes()["failed"] == 2


def test_a_copy_that_leaks_its_key_fails_readably(
    install_example: Install, pytester: pytest.Pytester
) -> None:
    """R-PROV-5: a provider whose repr shows its secret fails the contract, and the
    report shows where the secret appeared."""
    install_example(
        patches={
            '        return f"HashEmbedder(dimensions={self._dim}, keyed={bool(self._key)})"': (
                '        return f"HashEmbedder(key={self.raw_key!r})"'
            ),
            "        self._key = hashlib": (
                "        self.raw_key = key\n        self._key = hashlib"
            ),
        }
    )

    # A fresh interpreter, so the suite's assertions are rewritten and show the values.
    result = _contract_run(pytester, subprocess=True)

    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert result.parseoutcomes()["failed"] == 1
    result.stdout.fnmatch_lines(
        [
            "*'amc-contract-sentinel-Q7ZK2M9XW4' is contained here:",
            "*HashEmbedder(key='amc-contract-sentinel-Q7ZK2M9XW4')*",
            "FAILED *TestHashEmbedderContract::test_the_repr_never_shows_the_secret*",
        ],
        consecutive=False,
    )
