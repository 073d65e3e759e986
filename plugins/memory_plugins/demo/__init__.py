"""The offline demo behind `agent-memory demo`: a bundled conversation and the run over it.

`tape.jsonl` (package data, docs/tape-format.md) holds three sessions of one user; `scenario`
dates them and names the questions and the fact to forget; `clock` pins business time per
session so the output is the same on every run; `runner` plays the whole story through the
public host API and returns what happened, for `memory_plugins.cli.demo_cmd` to show.
"""

from __future__ import annotations

__all__: list[str] = []
