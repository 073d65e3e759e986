"""The `agent-memory` CLI skeleton: plugins listing, output modes, exit codes (the demo:
tests/integration/test_demo.py).

R-HOST-2 (a CLI that lists plugins, with `--json` for scripts); R-ARCH-3 (listing plugins
and a clear error for a broken one).
"""

from __future__ import annotations

import io
import json
import types
from functools import partial
from pathlib import Path

import pytest

from memory_core.domain.errors import ConfigError
from memory_plugins.cli import context as cli_context
from memory_plugins.cli import main as cli_main
from memory_plugins.cli.context import CommandContext
from memory_plugins.cli.main import main
from memory_plugins.cli.output import Output
from memory_plugins.config import MemoryConfig
from memory_plugins.loader import load_plugins

BROKEN_MODULE = """
    raise ImportError("needs libfoo >= 2")
"""


@pytest.fixture
def broken_plugin_installed(fake_dist) -> None:
    fake_dist(
        "broken-plugin",
        "2.3.1",
        entry_points={"broken": "am_cli_broken"},
        files={"am_cli_broken": BROKEN_MODULE},
    )


def test_plugins_lists_registrations_and_failures_as_plain_text(broken_plugin_installed, capsys):
    """R-HOST-2, R-ARCH-3: `plugins` lists every registration and every broken plugin."""
    assert main(["plugins"]) == 0

    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines()]
    [system] = [row for row in rows if row[:2] == ["clock", "system"]]
    assert system[2] == "agent-memory"  # distribution column
    assert "Failed to load, skipped" in out
    [broken] = [line for line in out.splitlines() if line.strip().startswith("broken ")]
    assert "broken-plugin" in broken
    assert "2.3.1" in broken
    assert "ImportError: needs libfoo >= 2" in broken
    assert "\x1b[" not in out  # piped: no colour codes


def test_plugins_json_is_one_document_with_registrations_and_failures(
    broken_plugin_installed, capsys
):
    """R-HOST-2: `--json` output for scripts."""
    assert main(["--json", "plugins"]) == 0

    document = json.loads(capsys.readouterr().out)
    assert set(document) == {"registrations", "failures"}
    system = next(
        r for r in document["registrations"] if (r["family"], r["name"]) == ("clock", "system")
    )
    assert system["distribution"] == "agent-memory"
    assert system["module"] == "memory_plugins.builtin.clocks"
    assert {
        "entry_point": "broken",
        "distribution": "broken-plugin",
        "version": "2.3.1",
        "error": "ImportError: needs libfoo >= 2",
    } in document["failures"]


def test_global_options_are_accepted_after_the_command_too(capsys):
    assert main(["plugins", "--family", "clock", "--json"]) == 0

    document = json.loads(capsys.readouterr().out)
    assert {r["family"] for r in document["registrations"]} == {"clock"}


def test_strict_plugins_turns_a_broken_plugin_into_exit_2_with_one_line(
    broken_plugin_installed, capsys, monkeypatch
):
    """R-ARCH-3: strict mode names the plugin, distribution and import error."""
    # Only the fake distribution, so the result does not depend on what else is installed.
    monkeypatch.setattr(
        cli_context, "load_plugins", partial(load_plugins, distributions=["broken-plugin"])
    )

    assert main(["--strict-plugins", "plugins"]) == 2

    captured = capsys.readouterr()
    assert captured.out == ""
    [line] = captured.err.splitlines()
    assert line.startswith("agent-memory: error: ")
    assert "'broken'" in line
    assert "broken-plugin 2.3.1" in line
    assert "ImportError: needs libfoo >= 2" in line


def test_library_error_exits_2_with_one_readable_line(tmp_path, capsys):
    config = tmp_path / "config.toml"
    config.write_text("[settings]\ntop_k = 1000\n", encoding="utf-8")

    assert main(["--config", str(config), "plugins"]) == 2

    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        f"agent-memory: error: {config}: settings.top_k: must be <= 100 (got 1000)"
    ]


def test_library_error_in_json_mode_is_an_error_document(tmp_path, capsys):
    missing = tmp_path / "nope.toml"

    assert main(["--json", "--config", str(missing), "plugins"]) == 2

    document = json.loads(capsys.readouterr().out)
    assert document["error"]["type"] == "ConfigError"
    assert document["error"]["message"].startswith(f"{missing}: cannot read config file")


