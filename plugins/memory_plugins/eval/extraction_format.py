"""The labelled extraction corpus (`agent-memory-extraction/1`) and its validator.

    {"format": "agent-memory-extraction/1",
     "conversations": [
       {"id": "home-correction", "tags": ["demo"],
        "messages": [
          {"user": "I live in Berlin.", "facts": [
             {"category": "home", "words": ["Berlin"], "query": "where does the user live",
              "superseded": true}]},
          {"user": "What is the weather like?", "none": "question"},
          {"user": "Actually, I live in Munich.", "settle": true, "facts": [
             {"category": "home", "words": ["Munich"], "query": "where does the user live"}]}],
        "retired": ["Berlin"]}]}

A conversation is a sequence of user messages, each answered by `reply` (default a neutral
assistant line). Every message is labelled: `facts` (what the user stated, each with the
words a stored claim must contain, case-insensitively, and the `query` whose recall must
bring one back), or `none` (the category of a message that must store nothing: a question,
a hypothetical, someone else's fact, chit-chat). A `superseded` fact must be stored, but
retired by a later message: it is never asked for through recall. `retired` words must be
in no live claim when the conversation ends. `settle: true` ends an extraction pass after
the message (its turn settles); the end of a conversation always does. `tags` select a
subset (`--subset demo`). Keys are snake_case; unknown keys are errors.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import attrs

from memory_plugins.eval.fixture_io import (
    FixtureError,
    fixture_converter,
    load_json,
    structure_fixture,
)

__all__ = [
    "FORMAT",
    "Conversation",
    "Corpus",
    "ExpectedFact",
    "LabelledMessage",
    "load_corpus",
]

FORMAT = "agent-memory-extraction/1"
DEFAULT_REPLY = "Thanks for telling me."


@attrs.frozen(kw_only=True)
class ExpectedFact:
    category: str
    words: tuple[str, ...]
    query: str
    superseded: bool = False


@attrs.frozen(kw_only=True)
class LabelledMessage:
    user: str
    facts: tuple[ExpectedFact, ...] = ()
    none: str | None = None
    reply: str = DEFAULT_REPLY
    settle: bool = False


@attrs.frozen(kw_only=True)
class Conversation:
    id: str
    messages: tuple[LabelledMessage, ...]
    retired: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class Corpus:
    format: str
    conversations: tuple[Conversation, ...]

    @property
    def message_count(self) -> int:
        return sum(len(c.messages) for c in self.conversations)

    def subset(self, tag: str | None) -> Corpus:
        if tag is None:
            return self
        chosen = tuple(c for c in self.conversations if tag in c.tags)
        if not chosen:
            raise FixtureError(f"no conversation is tagged {tag!r}")
        return attrs.evolve(self, conversations=chosen)


_CONVERTER = fixture_converter(forbid_extra_keys=True, camel_case=False)


def load_corpus(path: Path) -> Corpus:
    """The corpus in `path`, validated; FixtureError names the file and what is wrong."""
    corpus = structure_fixture(load_json(path), Corpus, path=path, converter=_CONVERTER)
    problems = _problems(corpus)
    if problems:
        raise FixtureError(f"{path}: " + "; ".join(problems[:5]))
    return corpus


def _problems(corpus: Corpus) -> list[str]:
    problems: list[str] = []
    if corpus.format != FORMAT:
        problems.append(f"$.format: must be {FORMAT!r}")
    if not corpus.conversations:
        problems.append("$.conversations: must not be empty")
    repeated = [i for i, n in Counter(c.id for c in corpus.conversations).items() if n > 1]
    problems.extend(f"conversation id {i!r} is used twice" for i in repeated)
    for n, conversation in enumerate(corpus.conversations):
        where = f"$.conversations[{n}]"
        if not conversation.messages:
            problems.append(f"{where}.messages: must not be empty")
        for m, message in enumerate(conversation.messages):
            at = f"{where}.messages[{m}]"
            if not message.user.strip():
                problems.append(f"{at}.user: must not be blank")
            if bool(message.facts) == (message.none is not None):
                problems.append(f"{at}: needs exactly one of facts or none")
            for f, fact in enumerate(message.facts):
                if not fact.words or any(not w.strip() for w in fact.words):
                    problems.append(f"{at}.facts[{f}].words: must be non-blank words")
                if not fact.query.strip() or not fact.category.strip():
                    problems.append(f"{at}.facts[{f}]: query and category must not be blank")
    return problems
