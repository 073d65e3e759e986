"""The configuration file: TOML -> `MemoryConfig` (settings, plugin choices, data directory).

```toml
data_dir = "~/.agent-memory"          # optional; relative paths are against this file

[settings]                             # any MemorySettings field (SPEC §11)
top_k = 8

[plugins.embedding_provider]           # choose a plugin by name, per port family
name = "hashing"
[plugins.embedding_provider.options]   # handed to the factory as FactoryContext.options
dims = 256
```

One cattrs converter serves this boundary. It forbids unknown keys and is strict about
TOML types (an integer setting refuses `3.5` and `true` instead of truncating them), and
every problem becomes one ConfigError naming the file and the key path, e.g.
`config.toml: settings.top_k: must be <= 100 (got 101)`. Plugin factories read their own
options through `structure_options`, which reports errors the same way.
"""

from __future__ import annotations

import collections.abc
import difflib
import os
import re
import tomllib
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import attrs
import cattrs
from cattrs.errors import ClassValidationError, ForbiddenExtraKeysError, IterableValidationError
from cattrs.gen import make_dict_structure_fn, make_mapping_structure_fn

from memory_core.domain.errors import ConfigError, ValidationError
from memory_core.settings import MemorySettings
from memory_plugins.hookspecs import PORT_FAMILIES
from memory_plugins.registry import PLUGIN_NAME_PATTERN

__all__ = [
    "DEFAULT_PLUGINS",
    "MemoryConfig",
    "PluginChoice",
    "build_from_options",
    "load_config",
    "parse_config",
    "structure_options",
]

T = TypeVar("T")

# The embedded, offline default per family (R-HOST-2); None means "not used unless chosen".
DEFAULT_PLUGINS: Mapping[str, str | None] = {
    "claim_store": "sqlite",
    "cursor_store": "sqlite",
    "vector_store": "duckdb",
    "embedding_provider": "local-minilm",
    "text_provider": None,
    "extractor": "rules",
    "tape": None,
    "clock": "system",
    "secret_policy": "patterns",
}
assert set(DEFAULT_PLUGINS) == set(PORT_FAMILIES), "every family needs a default (or None)"


def _plugin_name(_: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not PLUGIN_NAME_PATTERN.fullmatch(value):
        raise ValueError(
            f"'{attribute.name}' must be 1-64 characters of a-z, 0-9, '.', '_' or '-', "
            f"starting with a letter or digit (got {value!r})"
        )


@attrs.frozen(kw_only=True)
class PluginChoice:
    """Which registration of a family to use, and the options its factory receives."""

    name: str = attrs.field(validator=_plugin_name)
    options: dict[str, Any] = attrs.field(factory=dict, converter=dict)


def _default_choices() -> dict[str, PluginChoice]:
    return {
        family: PluginChoice(name=name)
        for family, name in DEFAULT_PLUGINS.items()
        if name is not None
    }


@attrs.frozen(kw_only=True)
class MemoryConfig:
    """Everything the composition root reads from the config file, defaults filled in."""

    settings: MemorySettings = attrs.field(factory=MemorySettings)
    plugins: dict[str, PluginChoice] = attrs.field(factory=_default_choices)
    data_dir: Path | None = None  # None: the CLI's --data-dir / AGENT_MEMORY_HOME / default
    source: Path | None = None  # the file this came from, for messages

    def choice(self, family: str) -> PluginChoice | None:
        """The chosen plugin of `family`, or None when the family is unused."""
        if family not in PORT_FAMILIES:
            raise ConfigError(f"unknown port family {family!r}")
        return self.plugins.get(family)


@attrs.frozen(kw_only=True)
class _ConfigFile:
    """The file's shape exactly; anything else is an unknown key."""

    data_dir: str | None = None
    settings: MemorySettings = attrs.field(factory=MemorySettings)
    plugins: dict[str, PluginChoice] = attrs.field(factory=dict)


def load_config(path: str | os.PathLike[str] | None) -> MemoryConfig:
    """Read a TOML config file; `None` gives the defaults. Raises ConfigError naming the key."""
    if path is None:
        return MemoryConfig()
    file = Path(path)
    try:
        with file.open("rb") as handle:
            data = tomllib.load(handle)
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read config file ({exc.strerror or exc})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file}: not valid TOML ({exc})") from exc
    except UnicodeDecodeError as exc:  # TOML is UTF-8 text (R-HOST-2: one line, not a trace)
        raise ConfigError(f"{file}: not UTF-8 text (byte {exc.start})") from exc
    return parse_config(data, source=file)


