"""`agent-memory maintenance run|status` and `agent-memory audit`, tried as a user would
(R-HOST-2, R-MAINT-1, R-LINEAGE-1, R-FORGET-1): two rewordings of one fact become one live
claim, the trail says why, and forgetting the survivor suppresses both texts."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import pytest
from cli_memory_support import HASHING, Cli

from memory_core.domain.claims import ClaimDraft, ClaimKind, WriteOrigin
from memory_core.services.memory import MemoryService
from memory_plugins.bootstrap import open_memory

T = TypeVar("T")

CALLED, NAMED = "The user's cat is called Miso.", "The user's cat is named Miso."
# The hashing embedder scores the two rewordings near 0.8 (the local model near 0.95).
LOOSE = HASHING + "\n[settings]\nmerge_similarity_threshold = 0.5\n"


@pytest.fixture
def cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Cli:
    return Cli(tmp_path, capsys, LOOSE)


def test_a_pass_merges_two_rewordings_and_delete_forgets_both(cli: Cli) -> None:
    """Issue 12's user story, offline: two rewordings, one pass, one live claim, a merge
    edge in its history, and deleting it suppresses a replay of both (R-LINEAGE-1,
    R-FORGET-1)."""
    cli.json("remember", "--agent", "A", CALLED)
    cli.json("remember", "--agent", "A", NAMED)

    report = cli.json("maintenance", "run", "--agent", "A", "--heavy")

    assert (report["mode"], report["merged"], report["skipped"]) == ("cheap", 1, "missing-model")
    (live,) = cli.json("list", "--agent", "A")["claims"]
    assert live["content"] == NAMED
    events = cli.json("audit", "--agent", "A")["events"]
    merge = next(e for e in events if e["event"] == "memory/merge")
    assert merge["memory_id"] == live["id"] and "retired" in merge["refs"]
    status = cli.json("maintenance", "status", "--agent", "A")
    assert status["last_passes"][0]["refs"]["merged"] == 1
    history = cli.json("history", live["id"], "--agent", "A")
    retired = merge["refs"]["retired"]
    assert [(e["parent_id"], e["kind"], e["child_id"]) for e in history["derivations"]] == [
        (retired, "merge", live["id"])
    ]
    cli.json("delete", "--agent", "A", live["id"])
    for text in (CALLED, NAMED):
        assert cli.json("remember", "--agent", "A", text)["status"] == "suppressed", text


def test_conflicts_list_and_resolve(cli: Cli) -> None:
    """§7.8: an open challenge is listed; resolving it keeps the chosen claim live."""
    target = cli.json("remember", "--agent", "A", "The cat is called Luna.")["claim"]
    cli.json("remember", "--agent", "A", "The dog is called Rex.")

    async def challenge(memory: MemoryService) -> str:
        outcome = memory.store.challenge(
            "A",
            target["id"],
            ClaimDraft(agent_id="A", kind=ClaimKind.SEMANTIC, content="The cat is called Miso."),
            expected_revision=target["revision"],
            origin=WriteOrigin.EXTRACTION,
            now=memory.now(),
        )
        assert outcome.claim is not None
        return outcome.claim.id

    challenger = asyncio.run(_with_memory(cli, challenge))
    (conflict,) = cli.json("conflicts", "list", "--agent", "A")["conflicts"]
    assert conflict["challenger"]["id"] == challenger
    result = cli.json("conflicts", "resolve", "--agent", "A", challenger, "--keep", "challenger")
    assert result["standing"]["id"] == challenger
    live = {c["content"] for c in cli.json("list", "--agent", "A")["claims"]}
    assert live == {"The cat is called Miso.", "The dog is called Rex."}
    assert cli.json("conflicts", "list", "--agent", "A")["conflicts"] == []


async def _with_memory(cli: Cli, work: Callable[[MemoryService], Awaitable[T]]) -> T:
    """The CLI's data directory opened in-process: a challenge has no command of its own
    (the decision step writes it during ingestion)."""
    memory = open_memory(cli.data_dir, config=cli.config)
    try:
        return await work(memory)
    finally:
        await memory.aclose()


def test_persona_show_approve_and_reject(cli: Cli) -> None:
    """§8.6: a pending draft is shown beside the (empty) active persona; approve activates
    it; reject of an unknown draft is a user error."""

    async def draft(memory: MemoryService) -> str:
        version = memory.store.draft_persona("A", "I am a careful helper.", now=memory.now())
        assert version is not None
        return version.id

    draft_id = asyncio.run(_with_memory(cli, draft))
    shown = cli.json("persona", "show", "--agent", "A")
    assert shown["active"] is None and shown["draft"]["id"] == draft_id
    approved = cli.json("persona", "approve", "--agent", "A", draft_id)
    assert approved["state"] == "active"
    assert cli.json("persona", "show", "--agent", "A")["active"]["id"] == draft_id
    code, _, _ = cli.run("persona", "reject", "--agent", "A", draft_id)
    assert code == 2


def test_persona_rollback_brings_the_previous_version_back(cli: Cli) -> None:
    """§8.6: `persona rollback` is the user's undo of an approval; with no earlier version
    it is a user error and changes nothing."""

    async def approve(memory: MemoryService, text: str) -> str:
        version = memory.store.draft_persona("A", text, now=memory.now())
        assert version is not None
        return (await memory.approve_persona("A", version.id)).id

    first = asyncio.run(_with_memory(cli, lambda m: approve(m, "I am a careful helper.")))
    code, _, _ = cli.run("persona", "rollback", "--agent", "A")
    assert code == 2
    asyncio.run(_with_memory(cli, lambda m: approve(m, "I am a quick, witty helper.")))
    restored = cli.json("persona", "rollback", "--agent", "A")
    assert (restored["id"], restored["state"]) == (first, "active")
    assert cli.json("persona", "show", "--agent", "A")["active"]["id"] == first
