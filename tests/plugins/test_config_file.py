"""The TOML configuration file: settings, plugin choices by name, and errors naming keys.

R-ARCH-3 (choosing a plugin by name in config), SPEC §11 (every default overridable from
the config file).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import attrs
import pytest

from memory_core.domain.errors import ConfigError
from memory_core.settings import MemorySettings
from memory_plugins.config import (
    DEFAULT_PLUGINS,
    MemoryConfig,
    PluginChoice,
    load_config,
    structure_options,
)
from memory_plugins.hookspecs import PORT_FAMILIES


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def _error(path: Path) -> str:
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    return str(raised.value)


def test_valid_file_sets_settings_plugins_and_data_dir(tmp_path):
    """R-ARCH-3: a plugin is chosen by name in config, with options for its factory."""
    path = _write(
        tmp_path,
        """
        data_dir = "memory-data"

        [settings]
        top_k = 8
        weight_recency = 0.3
        half_life_semantic_days = 7

        [plugins.embedding_provider]
        name = "hashing"

        [plugins.embedding_provider.options]
        dims = 256
    """,
    )

    config = load_config(path)

    assert config.settings == MemorySettings(
        top_k=8, weight_recency=0.3, half_life_semantic_days=7.0
    )
    assert config.choice("embedding_provider") == PluginChoice(
        name="hashing", options={"dims": 256}
    )
    assert config.choice("claim_store") == PluginChoice(name="sqlite")  # default kept
    assert config.data_dir == tmp_path / "memory-data"  # relative to the file
    assert config.source == path


def test_no_file_gives_the_embedded_defaults():
    config = load_config(None)

    assert config.settings == MemorySettings()
    assert {family: config.choice(family) for family in PORT_FAMILIES} == {
        family: None if name is None else PluginChoice(name=name)
        for family, name in DEFAULT_PLUGINS.items()
    }
    assert config.choice("text_provider") is None
    assert config.choice("embedding_provider") == PluginChoice(name="local-minilm")
    assert config.data_dir is None


def test_every_setting_can_be_overridden_from_the_file(tmp_path):
    """SPEC §11: every default is overridable from the config file."""
    defaults = MemorySettings()
    fields = attrs.fields(MemorySettings)
    # TOML spells booleans in lowercase; every other default reads back from its repr.
    values = {field.name: getattr(defaults, field.name) for field in fields}
    lines = [
        f"{name} = {str(value).lower() if isinstance(value, bool) else repr(value)}"
        for name, value in values.items()
    ]
    config = load_config(_write(tmp_path, "[settings]\n" + "\n".join(lines) + "\n"))

    assert config.settings == defaults


def test_unknown_settings_key_is_named_with_a_suggestion(tmp_path):
    message = _error(
        _write(
            tmp_path,
            """
        [settings]
        topk = 3
    """,
        )
    )

    assert message == (
        f"{tmp_path / 'config.toml'}: settings.topk: unknown key (did you mean 'top_k'?)"
    )


def test_unknown_top_level_key_and_unknown_family_are_named(tmp_path):
    message = _error(
        _write(
            tmp_path,
            """
        colour = "blue"

        [plugins.embedder]
        name = "hashing"
    """,
        )
    )

    assert "colour: unknown key" in message
    assert "plugins.embedder: unknown port family (did you mean 'embedding_provider'?)" in message


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('[settings]\ntop_k = "8"\n', "settings.top_k: expected an integer, got string"),
        ("[settings]\ntop_k = 8.5\n", "settings.top_k: expected an integer, got float"),
        ("[settings]\ntop_k = true\n", "settings.top_k: expected an integer, got boolean"),
        (
            '[settings]\nweight_recency = "x"\n',
            "settings.weight_recency: expected a number, got string",
        ),
        ("settings = 3\n", "settings: expected a table, got integer"),
        ("data_dir = 3\n", "data_dir: expected a string, got integer"),
        ('[plugins]\nclock = "system"\n', "plugins.clock: expected a table, got string"),
        ("[plugins.clock]\nname = 3\n", "plugins.clock.name: expected a string, got integer"),
        (
            '[plugins.clock]\nname = "system"\noptions = 1\n',
            "plugins.clock.options: expected a table, got integer",
        ),
    ],
)
def test_wrong_type_is_named_by_key_path(tmp_path, body, expected):
    assert f"config.toml: {expected}" in _error(_write(tmp_path, body))


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("[settings]\ntop_k = 101\n", "settings.top_k: must be <= 100 (got 101)"),
        (
            "[settings]\nweight_similarity = 1.5\n",
            "settings.weight_similarity: must be <= 1.0 (got 1.5)",
        ),
        (
            "[settings]\npersona_floor_tokens = 400\n",
            "settings.persona_floor_tokens: must not exceed persona_ceiling_tokens",
        ),
        ('[plugins.clock]\nname = "Big Ben"\n', "plugins.clock.name: must be 1-64 characters"),
        ("[plugins.clock]\noptions = {}\n", "plugins.clock.name: required key missing"),
    ],
)
def test_invalid_value_is_named_by_key_path(tmp_path, body, expected):
    assert f"config.toml: {expected}" in _error(_write(tmp_path, body))


def test_all_problems_are_reported_at_once(tmp_path):
    message = _error(
        _write(
            tmp_path,
            """
        [settings]
        top_k = "many"
        rrf = 60
    """,
        )
    )

    assert "settings.top_k: expected an integer" in message
    assert "settings.rrf: unknown key" in message


def test_missing_file_and_bad_toml_name_the_file(tmp_path):
    missing = tmp_path / "absent.toml"
    assert _error(missing).startswith(f"{missing}: cannot read config file")

    broken = _write(tmp_path, "[settings\n")
    assert _error(broken).startswith(f"{broken}: not valid TOML")


def test_unknown_family_lookup_is_a_config_error():
    with pytest.raises(ConfigError, match="unknown port family 'clocks'"):
        MemoryConfig().choice("clocks")


@attrs.frozen(kw_only=True)
class _Options:
    dims: int = 384
    normalise: bool = True


def test_structure_options_gives_a_typed_view_with_defaults():
    assert structure_options({"dims": 256}, _Options, family="embedding_provider") == _Options(
        dims=256
    )


def test_structure_options_errors_name_the_options_key():
    with pytest.raises(ConfigError) as raised:
        structure_options({"dims": "big", "norm": 1}, _Options, family="embedding_provider")

    assert str(raised.value) == (
        "plugins.embedding_provider.options.dims: expected an integer, got string; "
        "plugins.embedding_provider.options.norm: unknown key (did you mean 'normalise'?)"
    )
