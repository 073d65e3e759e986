"""The reference documentation cannot drift from the code it describes (R-HOST-3, R-ARCH-3).

Each test names what to add when it fails. Checked: every registration hook (its family, port,
docstring) and the `register` signature in docs/hooks.md; every port and every import-linter
contract in docs/architecture.md; every CLI command in docs/host-guide.md; every settings field
(default and meaning), every plugin family (default), every first-party plugin and options class
in docs/configuration.md; code quoted from the example plugin is verbatim; every path, dotted
name, test name and link the documents mention exists; the host guide's example runs.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import inspect
import io
import json
import pkgutil
import re
import tomllib
import typing
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

import memory_core.ports
import memory_plugins.builtin
from memory_core.services.read.contribution import DIRECTIVE_NOTICE, MEMORY_NOTICE
from memory_core.settings import MemorySettings
from memory_plugins import hookimpl, hookspecs
from memory_plugins.cli.main import build_parser
from memory_plugins.config import DEFAULT_PLUGINS
from memory_plugins.loader import load_plugins
from memory_plugins.registry import FAMILY_PORTS

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
EXAMPLE = "examples/plugin-hash-embedder"
REFERENCE = (
    "architecture.md",
    "host-guide.md",
    "providers.md",
    "writing-plugins.md",
    "hooks.md",
    "configuration.md",
    "security.md",
)
CODE_BLOCK = re.compile(r"```(\w*)\n(.*?)```", re.DOTALL)
TICKED = re.compile(r"`([^`\n]+)`")


def _doc(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def _section(text: str, heading: str) -> str:
    """From the heading line to the next heading of the same or a higher level."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip() == heading]
    assert starts, f"missing heading {heading!r}"
    level = len(heading) - len(heading.lstrip("#"))
    body = []
    for line in lines[starts[0] + 1 :]:
        hashes = len(line) - len(line.lstrip("#"))
        if 0 < hashes <= level and line[hashes : hashes + 1] == " ":
            break
        body.append(line)
    return "\n".join(body)


def _rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("|")]


def _toml(value: object) -> str:
    """A default as the configuration reference writes it."""
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "`true`" if value else "`false`"
    if isinstance(value, str):
        return f"`{json.dumps(value)}`"
    return f"`{value!r}`"


# --- hooks ---------------------------------------------------------------------------------
def test_every_hook_has_a_reference_entry_with_its_family_port_and_docstring() -> None:
    """R-ARCH-3: docs/hooks.md has a section per hook of hookspecs.PORT_FAMILIES naming its
    family and port(s) and quoting the hookspec's docstring, and no section for a hook that
    does not exist."""
    text = _doc("hooks.md")
    for family, hook in hookspecs.PORT_FAMILIES.items():
        section = _section(text, f"### `{hook}(register)`")
        docstring = inspect.getdoc(getattr(hookspecs, hook))
        assert f"> {docstring}" in section, f"hooks.md, {hook}: quote its docstring"
        assert f"family: `{family}`" in section, f"hooks.md, {hook}: name family `{family}`"
        for port in FAMILY_PORTS[family]:
            assert f"`{port.__name__}`" in section, f"hooks.md, {hook}: name port {port.__name__}"
    documented = set(re.findall(r"^### `(agent_memory_\w+)\(register\)`", text, re.MULTILINE))
    assert documented == set(hookspecs.PORT_FAMILIES.values())


def _shown(parameters: typing.Iterable[inspect.Parameter]) -> str:
    """`register(...)` as docs/hooks.md writes it: names, `*`, defaults; no annotations."""
    parts, star = [], False
    for parameter in parameters:
        if parameter.kind is parameter.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        default = parameter.default
        shown = json.dumps(default) if isinstance(default, str) else repr(default)
        parts.append(parameter.name if default is parameter.empty else f"{parameter.name}={shown}")
    return f"register({', '.join(parts)})"


def test_the_register_signature_in_the_hook_reference_is_the_register_protocols() -> None:
    """R-ARCH-3: the `register(...)` line of docs/hooks.md is read from the `Register`
    Protocol's `__call__`, and the callback the loader hands plugins has exactly that
    signature (names, kinds, defaults and annotations), so the type plugins check against is
    what they receive."""
    received = []

    class Capture:
        @hookimpl
        def agent_memory_register_clocks(self, register: hookspecs.Register) -> None:
            received.append(register)

    load_plugins(strict=True, entry_points=False, plugins=[Capture()])
    [register] = received
    declared = list(inspect.signature(hookspecs.Register.__call__).parameters.values())[1:]
    given = list(inspect.signature(register).parameters.values())

    assert [(p.name, p.kind, p.default, p.annotation) for p in given] == [
        (p.name, p.kind, p.default, p.annotation) for p in declared
    ], "loader.register and hookspecs.Register.__call__ differ"
    assert inspect.signature(register).return_annotation == "None"
    signature = _shown(declared)
    assert f"```python\n{signature}\n```" in _doc("hooks.md"), f"hooks.md: show {signature}"


