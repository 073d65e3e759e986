"""What a command receives: parsed arguments, the output writer, config, data dir, plugins."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path

from memory_plugins.cli.output import Output
from memory_plugins.config import MemoryConfig
from memory_plugins.data_dir import DATA_DIR_ENV, DEFAULT_DATA_DIR, resolve_data_dir
from memory_plugins.loader import LoadResult, load_plugins

__all__ = ["DATA_DIR_ENV", "DEFAULT_DATA_DIR", "CommandContext"]


class CommandContext:
    """Built once per invocation by `main`; plugins load lazily, on a command's first use."""

    def __init__(
        self,
        *,
        args: argparse.Namespace,
        out: Output,
        config: MemoryConfig,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.args = args
        self.out = out
        self.config = config
        self._environ = os.environ if environ is None else environ

    @cached_property
    def data_dir(self) -> Path:
        """`--data-dir`, else $AGENT_MEMORY_HOME, else the config's `data_dir`, else
        `./.agent-memory` — resolved as `open_memory` resolves it. Not created here."""
        return resolve_data_dir(
            getattr(self.args, "data_dir", None), self.config.data_dir, environ=self._environ
        )

    @cached_property
    def plugins(self) -> LoadResult:
        """Installed plugins, strict when `--strict-plugins` was given."""
        return load_plugins(strict=bool(getattr(self.args, "strict_plugins", False)))
