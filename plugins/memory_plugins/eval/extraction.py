"""`agent-memory eval extraction FILE`: what the extractor stores from plainly said things.

Each conversation of a labelled corpus (`extraction_format`) runs through the product: the
configured extractor (default `rules`) behind the real ingestion runtime, decision step,
SQLite store and retrieval, one agent per conversation so that slots never cross. Measured:

- recall — the share of expected facts a stored claim holds (all its words, any case);
- recall@k — the share of current (not superseded) expected facts whose query, through
  `MemoryService.recall` (the production read path), returns such a claim in its top k;
- precision — the share of live claims that hold an expected fact of the message they came
  from and no `retired` phrase; a claim from a message labelled `none` is always wrong;
- noise — the kept utterances ("The user said: ...", a disclosure no rule understood):
  their share of live claims, and how many recall results they took for a query they do
  not answer.

Per category (fact categories, and the `none` categories of messages that must store
nothing), as a table and JSON. The gates: recall@k and precision.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from memory_core.domain.claims import Claim, ClaimKind
from memory_core.services.memory import MemoryService
from memory_core.services.write.ingestion.types import TurnOutcome, TurnStatus
from memory_plugins.bootstrap import open_memory
from memory_plugins.config import MemoryConfig, PluginChoice
from memory_plugins.context import FactoryContext
from memory_plugins.eval.extraction_format import Conversation, Corpus, LabelledMessage
from memory_plugins.eval.harness import EVAL_EPOCH, FixedClock, eval_config, eval_registry
from memory_plugins.eval.scores import Gate

__all__ = [
    "DEFAULT_K",
    "KEPT_PREFIX",
    "CategoryRow",
    "ExtractionGates",
    "ExtractionReport",
    "Miss",
    "run_extraction",
]

DEFAULT_K = 5
_SETTLED = TurnOutcome(status=TurnStatus.COMPLETED, had_tool_use=True)
_LIST_LIMIT = 1000
# How the rules extractor words an utterance it keeps as said (extractors/rules_kept.py;
# the eval is a client of the service and reads claims, not the adapter — a test keeps the
# two in step).
KEPT_PREFIX = "The user said"


@attrs.frozen(kw_only=True)
class ExtractionGates:
    recall_at_k: float = 0.90
    precision: float = 0.95


@attrs.frozen(kw_only=True)
class CategoryRow:
    category: str
    expected: int = 0  # facts
    silent: int = 0  # messages labelled `none` (must store nothing)
    stored: int = 0  # facts a claim holds
    current: int = 0  # facts recall is asked for
    found_at_k: int = 0
    claims: int = 0  # live claims attributed to the category
    wrong: int = 0

    @property
    def recall(self) -> float:
        return self.stored / self.expected if self.expected else 1.0

    @property
    def recall_at_k(self) -> float:
        return self.found_at_k / self.current if self.current else 1.0

    @property
    def precision(self) -> float:
        return (self.claims - self.wrong) / self.claims if self.claims else 1.0


@attrs.frozen(kw_only=True)
class Miss:
    """One failure, with the text that caused it (the corpus is the user's own file)."""

    conversation: str
    kind: str  # "not-stored" | "not-recalled" | "wrong-claim"
    category: str
    message: str
    detail: str


@attrs.frozen(kw_only=True)
class ExtractionReport:
    file: str
    extractor: str
    embedder: str
    k: int
    conversations: int
    messages: int
    categories: tuple[CategoryRow, ...]
    total: CategoryRow
    episodic_claims: int
    verbatim_claims: int
    recalled_items: int
    kept_in_recall: int  # kept utterances recalled for a query they do not answer
    misses: tuple[Miss, ...]
    gates: tuple[Gate, ...]

    @property
    def passed(self) -> bool:
        return all(gate.passed for gate in self.gates)

    def document(self) -> dict[str, Any]:
        def row(r: CategoryRow) -> dict[str, Any]:
            return {
                **attrs.asdict(r),
                "recall": r.recall,
                "recall_at_k": r.recall_at_k,
                "precision": r.precision,
            }

        return {
            "suite": "extraction",
            "passed": self.passed,
            "file": self.file,
            "extractor": self.extractor,
            "embedder": self.embedder,
            "k": self.k,
            "conversations": self.conversations,
            "messages": self.messages,
            "total": row(self.total),
            "categories": [row(r) for r in self.categories],
            "noise": {
                "episodic_claims": self.episodic_claims,
                "verbatim_claims": self.verbatim_claims,
                "share_of_live_claims": self.verbatim_claims / self.total.claims
                if self.total.claims
                else 0.0,
                "recalled_items": self.recalled_items,
                "kept_in_recall": self.kept_in_recall,
            },
            "gates": [attrs.asdict(g) for g in self.gates],
            "misses": [attrs.asdict(m) for m in self.misses],
        }


def _holds(claim: Claim, words: Sequence[str]) -> bool:
    text = claim.content.casefold()
    return all(word.casefold() in text for word in words)


class _Tally:
    def __init__(self) -> None:
        self.rows: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        self.misses: list[Miss] = []
        self.episodic = self.verbatim = 0
        self.shown = self.kept_shown = 0  # recall results, and kept utterances among them

    def add(self, category: str, field: str) -> None:
        self.rows[category][field] += 1

    def frozen(self) -> tuple[tuple[CategoryRow, ...], CategoryRow]:
        rows = tuple(CategoryRow(category=c, **dict(f)) for c, f in sorted(self.rows.items()))
        fields = ("expected", "silent", "stored", "current", "found_at_k", "claims", "wrong")
        total = CategoryRow(category="all", **{f: sum(getattr(r, f) for r in rows) for f in fields})
        return rows, total


async def _converse(
    memory: MemoryService, tape: Any, agent: str, conversation: Conversation
) -> dict[str, LabelledMessage]:
    """Write the conversation to the tape, settling turns where it says; entry id -> label."""
    session = f"{agent}-session"
    runtime = memory.session(agent, session)
    labels: dict[str, LabelledMessage] = {}
    for n, message in enumerate(conversation.messages):
        entry = tape.append_message(session, "user", message.user)
        labels[entry.id] = message
        tape.append_message(session, "assistant", message.reply)
        if message.settle or n == len(conversation.messages) - 1:
            runtime.after_turn_settled(_SETTLED)
            await runtime.drain()
    return labels


async def _measure(
    memory: MemoryService,
    agent: str,
    *,
    conversation: Conversation,
    labels: dict[str, LabelledMessage],
    k: int,
    tally: _Tally,
) -> None:
    everything = memory.list_claims(agent, include_inactive=True, limit=_LIST_LIMIT)
    live = [c for c in everything if c.is_recallable]
    for message in conversation.messages:
        label = message.none
        if label is not None:
            tally.add(label, "silent")
        for fact in message.facts:
            tally.add(fact.category, "expected")
            pool = everything if fact.superseded else live
            if any(_holds(c, fact.words) for c in pool):
                tally.add(fact.category, "stored")
            else:
                tally.misses.append(
                    Miss(
                        conversation=conversation.id,
                        kind="not-stored",
                        category=fact.category,
                        message=message.user,
                        detail=" + ".join(fact.words),
                    )
                )
            if fact.superseded:
                continue
            tally.add(fact.category, "current")
            result = await memory.recall(agent, fact.query, top_k=k)
            top = result.items[:k]
            tally.shown += len(top)
            tally.kept_shown += sum(
                item.claim.content.startswith(KEPT_PREFIX) and not _holds(item.claim, fact.words)
                for item in top
            )
            if any(_holds(item.claim, fact.words) for item in top):
                tally.add(fact.category, "found_at_k")
            else:
                tally.misses.append(
                    Miss(
                        conversation=conversation.id,
                        kind="not-recalled",
                        category=fact.category,
                        message=message.user,
                        detail=fact.query,
                    )
                )
    for claim in live:
        _judge(claim, conversation, labels, tally)


def _judge(
    claim: Claim, conversation: Conversation, labels: dict[str, LabelledMessage], tally: _Tally
) -> None:
    """Attribute a live claim to its source messages' category and decide if it is right."""
    sources = [labels[i] for i in claim.source.entry_ids if i in labels] or list(
        conversation.messages
    )
    # A superseded fact was still said: "no longer lives in Madrid" holds it rightly; only
    # the `retired` phrases mark a stale state served as current.
    facts = [fact for message in sources for fact in message.facts]
    matched = next((fact for fact in facts if _holds(claim, fact.words)), None)
    category = (
        matched.category
        if matched is not None
        else next((m.none for m in sources if m.none is not None), None)
        or (facts[0].category if facts else "unlabelled")
    )
    tally.add(category, "claims")
    if claim.kind is ClaimKind.EPISODIC:
        tally.episodic += 1
        tally.verbatim += claim.content.startswith(KEPT_PREFIX)
    stale = [word for word in conversation.retired if word.casefold() in claim.content.casefold()]
    if matched is not None and not stale:
        return
    tally.add(category, "wrong")
    tally.misses.append(
        Miss(
            conversation=conversation.id,
            kind="wrong-claim",
            category=category,
            message=" | ".join(m.user for m in sources[:2]),
            detail=claim.content + (f" (retired: {', '.join(stale)})" if stale else ""),
        )
    )


def extraction_config(base: MemoryConfig, embedder: str, extractor: str | None) -> MemoryConfig:
    """The evaluation config (`eval_config`) with extraction switched back on: `extractor`,
    else the one `base` chooses, else the embedded default."""
    config = eval_config(embedder, base=base)
    chosen = base.choice("extractor")
    if extractor is not None and (chosen is None or chosen.name != extractor):
        chosen = PluginChoice(name=extractor)
    plugins = {**config.plugins, "extractor": chosen or PluginChoice(name="rules")}
    return attrs.evolve(config, plugins=plugins)


async def run_extraction(
    corpus: Corpus,
    *,
    path: Path,
    embedder: str,
    base: MemoryConfig | None = None,
    extractor: str | None = None,
    k: int = DEFAULT_K,
    gates: ExtractionGates = ExtractionGates(),
) -> ExtractionReport:
    """Run every conversation of `corpus` in a fresh temporary memory and score it."""
    config = extraction_config(base or MemoryConfig(), embedder, extractor)
    tally = _Tally()
    before = set(asyncio.all_tasks())
    registry = eval_registry()
    with tempfile.TemporaryDirectory(prefix="agent-memory-eval-") as directory:
        # The host's side: a tape the evaluation writes the conversations to, as a host would.
        tape: Any = registry.create_tape("memory", FactoryContext(data_dir=Path(directory)))
        memory = open_memory(
            directory,
            config=config,
            tape=tape,
            clock=FixedClock(EVAL_EPOCH),
            registry=registry,
        )
        try:
            for n, conversation in enumerate(corpus.conversations):
                agent = f"eval-{n}"
                labels = await _converse(memory, tape, agent, conversation)
                # A host's later turns find the claims embedded; recall runs hybrid then.
                await memory.warm(agent)
                await _measure(
                    memory, agent, conversation=conversation, labels=labels, k=k, tally=tally
                )
        finally:
            current = asyncio.current_task()
            started = [t for t in asyncio.all_tasks() if t not in before and t is not current]
            if started:
                await asyncio.wait(started, timeout=60.0)
            await memory.aclose()
    rows, total = tally.frozen()
    extractor_choice = config.choice("extractor")
    return ExtractionReport(
        file=path.name,
        extractor=extractor_choice.name if extractor_choice else "none",
        embedder=embedder,
        k=k,
        conversations=len(corpus.conversations),
        messages=corpus.message_count,
        categories=rows,
        total=total,
        episodic_claims=tally.episodic,
        verbatim_claims=tally.verbatim,
        recalled_items=tally.shown,
        kept_in_recall=tally.kept_shown,
        misses=tuple(tally.misses),
        gates=(
            Gate.at_least(f"recall@{k}", total.recall_at_k, gates.recall_at_k),
            Gate.at_least("precision", total.precision, gates.precision),
        ),
    )
