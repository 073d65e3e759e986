"""`agent-memory demo`: the whole product in a few seconds, offline (R-HOST-2).

Ingests the bundled three-session conversation (`memory_plugins/demo/tape.jsonl`) with a
pinned date per session, shows what was extracted, approves the draft directive as the
user, prepares three turns and prints each contribution with its manifest, deletes one fact
and replays the session that taught it (the fact stays gone), and checks that the API key
the user pasted is in no file memory wrote. Tables and colour on a terminal, plain text
when piped, one JSON document with `--json`. Files go to a temporary directory removed at
the end, unless `--data-dir` names a new one to keep for inspection.
"""

from __future__ import annotations

import asyncio
from typing import Any

from memory_core.domain.serialization import unstructure
from memory_plugins.cli.context import CommandContext
from memory_plugins.cli.contribution_cmd import render_contribution
from memory_plugins.cli.ingest_cmd import render_claims
from memory_plugins.cli.output import Output
from memory_plugins.demo import scenario
from memory_plugins.demo.runner import DemoResult, run_demo

__all__ = ["EXIT_DEMO_FAILED", "register", "run"]

EXIT_DEMO_FAILED = 1  # a promise the demo shows did not hold: a bug


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="run the offline end-to-end demo (a few seconds)",
        description="Ingest a bundled conversation, show what was remembered, prepare three "
        "turns with their manifests, forget a fact and show that a replay does not bring it "
        "back. Uses a temporary directory unless --data-dir names a new one to keep.",
    )
    parser.add_argument(
        "--offline-embedder",
        choices=("hashing",),
        help="use the model-free hashing embedder (for machines where the local model cannot load)",
    )
    parser.set_defaults(func=run)


def run(ctx: CommandContext) -> int:
    result = asyncio.run(
        run_demo(
            ctx.config,
            data_dir=getattr(ctx.args, "data_dir", None),
            embedder=ctx.args.offline_embedder,
            strict_plugins=bool(getattr(ctx.args, "strict_plugins", False)),
        )
    )
    held = _promises_held(result)
    if ctx.out.json_mode:
        document = unstructure(result)
        document["ok"] = held
        ctx.out.document(document)
    else:
        _render(ctx.out, result, held)
    return 0 if held else EXIT_DEMO_FAILED


def _promises_held(result: DemoResult) -> bool:
    forgotten = result.forget.claim.content
    return (
        not result.forget.back_after_replay
        and forgotten not in result.forget.recalled_after
        and not result.privacy.files_with_secret
    )


def _render(out: Output, result: DemoResult, held: bool) -> None:
    out.heading(f"agent-memory demo — embedder: {result.embedder}")
    where = "kept" if result.kept else "removed at the end; --data-dir DIR keeps the files"
    out.line(f"data directory: {result.data_dir} ({where})", style="dim")

    out.line()
    out.heading("1. Ingesting three sessions with Ana, each on its own date")
    out.table(
        ("session", "date", "msgs", "stored", "superseded", "refused", "drafts"),
        [
            (
                run.session,
                run.date,
                run.messages,
                len(run.summary.stored),
                len(run.summary.superseded),
                sum(run.summary.rejected.values()),
                len(run.summary.directive_drafts),
            )
            for run in result.sessions
        ],
        styles=("cyan", "dim", None, "green", "yellow", "red", None),
    )

    out.line()
    out.heading(f"2. What was extracted (as of {scenario.CHAT_DATE.date().isoformat()})")
    render_claims(out, result.extracted, title="")
    refused = sum(
        count
        for run in result.sessions
        for reason, count in run.summary.rejected.items()
        if "secret" in reason
    )
    if refused:
        out.line(
            f"{refused} extracted candidate(s) carried the API key pasted in "
            f"{scenario.REPLAY_SOURCE}: refused as secret-like, never stored.",
            style="dim",
        )

    out.line()
    out.heading("3. Directives: extraction only suggests, the user decides")
    for draft in result.drafts:
        out.line(f"  draft:    {draft}", style="yellow")
    out.line(f"  approved: {result.approved}  (by the user)", style="green")

    shown: dict[tuple[str | None, str | None], int] = {}
    for number, turn in enumerate(result.turns, start=1):
        out.line()
        out.heading(f"4.{number} Turn in a new session — the user asks: {turn.message}")
        texts = (turn.memory_text, turn.directive_text)
        if texts in shown:
            # Working memory covers this small history: say so instead of printing it again.
            out.line(f"Memory and directive blocks: the same as in 4.{shown[texts]}", style="dim")
        shown.setdefault(texts, number)
        render_contribution(out, *texts, turn.manifest, turn.names, blocks=shown[texts] == number)

    forget = result.forget
    replay = forget.replay
    out.line()
    out.heading("5. Forgetting survives a replay")
    out.line(f"  deleted: {forget.claim.content} ({forget.tombstones} tombstones: hashes, no text)")
    out.line(f"  recall {forget.query!r} before: {_listing(forget.recalled_before)}")
    out.line(f"  recall {forget.query!r} after:  {_listing(forget.recalled_after)}")
    out.line(
        f"  replayed {scenario.REPLAY_SOURCE} as {replay.session}: {len(replay.stored)} stored, "
        f"{replay.duplicates} already known, {replay.suppressed} suppressed by a tombstone"
    )
    out.line(
        "  the deleted fact came back"
        if forget.back_after_replay
        else "  the deleted fact did not come back",
        style="bold red" if forget.back_after_replay else "green",
    )

    privacy = result.privacy
    out.line()
    out.heading("6. Privacy check")
    if privacy.files_with_secret:
        out.line(f"  the API key is in: {', '.join(privacy.files_with_secret)}", style="bold red")
    else:
        out.line(
            f"  the API key shared in the conversation is in none of the "
            f"{privacy.files_scanned} files memory wrote",
            style="green",
        )
    out.line()
    out.line("demo complete" if held else "demo FAILED: see above", style="bold")


def _listing(contents: tuple[str, ...]) -> str:
    return "; ".join(contents) if contents else "(nothing)"
