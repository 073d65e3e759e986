"""Where the embedded stores keep their files: the one resolver `open_memory` and the CLI share.

Two copies once disagreed: with `AGENT_MEMORY_HOME='~/mem'` the CLI opened `$HOME/mem` and
`open_memory` a literal `~/mem` directory. Every source is expanded and made absolute here,
so the same environment opens the same directory from both doors.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["DATA_DIR_ENV", "DEFAULT_DATA_DIR", "resolve_data_dir"]

DATA_DIR_ENV = "AGENT_MEMORY_HOME"
DEFAULT_DATA_DIR = Path(".agent-memory")


def resolve_data_dir(
    explicit: str | os.PathLike[str] | None,
    configured: Path | None,
    *,
    environ: Mapping[str, str] | None = None,
) -> Path:
    """The flag or argument, then $AGENT_MEMORY_HOME, then the config file's `data_dir`,
    then `./.agent-memory`; `~` expanded, a relative path taken against the current
    directory. Nothing is created here: callers that write create it."""
    environ = os.environ if environ is None else environ
    if explicit is not None:
        chosen = Path(explicit)
    elif environ.get(DATA_DIR_ENV):
        chosen = Path(environ[DATA_DIR_ENV])
    elif configured is not None:
        chosen = configured  # already expanded and anchored at its file by the loader
    else:
        chosen = DEFAULT_DATA_DIR
    return Path.cwd() / chosen.expanduser()