# --- ports and architecture ----------------------------------------------------------------
def _ports() -> Iterator[tuple[str, type]]:
    # walk_packages: the claim-store role ports live in the subpackage memory_core.ports.claims.
    for module_info in pkgutil.walk_packages(memory_core.ports.__path__, "memory_core.ports."):
        module = importlib.import_module(module_info.name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and getattr(value, "_is_protocol", False)
                and value.__module__ == module.__name__
            ):
                yield module.__name__, value


def test_every_port_is_in_the_architecture_port_table() -> None:
    """R-ARCH-2: each Protocol in memory_core/ports has a row naming it and its module."""
    rows = _rows(_section(_doc("architecture.md"), "## Ports"))
    for module, port in _ports():
        matching = [row for row in rows if row.startswith(f"| `{port.__name__}` |")]
        assert matching, f"architecture.md, ## Ports: add a row for `{port.__name__}`"
        assert f"`{module}`" in matching[0], f"architecture.md: {port.__name__} is in {module}"


def test_every_import_linter_contract_is_listed_by_id_and_name() -> None:
    """R-ARCH-4: the layer table names each contract the guards enforce, as pyproject has it."""
    with (REPO / "pyproject.toml").open("rb") as handle:
        contracts = tomllib.load(handle)["tool"]["importlinter"]["contracts"]
    rows = _rows(_doc("architecture.md"))
    for contract in contracts:
        row = f"| `{contract['id']}` | {contract['name']} |"
        assert row in rows, f"architecture.md: add the row {row}"


