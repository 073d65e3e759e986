"""How commands write: rich tables on a terminal, plain aligned text when piped, JSON on `--json`.

Commands never print directly; they hand rows or a document to `Output`, so every command
gets the three modes and the error format for free. In JSON mode stdout carries exactly one
JSON document per invocation — the result or `{"error": {"type": ..., "message": ...}}`.

Every text reaching the terminal goes through `visible` (R-HOST-2): stored memories and tape
text are third-party input, and an ANSI or OSC escape sequence printed raw would let a memory
rewrite the operator's terminal (retitle it, hide lines, plant a link). Control characters,
bidirectional overrides and lone surrogates are shown as `\\x1b`-style escapes instead.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

__all__ = ["Output", "visible"]

# C0 and C1 controls and DEL; the bidi embeddings, overrides and isolates (they reorder
# what follows, so a line can show other than what it says); lone surrogates (unprintable,
# and a UnicodeEncodeError on a UTF-8 stream).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
# The same set minus what JSON already escapes (C0), for the JSON document's text.
_UNSAFE_IN_JSON = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _escape_char(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """`text` with every character that could drive a terminal written as an escape."""
    return _UNSAFE.sub(_escape_char, text)


class Output:
    """One command invocation's writer. Streams default to the live `sys.stdout`/`stderr`."""

    def __init__(
        self,
        *,
        json_mode: bool = False,
        stdout: TextIO | None = None,
        stderr: TextIO | None = None,
        rich: bool | None = None,
    ) -> None:
        self.json_mode = json_mode
        self._stdout = stdout if stdout is not None else sys.stdout
        self._stderr = stderr if stderr is not None else sys.stderr
        # Rich formatting only for people at a terminal; pipes and files get stable text.
        self.rich = _isatty(self._stdout) if rich is None else rich
        self._console: Any = None

    # --- JSON -------------------------------------------------------------------------
    def document(self, document: Mapping[str, Any]) -> None:
        """Write the invocation's single JSON document to stdout."""
        text = json.dumps(document, indent=2, ensure_ascii=False, sort_keys=False, default=str)
        # Inside JSON strings a \uXXXX escape is the same text, and safe on a terminal.
        text = _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
        self._stdout.write(text + "\n")

    # --- text -------------------------------------------------------------------------
    def heading(self, text: str) -> None:
        text = visible(text)
        if self.rich:
            self._rich_console().print(f"[bold]{_escape(text)}[/bold]")
        else:
            self._stdout.write(f"{text}\n")

    def line(self, text: str = "", *, style: str | None = None) -> None:
        text = visible(text)
        if self.rich and style:
            self._rich_console().print(f"[{style}]{_escape(text)}[/{style}]")
        elif self.rich:
            self._rich_console().print(_escape(text))
        else:
            self._stdout.write(f"{text}\n")

    def table(
        self,
        columns: Sequence[str],
        rows: Sequence[Sequence[object]],
        *,
        title: str | None = None,
        styles: Sequence[str | None] = (),
    ) -> None:
        """Rows under column headers; `styles` (one per column) only colour a terminal."""
        cells = [["" if value is None else visible(str(value)) for value in row] for row in rows]
        title = None if title is None else visible(title)
        if self.rich:
            self._rich_table(columns, cells, title, styles)
            return
        if title:
            self._stdout.write(f"{title}\n")
        if not cells:
            self._stdout.write("  (none)\n")
            return
        headers = [column.upper() for column in columns]
        widths = [max(len(row[i]) for row in [headers, *cells]) for i in range(len(columns))]
        for row in [headers, *cells]:
            padded = "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
            self._stdout.write(f"  {padded.rstrip()}\n")

    # --- errors -----------------------------------------------------------------------
    def error(self, exc: BaseException, *, prefix: str = "error") -> None:
        """Report a failure: the JSON error document, or one line on stderr."""
        message = visible(" ".join(str(exc).split())) or type(exc).__name__
        if self.json_mode:
            self.document({"error": {"type": type(exc).__name__, "message": message}})
        else:
            self._stderr.write(f"agent-memory: {prefix}: {message}\n")

    # --- rich -------------------------------------------------------------------------
    def _rich_console(self) -> Any:
        if self._console is None:
            from rich.console import Console  # only paid for on a terminal

            self._console = Console(file=self._stdout, highlight=False)
        return self._console

    def _rich_table(
        self,
        columns: Sequence[str],
        cells: list[list[str]],
        title: str | None,
        styles: Sequence[str | None],
    ) -> None:
        from rich.table import Table

        table = Table(title=title, title_justify="left", header_style="bold")
        for index, column in enumerate(columns):
            # fold, not ellipsis: an error message cut short is no use to anyone.
            table.add_column(
                column, style=styles[index] if index < len(styles) else None, overflow="fold"
            )
        for row in cells:
            table.add_row(*(_escape(cell) for cell in row))
        if not cells:
            table.add_row(*(["(none)"] + [""] * (len(columns) - 1)))
        self._rich_console().print(table)


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _escape(text: str) -> str:
    # Plugin descriptions and errors are third-party text; "[x]" must not become markup.
    from rich.markup import escape

    return escape(text)
