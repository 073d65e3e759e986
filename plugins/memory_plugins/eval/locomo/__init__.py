"""LoCoMo-format evidence retrieval: does recall find the dialogue turns a question rests on?

The format is read by `locomo_format.py`; here `conversations` stores a sample, `questions`
ranks and measures its questions, `aggregate` folds them into scores and gates, `run` drives it.

Evidence retrieval only, no model: each sample is one agent; every turn becomes one claim
`"<speaker>: <text>"`, verbatim, recorded at its session's date (the claim's source time, as
a host's turn would be; a session without a readable date is stored as of `now − 1 s`). The
clock stands after every session, years after LoCoMo's, so recency is equal and cannot
decide a ranking. Each question of the chosen categories (1–4 by default; 5 has no answer)
is ranked to depth 50 in every mode (`rankers.py`). Per question: R@k = at least one evidence
turn in the top k (k = 1, 5, 10, 20), all@10 = every evidence turn in the top 10, sess@10 =
an evidence turn's session among the sessions of the top 10, MRR@10 and MRR@50 = 1/rank of
the first evidence turn (0 beyond the cut), the estimated tokens of the top-10 turns as the
recall lane renders them (`- ` lines, `estimate_tokens`), and the latency of the ranking
call. Evidence ids that name no turn are ignored; a question left with no evidence is skipped
and counted; a question named in the `exclude` set (`<sample id>:<question index>`) is
skipped and counted apart.

Conversations are stored and measured one after another — each agent is finished before the
next one is written — so any number of them runs within the open-store cap.

Gates: fusion must not lose to its own lexical source — the default embedder's hybrid
ranking keeps FTS's R@10 and MRR@50 within 0.02 (`locomo_gates`; the LoCoMo dev baselines
showed RRF k=60 over full lists losing to plain BM25).

The dataset is CC BY-NC: the report holds question indices, dia ids and numbers — never text.
"""

from memory_plugins.eval.locomo.aggregate import locomo_gates
from memory_plugins.eval.locomo.report import LocomoReport, LocomoScores, QuestionResult
from memory_plugins.eval.locomo.run import DEFAULT_CATEGORIES, run_locomo, select_conversations

__all__ = [
    "DEFAULT_CATEGORIES",
    "LocomoReport",
    "LocomoScores",
    "QuestionResult",
    "locomo_gates",
    "run_locomo",
    "select_conversations",
]