def parse_config(data: Mapping[str, Any], *, source: Path | None = None) -> MemoryConfig:
    """Build a MemoryConfig from an already parsed TOML document."""
    label = str(source) if source is not None else "<config>"
    problems: list[str] = []
    if isinstance(data, Mapping):
        plugins = data.get("plugins")
        if isinstance(plugins, Mapping):
            for family in plugins:
                if family not in PORT_FAMILIES:
                    problems.append(
                        f"plugins.{family}: unknown port family"
                        f"{_suggest(family, PORT_FAMILIES)} (families: {', '.join(PORT_FAMILIES)})"
                    )
            data = {**data, "plugins": {k: v for k, v in plugins.items() if k in PORT_FAMILIES}}
    try:
        parsed = _converter.structure(data, _ConfigFile)
    except Exception as exc:
        problems.extend(_describe(exc, ()))
        parsed = None
    if problems or parsed is None:
        raise ConfigError(f"{label}: {'; '.join(problems)}")
    data_dir = None
    if parsed.data_dir is not None:
        data_dir = Path(parsed.data_dir).expanduser()
        if source is not None and not data_dir.is_absolute():
            data_dir = source.parent / data_dir
    return MemoryConfig(
        settings=parsed.settings,
        plugins={**_default_choices(), **parsed.plugins},
        data_dir=data_dir,
        source=source,
    )


def structure_options(options: Mapping[str, Any], cls: type[T], *, family: str) -> T:
    """A plugin factory's typed view of its `[plugins.<family>.options]` table.

    `cls` is an attrs class with defaults; unknown keys, wrong types and invalid values raise
    ConfigError naming `plugins.<family>.options.<key>`.
    """
    try:
        return _converter.structure(dict(options), cls)
    except Exception as exc:
        problems = _describe(exc, ("plugins", family, "options"))
        raise ConfigError("; ".join(problems)) from exc


# --- the converter ------------------------------------------------------------------------
_TYPE_NAMES = {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}


def _toml_type(value: object) -> str:
    names = {
        bool: "boolean",
        int: "integer",
        float: "float",
        str: "string",
        dict: "table",
        list: "array",
    }
    return names.get(type(value), type(value).__name__)


def _strict_hook(kind: type, accepted: tuple[type, ...]) -> Any:
    # cattrs would run int(3.5) == 3 or int(True) == 1; a config file deserves a refusal.
    def structure(value: object, _: object) -> object:
        if (isinstance(value, bool) and kind is not bool) or not isinstance(value, accepted):
            raise TypeError(f"expected {_TYPE_NAMES[kind]}, got {_toml_type(value)}")
        return kind(value)

    return structure


def _tables_only(structure: Any) -> Any:
    # Without this a scalar where a table belongs fails deep inside cattrs with
    # "argument of type 'int' is not iterable".
    def checked(value: object, target: object) -> object:
        if not isinstance(value, Mapping):
            raise TypeError(f"expected a table, got {_toml_type(value)}")
        return structure(value, target)

    return checked


def _is_mapping_type(target: object) -> bool:
    return typing.get_origin(target) in (dict, Mapping, collections.abc.Mapping)


