"""`agent-memory eval behaviour|retrieval|locomo|extraction FILE...`: measure recall (R-BEYOND-2).

- `behaviour FILE...` — behaviour fixtures (DeepChat's format and ours) through the real
  stores, `--profile lexical` (FTS only, the default) or `embedded` (the offline embedder);
- `retrieval FILE` — DeepChat's retrieval fixture: Recall@5, MRR@10, nDCG@10 per mode,
  embedder and subset, with DeepChat's gates;
- `locomo FILE` — LoCoMo-format evidence retrieval: R@1/5/10/20, all@10, sess@10, MRR@10/50
  and per-query latency per mode and category, over `--conversations` (default all), skipping
  the questions an `--exclude FILE` names;
- `extraction FILE` — a labelled extraction corpus through the configured extractor and the
  production read path: recall, recall@k and precision per category, gated.

Tables on a terminal, one JSON document with `--json`, and always a JSON report file
(`--report PATH`, default `<data dir>/eval/<suite>-<UTC time>.json`). Exit code 1 when a
scenario or a gate fails. Everything runs in a temporary directory through `open_memory`;
the data directory only receives the report.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memory_core.domain.errors import ValidationError
from memory_plugins.cli.context import CommandContext
from memory_plugins.cli.output import Output
from memory_plugins.eval.behaviour import BehaviourReport, run_behaviour
from memory_plugins.eval.behaviour_format import Profile, load_behaviour_fixture
from memory_plugins.eval.documents import (
    behaviour_document,
    locomo_document,
    machine,
    retrieval_document,
)
from memory_plugins.eval.extraction import (
    DEFAULT_K,
    ExtractionGates,
    ExtractionReport,
    run_extraction,
)
from memory_plugins.eval.extraction_format import load_corpus
from memory_plugins.eval.harness import DEFAULT_EMBEDDER, LEXICAL
from memory_plugins.eval.locomo import DEFAULT_CATEGORIES, LocomoReport, run_locomo
from memory_plugins.eval.locomo_format import load_exclude, load_locomo
from memory_plugins.eval.retrieval import RetrievalReport, load_retrieval_fixture, run_retrieval
from memory_plugins.eval.scores import scoring_policy

__all__ = ["register", "run"]

SUITES = ("behaviour", "retrieval", "locomo", "extraction")
EXIT_PASSED = 0
EXIT_FAILED = 1


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "eval",
        help="evaluate recall: behaviour fixtures, retrieval metrics, LoCoMo evidence",
        description="Run an evaluation suite through the real stores in a temporary directory.",
    )
    parser.add_argument("suite", choices=SUITES, help="which evaluation to run")
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE", help="fixture file(s)")
    parser.add_argument(
        "--profile",
        choices=[profile.value for profile in Profile],
        default=Profile.LEXICAL.value,
        help="behaviour: lexical (FTS only, default) or embedded (the offline embedder)",
    )
    parser.add_argument(
        "--embedder",
        action="append",
        metavar="NAME",
        help=f"retrieval/locomo: embedding provider to measure, repeatable; the first is gated "
        f"(default: {DEFAULT_EMBEDDER}, and hashing for retrieval)",
    )
    parser.add_argument(
        "--scoring",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="retrieval/locomo: override a ScoringPolicy constant, e.g. rrf_k=10 (repeatable)",
    )
    parser.add_argument(
        "--categories",
        default=",".join(str(c) for c in DEFAULT_CATEGORIES),
        metavar="LIST",
        help="locomo: question categories, comma-separated (default 1,2,3,4)",
    )
    extraction = parser.add_argument_group("extraction")
    extraction.add_argument(
        "--extractor",
        metavar="NAME",
        help="extraction: the extractor to measure (default: the configured one, else rules)",
    )
    extraction.add_argument(
        "--subset", metavar="TAG", help="extraction: only conversations tagged TAG"
    )
    extraction.add_argument(
        "--k", type=int, default=DEFAULT_K, help=f"extraction: recall@k (default {DEFAULT_K})"
    )
    extraction.add_argument(
        "--min-recall",
        type=float,
        default=ExtractionGates().recall_at_k,
        help="extraction: the recall@k gate",
    )
    extraction.add_argument(
        "--min-precision",
        type=float,
        default=ExtractionGates().precision,
        help="extraction: the precision gate",
    )
    parser.add_argument(
        "--conversations",
        metavar="LIST",
        help="locomo: sample ids or 0-based positions to measure, comma-separated (default all)",
    )
    parser.add_argument(
        "--exclude",
        type=Path,
        metavar="FILE",
        help="locomo: question ids to skip, one <sample id>:<question index> per line",
    )
    parser.add_argument(
        "--report",
        type=Path,
        metavar="PATH",
        help="where to write the JSON report (default: <data dir>/eval/<suite>-<time>.json)",
    )
    parser.set_defaults(func=run)


def run(ctx: CommandContext) -> int:
    args = ctx.args
    # Every argument is checked before any file is read or any model loads.
    if args.suite != "behaviour" and len(args.files) != 1:
        raise ValidationError("files", f"eval {args.suite} takes exactly one FILE")
    args.scoring = _scoring(args.scoring)
    scoring_policy(ctx.config.settings, args.scoring)
    args.categories = _categories(args.categories)
    if args.suite == "behaviour":
        return _behaviour(ctx)
    if args.suite == "retrieval":
        return _retrieval(ctx)
    if args.suite == "extraction":
        return _extraction(ctx)
    return _locomo(ctx)


# --- suites -----------------------------------------------------------------------------------
def _behaviour(ctx: CommandContext) -> int:
    profile = Profile(ctx.args.profile)

    async def measure() -> list[BehaviourReport]:
        reports = []
        for path in ctx.args.files:
            fixture = load_behaviour_fixture(path)
            reports.append(
                await run_behaviour(fixture, path=path, profile=profile, base=ctx.config)
            )
        return reports

    reports = asyncio.run(measure())
    document = behaviour_document(reports)
    report_path = _write_report(ctx, document)
    if ctx.out.json_mode:
        ctx.out.document({**document, "report": str(report_path)})
    else:
        for report in reports:
            _render_behaviour(ctx.out, report)
        ctx.out.line(f"report: {report_path}")
    return EXIT_PASSED if document["passed"] else EXIT_FAILED


def _retrieval(ctx: CommandContext) -> int:
    path = ctx.args.files[0]
    fixture = load_retrieval_fixture(path)
    report = asyncio.run(
        run_retrieval(
            fixture,
            path=path,
            embedders=ctx.args.embedder or (DEFAULT_EMBEDDER, "hashing"),
            base=ctx.config,
            scoring=ctx.args.scoring,
        )
    )
    document = retrieval_document(report)
    report_path = _write_report(ctx, document)
    if ctx.out.json_mode:
        document.pop("queries")  # per-query rankings stay in the report file
        ctx.out.document({**document, "report": str(report_path)})
    else:
        _render_retrieval(ctx.out, report)
        ctx.out.line(f"report: {report_path}")
    return EXIT_PASSED if report.passed else EXIT_FAILED


def _locomo(ctx: CommandContext) -> int:
    path = ctx.args.files[0]
    samples = load_locomo(path)
    exclude = load_exclude(ctx.args.exclude) if ctx.args.exclude else frozenset()
    names = ctx.args.conversations
    report = asyncio.run(
        run_locomo(
            samples,
            path=path,
            embedders=ctx.args.embedder or (DEFAULT_EMBEDDER,),
            categories=ctx.args.categories,
            base=ctx.config,
            scoring=ctx.args.scoring,
            conversations=[n.strip() for n in names.split(",") if n.strip()] if names else None,
            exclude=exclude,
        )
    )
    document = locomo_document(report)
    report_path = _write_report(ctx, document)
    if ctx.out.json_mode:
        document.pop("questions")
        ctx.out.document({**document, "report": str(report_path)})
    else:
        _render_locomo(ctx.out, report)
        ctx.out.line(f"report: {report_path}")
    return EXIT_PASSED if report.passed else EXIT_FAILED


def _extraction(ctx: CommandContext) -> int:
    args = ctx.args
    if not 1 <= args.k <= 100:
        raise ValidationError("--k", "must be in 1..100")
    for name, value in (("--min-recall", args.min_recall), ("--min-precision", args.min_precision)):
        if not 0.0 <= value <= 1.0:
            raise ValidationError(name, "must be in [0, 1]")
    path = args.files[0]
    corpus = load_corpus(path).subset(args.subset)
    report = asyncio.run(
        run_extraction(
            corpus,
            path=path,
            embedder=(args.embedder or [DEFAULT_EMBEDDER])[0],
            base=ctx.config,
            extractor=args.extractor,
            k=args.k,
            gates=ExtractionGates(recall_at_k=args.min_recall, precision=args.min_precision),
        )
    )
    document = {**report.document(), "run": machine()}
    report_path = _write_report(ctx, document)
    if ctx.out.json_mode:
        ctx.out.document({**document, "report": str(report_path)})
    else:
        _render_extraction(ctx.out, report)
        ctx.out.line(f"report: {report_path}")
    return EXIT_PASSED if report.passed else EXIT_FAILED


# --- arguments --------------------------------------------------------------------------------
def _scoring(pairs: Sequence[str]) -> dict[str, Any]:
    """`rrf_k=10` → {"rrf_k": 10}; values are JSON (numbers, null), else plain strings."""
    overrides: dict[str, Any] = {}
    for pair in pairs:
        key, separator, raw = pair.partition("=")
        if not separator or not key.strip():
            raise ValidationError("--scoring", f"expected KEY=VALUE, got {pair!r}")
        try:
            overrides[key.strip()] = json.loads(raw)
        except json.JSONDecodeError:
            overrides[key.strip()] = raw
    return overrides


def _categories(text: str) -> tuple[int, ...]:
    try:
        chosen = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError as exc:
        raise ValidationError("--categories", "expected numbers such as 1,2,3,4") from exc
    if not chosen or any(not 1 <= category <= 5 for category in chosen):
        raise ValidationError("--categories", "LoCoMo categories are 1..5")
    return chosen


def _write_report(ctx: CommandContext, document: dict[str, Any]) -> Path:
    path = ctx.args.report
    if path is None:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        path = ctx.data_dir / "eval" / f"{document['suite']}-{stamp}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


# --- tables -----------------------------------------------------------------------------------
def _f(value: float) -> str:
    return f"{value:.3f}"


def _render_behaviour(out: Output, report: BehaviourReport) -> None:
    embedder = "FTS only" if report.embedder == LEXICAL else report.embedder
    out.heading(f"{report.fixture} — profile {report.profile} ({embedder})")
    out.table(
        ["scenario", "axis", "mode", "result", "failed expectations"],
        [
            [r.id, r.axis, r.mode, "pass" if r.passed else "FAIL", "; ".join(r.failures)]
            for r in report.scenarios
        ],
        styles=[None, None, None, "bold", "red"],
    )
    out.table(["axis", "passed", "total"], [[a.axis, a.passed, a.total] for a in report.axes])
    passed = sum(r.passed for r in report.scenarios)
    verdict = "PASSED" if report.passed else "FAILED"
    out.line(
        f"{verdict}: {passed}/{len(report.scenarios)} scenarios",
        style="green" if report.passed else "red",
    )


def _render_retrieval(out: Output, report: RetrievalReport) -> None:
    subsets = sorted({name for mode in report.modes for name in mode.subsets})
    out.table(
        ["mode", "R@5", "MRR@10", "nDCG@10", *(f"R@5 {s}" for s in subsets), "leaks"],
        [
            [
                mode.label,
                _f(mode.recall_at_5),
                _f(mode.mrr_at_10),
                _f(mode.ndcg_at_10),
                *(_f(mode.subsets.get(s, {}).get("recall_at_5", 0.0)) for s in subsets),
                mode.leaks,
            ]
            for mode in report.modes
        ],
        title=f"{report.fixture} — {report.modes[0].queries} queries",
    )
    _render_gates(out, report.gates)


def _render_locomo(out: Output, report: LocomoReport) -> None:
    first = report.modes[0]
    out.table(
        [
            "mode",
            "R@1",
            "R@5",
            "R@10",
            "R@20",
            "all@10",
            "sess@10",
            "MRR@10",
            "MRR@50",
            "tokens@10",
            "p50 ms",
            "p95 ms",
        ],
        [
            [
                m.label,
                _f(m.r_at_1),
                _f(m.r_at_5),
                _f(m.r_at_10),
                _f(m.r_at_20),
                _f(m.all_at_10),
                _f(m.sess_at_10),
                _f(m.mrr_at_10),
                _f(m.mrr_at_50),
                f"{m.tokens_at_10:.0f}",
                f"{m.latency_p50_ms:.1f}",
                f"{m.latency_p95_ms:.1f}",
            ]
            for m in report.modes
        ],
        title=(
            f"{report.file} — {report.samples} sample(s), {report.turns} turns, "
            f"{first.questions} questions (categories {report.categories}; "
            f"{report.skipped_questions} without evidence skipped, "
            f"{report.excluded_questions} excluded)"
        ),
    )
    categories = list(first.categories)
    out.table(
        ["mode", *(f"R@10 {c}" for c in categories), *(f"MRR@50 {c}" for c in categories)],
        [
            [
                m.label,
                *(_f(m.categories.get(c, {}).get("r_at_10", 0.0)) for c in categories),
                *(_f(m.categories.get(c, {}).get("mrr_at_50", 0.0)) for c in categories),
            ]
            for m in report.modes
        ],
        title="per category",
    )
    _render_gates(out, report.gates)


def _render_extraction(out: Output, report: ExtractionReport) -> None:
    embedder = "FTS only" if report.embedder == LEXICAL else report.embedder
    out.table(
        ["category", "facts", "stored", "recall", f"R@{report.k}", "silent msgs", "claims",
         "wrong", "precision"],
        [
            [r.category, r.expected, r.stored, _f(r.recall) if r.expected else "-",
             _f(r.recall_at_k) if r.current else "-", r.silent, r.claims, r.wrong,
             _f(r.precision) if r.claims else "-"]
            for r in (*report.categories, report.total)
        ],
        title=(
            f"{report.file} — extractor {report.extractor}, {embedder}: "
            f"{report.conversations} conversations, {report.messages} messages"
        ),
    )  # fmt: skip
    out.line(
        f"episodic claims: {report.episodic_claims}, of them kept utterances: "
        f"{report.verbatim_claims}; kept utterances in recall results they do not answer: "
        f"{report.kept_in_recall} of {report.recalled_items}"
    )
    for miss in report.misses[:40]:
        out.line(f"  {miss.kind} [{miss.category}] {miss.message!r} -> {miss.detail}")
    if len(report.misses) > 40:
        out.line(f"  … and {len(report.misses) - 40} more in the report file")
    _render_gates(out, report.gates)


def _render_gates(out: Output, gates: Sequence[Any]) -> None:
    out.table(
        ["gate", "value", "threshold", "result"],
        [
            [
                g.name,
                _f(g.value),
                f"{g.comparison} {_f(g.threshold)}",
                "pass" if g.passed else "FAIL",
            ]
            for g in gates
        ],
        title="gates",
    )