def _command_module(func) -> types.ModuleType:
    module = types.ModuleType("fake_cmd")

    def register(subparsers) -> None:
        subparsers.add_parser("explode").set_defaults(func=func)

    module.register = register
    return module


def test_unexpected_exception_exits_1_with_a_traceback(monkeypatch, capsys):
    def explode(ctx: CommandContext) -> int:
        raise RuntimeError("bug")

    monkeypatch.setattr(cli_main, "COMMAND_MODULES", (_command_module(explode),))

    assert main(["explode"]) == 1

    err = capsys.readouterr().err
    assert "Traceback" in err
    assert err.splitlines()[-1] == "agent-memory: internal error: bug"


def test_commands_receive_context_and_their_exit_code_is_returned(monkeypatch, capsys):
    seen = {}

    def record(ctx: CommandContext) -> int:
        seen["json"] = ctx.out.json_mode
        seen["config"] = ctx.config
        return 3

    monkeypatch.setattr(cli_main, "COMMAND_MODULES", (_command_module(record),))

    assert main(["explode", "--json"]) == 3
    assert seen == {"json": True, "config": MemoryConfig()}


def test_usage_error_exits_2(capsys):
    assert main(["no-such-command"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_help_exits_0_and_lists_the_commands(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "plugins" in out
    assert "demo" in out


def _context(args: list[str], environ: dict[str, str], config: MemoryConfig) -> CommandContext:
    parsed = cli_main.build_parser().parse_args([*args, "plugins"])
    return CommandContext(args=parsed, out=Output(), config=config, environ=environ)


def test_data_dir_precedence_is_flag_then_env_then_config_then_default(tmp_path):
    from_config = MemoryConfig(data_dir=tmp_path / "from-config")
    env = {"AGENT_MEMORY_HOME": str(tmp_path / "from-env")}

    assert _context(["--data-dir", "flag"], env, from_config).data_dir == Path.cwd() / "flag"
    assert _context([], env, from_config).data_dir == tmp_path / "from-env"
    assert _context([], {}, from_config).data_dir == tmp_path / "from-config"
    assert _context([], {}, MemoryConfig()).data_dir == Path.cwd() / ".agent-memory"


def test_text_table_is_aligned_and_empty_tables_say_so():
    stream = io.StringIO()
    out = Output(stdout=stream)

    out.table(("name", "value"), [("a", 1), ("longer", None)], title="T")
    out.table(("name",), [], title="Empty")

    assert stream.getvalue().splitlines() == [
        "T",
        "  NAME    VALUE",
        "  a       1",
        "  longer",
        "Empty",
        "  (none)",
    ]


def test_rich_output_escapes_markup_in_third_party_text():
    stream = io.StringIO()
    out = Output(stdout=stream, rich=True)

    out.table(("error",), [("[red]not markup[/red]",)])

    assert "[red]not markup[/red]" in stream.getvalue()


def test_error_lines_collapse_newlines(capsys):
    out = Output(json_mode=False)
    out.error(ConfigError("first line\nsecond line"))

    assert capsys.readouterr().err == "agent-memory: error: first line second line\n"


def test_parser_defaults_are_not_reset_by_subcommand_defaults():
    args = cli_main.build_parser().parse_args(["--json", "--data-dir", "d", "plugins"])

    assert args.json is True
    assert args.data_dir == Path("d")


def test_nested_actions_take_the_global_options_from_the_command_table():
    """R-HOST-2: `CommandTable.global_options` is public; a command with nested actions
    (`directive list`) gives them the globals, so they are accepted after the action too."""
    parser = cli_main.build_parser()
    args = parser.parse_args(["directive", "list", "--agent", "A", "--json", "--data-dir", "d"])

    assert args.json is True
    assert args.data_dir == Path("d")


def test_command_modules_receive_a_command_table_with_the_global_options(monkeypatch):
    """R-HOST-2: `register` gets a `CommandTable`; its `global_options` parser carries the
    globals with suppressed defaults, so a nested parent never resets an earlier value."""
    seen = []
    module = types.ModuleType("probe_cmd")
    module.register = seen.append
    monkeypatch.setattr(cli_main, "COMMAND_MODULES", (module,))
    cli_main.build_parser()

    (table,) = seen
    assert isinstance(table, cli_main.CommandTable)
    parsed = table.global_options.parse_args([])
    assert vars(parsed) == {}
    assert table.global_options.parse_args(["--json"]).json is True