def _literal_hook(target: Any) -> Any:
    allowed = typing.get_args(target)

    def structure(value: object, _: object) -> object:
        # Compare type too: TOML `true` must not pass as Literal[1].
        if not any(type(value) is type(choice) and value == choice for choice in allowed):
            choices = ", ".join(repr(choice) for choice in allowed)
            raise ValueError(f"must be one of {choices} (got {value!r})")
        return value

    return structure


def _make_converter() -> cattrs.Converter:
    converter = cattrs.Converter(forbid_extra_keys=True)
    converter.register_structure_hook_factory(
        lambda target: typing.get_origin(target) is typing.Literal, _literal_hook
    )
    converter.register_structure_hook_factory(
        attrs.has,
        lambda cls: _tables_only(
            make_dict_structure_fn(
                cls,
                converter,
                _cattrs_forbid_extra_keys=True,
                _cattrs_detailed_validation=converter.detailed_validation,
            )
        ),
    )
    converter.register_structure_hook_factory(
        _is_mapping_type,
        lambda target: _tables_only(
            make_mapping_structure_fn(
                target,
                converter,
                detailed_validation=converter.detailed_validation,
            )
        ),
    )
    converter.register_structure_hook(bool, _strict_hook(bool, (bool,)))
    converter.register_structure_hook(int, _strict_hook(int, (int,)))
    converter.register_structure_hook(float, _strict_hook(float, (int, float)))
    converter.register_structure_hook(str, _strict_hook(str, (str,)))
    return converter


_converter = _make_converter()

# --- errors -> "key.path: reason" ------------------------------------------------------------
_LEADING_FIELD = re.compile(r"^'?([A-Za-z_][A-Za-z0-9_]*)'?:? (.+)$", re.DOTALL)


def _describe(exc: BaseException, path: tuple[str, ...], cls: type | None = None) -> list[str]:
    """Walk cattrs' exception groups (as `cattrs.transform_error` does) into readable lines."""
    if isinstance(exc, ClassValidationError | IterableValidationError):
        owner = exc.cl if isinstance(exc, ClassValidationError) else None
        lines: list[str] = []
        with_notes, without = exc.group_exceptions()
        for sub, note in with_notes:
            step = str(getattr(note, "name", None) or getattr(note, "index", ""))
            lines.extend(_describe(sub, (*path, step), None))
        for sub in without:
            lines.extend(_describe(sub, path, owner))
        return lines
    if isinstance(exc, ForbiddenExtraKeysError):
        known = [field.name for field in attrs.fields(exc.cl)] if attrs.has(exc.cl) else []
        return [
            _line((*path, key), f"unknown key{_suggest(key, known)}")
            for key in sorted(exc.extra_fields)
        ]
    if isinstance(exc, KeyError):
        return [_line(path, "required key missing")]
    if isinstance(exc, ValidationError):
        return [_line((*path, *exc.field.split(".")), exc.reason)]
    message = exc.args[0] if exc.args and isinstance(exc.args[0], str) else str(exc)
    # attrs validators and __attrs_post_init__ checks run in __init__, where cattrs no longer
    # knows the field; their messages start with it ("'top_k' must be <= 100: 101").
    match = _LEADING_FIELD.match(message)
    if cls is not None and attrs.has(cls) and match and match[1] in attrs.fields_dict(cls):
        reason = re.sub(r"^(must be [<>=]+ \S+): (.+)$", r"\1 (got \2)", match[2])
        return [_line((*path, match[1]), reason)]
    return [_line(path, message)]


def _line(path: tuple[str, ...], reason: str) -> str:
    return f"{'.'.join(path)}: {reason}" if path else reason


def _suggest(word: str, choices: Any) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def build_from_options(make: Callable[[], T], *, family: str) -> T:
    """Call a plugin's constructor; its ValidationError is re-addressed to the config key it
    came from (`plugins.<family>.options.<field>`)."""
    try:
        return make()
    except ValidationError as exc:
        raise ConfigError(f"plugins.{family}.options.{exc.field}: {exc.reason}") from None