# --- the command line ----------------------------------------------------------------------
def _commands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> Iterator[str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, subparser in action.choices.items():
                yield " ".join((*prefix, name))
                yield from _commands(subparser, (*prefix, name))


def test_every_cli_command_has_a_reference_entry() -> None:
    """R-HOST-2: every command and subcommand argparse knows (COMMAND_MODULES) has a row."""
    rows = _rows(_section(_doc("host-guide.md"), "## The command line"))
    commands = list(_commands(build_parser()))
    assert "plugins" in commands
    for command in commands:
        assert any(row.startswith(f"| `agent-memory {command}` |") for row in rows), (
            f"host-guide.md, ## The command line: add | `agent-memory {command}` | … |"
        )


# --- configuration -------------------------------------------------------------------------
def test_every_setting_is_documented_with_its_default_and_meaning() -> None:
    """SPEC §11: each MemorySettings field has its row — default and metadata doc — and every
    row names a field that exists."""
    rows = _rows(_section(_doc("configuration.md"), "## `[settings]`"))
    fields = attrs.fields(MemorySettings)
    for field in fields:
        row = f"| `{field.name}` | `{field.default!r}` | {field.metadata['doc']} |"
        assert row in rows, f"configuration.md, [settings]: the row must read {row}"
    named = {row.split("`")[1] for row in rows[2:]}
    assert named == {field.name for field in fields}, "configuration.md: rows of removed settings"


def test_every_plugin_family_has_its_hook_and_default() -> None:
    """R-ARCH-3: each family's row gives its hook and the embedded default."""
    rows = _rows(_section(_doc("configuration.md"), "## `[plugins.<family>]`"))
    for family, hook in hookspecs.PORT_FAMILIES.items():
        default = DEFAULT_PLUGINS[family]
        row = f"| `{family}` | `{hook}` | {f'`{default}`' if default else 'none'} |"
        assert row in rows, f"configuration.md: the family row must read {row}"


def _builtin_options_classes() -> Iterator[type]:
    for module_info in pkgutil.iter_modules(memory_plugins.builtin.__path__):
        module = importlib.import_module(f"memory_plugins.builtin.{module_info.name}")
        for name, value in vars(module).items():
            if (
                isinstance(value, type)
                and attrs.has(value)
                and value.__module__ == module.__name__
                and name.endswith("Options")
            ):
                yield value


def test_every_first_party_plugin_and_options_class_is_in_the_configuration_reference() -> None:
    """R-ARCH-3: each first-party registration has a row in its family, and each options class
    lists every option with its default (or says it is required)."""
    rows = _rows(_section(_doc("configuration.md"), "## `[plugins.<family>]`"))
    registry = load_plugins(strict=True, distributions=["agent-memory"]).registry
    for registration in registry.registrations():
        assert any(
            row.startswith(f"| `{registration.family}` |") and f"`{registration.name}`" in row
            for row in rows
        ), f"configuration.md: add {registration.family} plugin `{registration.name}`"
    for cls in _builtin_options_classes():
        [row] = [row for row in rows if f"| `{cls.__name__}` |" in row] or [None]
        assert row is not None, f"configuration.md: add a row for `{cls.__name__}`"
        for field in attrs.fields(cls):
            wanted = (
                f"`{field.name}` (required)"
                if field.default is attrs.NOTHING
                else f"`{field.name}` = {_toml(field.default)}"
            )
            assert wanted in row, f"configuration.md, {cls.__name__}: write {wanted}"


def test_every_first_party_provider_is_in_the_providers_guide() -> None:
    """R-PROV-6: the providers guide covers each first-party embedding and text provider."""
    rows = _rows(_doc("providers.md"))
    registry = load_plugins(strict=True, distributions=["agent-memory"]).registry
    for family in ("embedding_provider", "text_provider"):
        for name in registry.names(family):
            assert f"| `{family}` | `{name}` |" in "\n".join(rows), (
                f"providers.md: add a row for {family} `{name}`"
            )


# --- quoted code, references, links --------------------------------------------------------
def test_code_quoted_from_the_example_plugin_is_verbatim() -> None:
    """R-HOST-3: the tutorial's `# examples/…` blocks are excerpts of the real files."""
    quoted = 0
    for _, body in CODE_BLOCK.findall(_doc("writing-plugins.md")):
        first, _, rest = body.partition("\n")
        if first.startswith(f"# {EXAMPLE}/"):
            source = (REPO / first[2:]).read_text(encoding="utf-8")
            assert rest in source, f"writing-plugins.md: the block from {first[2:]} has drifted"
            quoted += 1
    assert quoted >= 5


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(value, attribute):
                return False
            value = getattr(value, attribute)
        return True
    return False


REPO_PATH = re.compile(
    r"^(?:docs|tests|contracts|plugins|adapters|memory_core|examples|benchmarks|\.ci)/[\w./-]*$"
)
DOTTED = re.compile(r"^memory_(?:core|plugins|adapters|contracts)(?:\.\w+)+$")
TEST_NAME = re.compile(r"^test_\w+$")


@functools.cache
def _test_sources() -> str:
    """Every test the suites and our tests define (the suites' names are what authors see)."""
    roots = [(REPO / "tests", "test_*.py"), (REPO / "contracts", "*.py")]
    return "\n".join(
        path.read_text(encoding="utf-8") for root, glob in roots for path in root.rglob(glob)
    )


@pytest.mark.parametrize("name", [*REFERENCE, "../README.md"])
def test_every_path_dotted_name_test_and_link_in_the_docs_exists(name: str) -> None:
    """Names in backticks and relative links point at things that exist."""
    text = _doc(name)
    tests_source = _test_sources()
    for token in TICKED.findall(text):
        if REPO_PATH.match(token):
            assert (REPO / token).exists(), f"{name}: `{token}` does not exist"
        elif DOTTED.match(token):
            assert _resolves(token), f"{name}: `{token}` does not resolve"
        elif TEST_NAME.match(token):
            assert f"def {token}(" in tests_source, f"{name}: no test named `{token}`"
    for target in re.findall(r"\]\(([^)#\s]+)\)", text):
        if not target.startswith(("http://", "https://")):
            assert (DOCS / name).parent.joinpath(target).exists(), f"{name}: broken link {target}"


def test_the_readme_links_every_reference_document() -> None:
    """The README's documentation section reaches every reference page."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for name in (*REFERENCE, "tape-format.md"):
        assert f"](docs/{name})" in readme, f"README.md: link docs/{name}"


def test_the_security_guide_quotes_the_assemblers_notices() -> None:
    """R-READ-6: the notices the guide quotes are the ones every contribution carries."""
    text = _doc("security.md")
    assert f"> {MEMORY_NOTICE}" in text
    assert f"> {DIRECTIVE_NOTICE}" in text


def test_ci_runs_the_example_plugin_with_its_documented_command_before_the_readme_line() -> None:
    """R-HOST-3: CI installs the example like a third party and runs the test command its
    README and the tutorial give, then the README's own test line, unchanged."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    [readme_test_line] = [line for line in readme.splitlines() if "pytest -q" in line]
    commands = [
        line
        for line in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
        if line and not line.startswith(("#", "set ", "cd "))
    ]
    assert commands[-1] == readme_test_line
    example_readme = (REPO / EXAMPLE / "README.md").read_text(encoding="utf-8")
    assert "python -m pytest -q" in example_readme
    assert "python -m pytest -q" in _doc("writing-plugins.md")
    assert any(f"pip install -q ./{EXAMPLE}" in line for line in commands[:-1])
    assert any(f"cd {EXAMPLE} &&" in line and "python -m pytest -q" in line for line in commands)


# --- the host guide's example --------------------------------------------------------------
def test_the_host_guide_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """R-HOST-1, R-READ-7: the guide's whole-host example extracts a fact from one turn and
    contributes it, in a <context-data> container, ahead of the user's next message."""
    blocks = [
        body
        for language, body in CODE_BLOCK.findall(_doc("host-guide.md"))
        if language == "python" and body.startswith("# A runnable host")
    ]
    assert len(blocks) == 1
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("AGENT_MEMORY_HOME", raising=False)
    printed = io.StringIO()
    namespace: dict[str, typing.Any] = {"__name__": "host_guide_example"}
    with contextlib.redirect_stdout(printed):
        exec(compile(blocks[0], "docs/host-guide.md", "exec"), namespace)
    memory_part, _, user_part = printed.getvalue().partition("Where do I live these days?")
    assert user_part.strip() == ""
    assert '<context-data kind="memory">' in memory_part
    assert "The user lives in Lisbon." in memory_part
