"""Query → lexical search terms for recall (reference §4.2), joined with OR by the FTS adapter.

Terms are ASCII/code runs and CJK runs found in the NFKC-normalised query:

- an ASCII/code run starts with `[A-Za-z0-9_]` and may continue with `. : / @ # + -`, so
  `config.yaml`, `src/app.py`, `user@example.com`, `v1.2` and `c++` stay one term; trailing
  `. : / @ -` (sentence punctuation) is stripped, trailing `+`/`#` is kept (`c++`, `c#`);
- a *code* term contains a digit or punctuation (`_` counts: identifiers) and needs ≥2
  characters; a plain ASCII word needs ≥3 and must not be an English stopword;
- a CJK run (ideographs, kana, Hangul) of ≤4 characters is one term; a longer run (CJK has no
  spaces) yields every 4-character sliding window.

Terms are lowercased and de-duplicated (first occurrence wins). At most 24 candidates are read;
up to 8 are picked — terms of ≥3 code points before shorter ones, then code > CJK > ASCII, then
longer, then earlier — and returned in query order.

The stopword list exists because the LoCoMo dev baselines (reference/locomo-dev-baselines.md)
show frequent terms make an OR query match most of a conversation and drown the signal:
question words, auxiliaries, pronouns, prepositions and chat fillers ("the", "user", "what",
"when", "did", "remember") never become terms. Only plain ASCII words are checked; code terms
and CJK are never stopwords. Words that name something stay terms even when frequent: month
names (`may`) and content verbs (`get`, `make`, `need`) — "in May" is a date, "got a dog" a
fact; the coverage rank weighs a common word down by itself.

Coverage counts stems (`stem`): "changes", "changed" and "changing" cover "change", as the
trigram index already matched them.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from enum import IntEnum

import attrs

__all__ = [
    "ENGLISH_STOPWORDS",
    "MAX_CANDIDATES",
    "MAX_TERMS",
    "STEM_CACHE_WORDS",
    "Keyword",
    "TermKind",
    "bounded_query",
    "coverage_tokens",
    "extract_keywords",
    "search_terms",
    "stem",
]

MAX_CANDIDATES = 24
MAX_TERMS = 8
_CJK_WINDOW = 4
_CODE_PUNCTUATION = ".:/@#+-"
# Sentence punctuation glued to the end of a run; `+`/`#` stay because `c++`/`c#` are names.
_TRAILING_PUNCTUATION = ".:/@-"

# The ranges of `memory_core.domain.tokens` (CJK-like = what costs 1.5 tokens).
_CJK_CLASS = (
    "\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002fa1f"
)
_TOKEN = re.compile(
    rf"(?P<ascii>[A-Za-z0-9_][A-Za-z0-9_{re.escape(_CODE_PUNCTUATION)}]*)|(?P<cjk>[{_CJK_CLASS}]+)"
)

# Small on purpose: only words that carry no topic in a question about one's own memories.
# Words shorter than 3 letters are never terms anyway, so they are not listed.
_STOPWORD_TEXT = """
    about above after again against all also although always among and another any anybody
    anyone anything are aren around because been before being below between both but can
    cannot could couldn did didn does doesn doing don done down during each either else ever
    every few for from further had hadn has hasn have haven having her
    here hers herself him himself his how however into isn its itself just least less like
    lot lots many maybe mean might mine more most much must myself near
    neither never nor not now off often once one only onto other others our ours ourselves
    out over own per please quite rather really said same say says shall she should shouldn
    since some something sometimes still such than that the their theirs them themselves then
    there these they thing things this those though through thus till too toward towards
    under until upon very via was wasn way were weren what whatever when whenever where
    whether which while who whom whose why will with within without won would wouldn yes yet
    you your yours yourself yourselves
    user users assistant tell told remember recall know knew think thought ever mention
    mentioned
"""
ENGLISH_STOPWORDS: frozenset[str] = frozenset(_STOPWORD_TEXT.split())


class TermKind(IntEnum):
    """Pick priority: a lower value wins (code > CJK > ASCII)."""

    CODE = 0
    CJK = 1
    ASCII = 2


@attrs.frozen(kw_only=True)
class Keyword:
    """One search term and where it starts in the normalised query."""

    text: str
    kind: TermKind
    position: int


# A run is ASCII (`_TOKEN`'s ascii group), where `str.isdigit` is 0-9: one class search
# instead of three tests per character in Python.
_CODE_CHAR = re.compile(f"[0-9_{re.escape(_CODE_PUNCTUATION)}]")


def _is_code(run: str) -> bool:
    return _CODE_CHAR.search(run) is not None


def _ascii_candidate(run: str, position: int) -> Keyword | None:
    text = run.rstrip(_TRAILING_PUNCTUATION).lower()
    if _is_code(text):
        return Keyword(text=text, kind=TermKind.CODE, position=position) if len(text) >= 2 else None
    if len(text) < 3 or text in ENGLISH_STOPWORDS:
        return None
    return Keyword(text=text, kind=TermKind.ASCII, position=position)


def _cjk_candidates(run: str, position: int) -> list[Keyword]:
    if len(run) <= _CJK_WINDOW:
        return [Keyword(text=run, kind=TermKind.CJK, position=position)]
    return [
        Keyword(text=run[i : i + _CJK_WINDOW], kind=TermKind.CJK, position=position + i)
        for i in range(len(run) - _CJK_WINDOW + 1)
    ]


def _candidates(query: str, limit: int) -> list[Keyword]:
    seen: set[str] = set()
    found: list[Keyword] = []
    # finditer is lazy: a huge message costs only as much as it takes to find `limit` terms.
    for match in _TOKEN.finditer(query):
        produced: list[Keyword | None]
        if match.group("ascii") is not None:
            produced = [_ascii_candidate(match.group("ascii"), match.start())]
        else:
            produced = _cjk_candidates(match.group("cjk"), match.start())
        for keyword in produced:
            if keyword is None or keyword.text in seen:
                continue
            seen.add(keyword.text)
            found.append(keyword)
            if len(found) >= limit:
                return found
    return found


def extract_keywords(
    query: str, *, max_terms: int = MAX_TERMS, max_candidates: int = MAX_CANDIDATES
) -> tuple[Keyword, ...]:
    """The picked terms of `query`, in query order. Empty when nothing qualifies."""
    normalised = unicodedata.normalize("NFKC", query)
    candidates = _candidates(normalised, max_candidates)
    picked = sorted(
        candidates,
        key=lambda k: (len(k.text) < 3, k.kind, -len(k.text), k.position),
    )[:max_terms]
    return tuple(sorted(picked, key=lambda k: k.position))


_FIRST_VISIBLE = re.compile(r"\S")
# NUL and lone surrogates (a str may hold them; UTF-8 encoding and SQLite refuse them).
_UNENCODABLE = re.compile("[\x00\ud800-\udfff]")


def bounded_query(message: str, limit: int) -> str:
    """The part of a user message a turn works on: at most `limit` code points from its first
    visible character, NULs and lone surrogates as spaces, stripped; "" when nothing is left.

    Cut before any per-character work (normalisation, keywords, coverage, hashing), so a 10 MB
    paste costs what a short message does; leading whitespace is skipped first, so a message
    that opens with a page of blanks still has a query (R-READ-1)."""
    start = _FIRST_VISIBLE.search(message)
    if start is None:
        return ""
    head = message[start.start() : start.start() + limit]
    return _UNENCODABLE.sub(" ", head).strip()


def search_terms(query: str) -> tuple[str, ...]:
    """Just the term texts, in query order, for the FTS adapter to OR together."""
    return tuple(keyword.text for keyword in extract_keywords(query))


_WORD = re.compile(rf"[a-z0-9]+|[{_CJK_CLASS}]+")
_ASCII_WORD = re.compile(r"[a-z0-9]+")  # `_WORD` in ASCII text
_VOWELS = frozenset("aeiouy")
# Doubled final consonants a suffix doubled ("stopped", "running"); l, s, z double in stems.
_UNDOUBLE = frozenset("bdfgkmnprt")
_MIN_STEM = 3
# Distinct words whose stems are remembered: a turn stems the words of every candidate it has
# not tokenised before (~400 a turn, most of them repeats: a vocabulary is small), and a cached
# stem costs a dictionary look-up instead of a dozen suffix tests. Bounded, least recently
# used first out, so a word only a forgotten claim used leaves after this many others
# (R-FORGET-1: process memory holds no more of it than the claim token cache would).
STEM_CACHE_WORDS = 16_384


def _has_vowel(text: str) -> bool:
    return any(char in _VOWELS for char in text)


@functools.lru_cache(maxsize=STEM_CACHE_WORDS)
def stem(word: str) -> str:
    """A light English stemmer for coverage: plural, -ed and -ing endings and a final -e.

    Deliberately small (a dozen rules, not Porter's sixty): coverage only needs the query's
    word and the claim's inflection to meet at the same key, and both sides go through the
    same function — "change", "changes", "changed", "changing" all become "chang". It lives
    in the core rather than behind a port because a claim's cached tokens must not depend on
    which stemmer an installation wired. Words of three letters or fewer, and anything with
    a digit, are returned as they are."""
    if len(word) <= _MIN_STEM or not word.isalpha() or not word.isascii():
        return word
    if word.endswith("ies") and len(word) > _MIN_STEM + 2:
        word = word[:-3] + "y"
    elif word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ied", "ing", "ed"):
        if word.endswith(suffix):
            base = word[: -len(suffix)] + ("y" if suffix == "ied" else "")
            if len(base) >= _MIN_STEM and _has_vowel(base):
                if base[-1] == base[-2] and base[-1] in _UNDOUBLE:
                    base = base[:-1]
                word = base
            break
    if word.endswith("e") and len(word) > _MIN_STEM:
        word = word[:-1]
    return word


def coverage_tokens(text: str) -> frozenset[str]:
    """Stems of whole words (numbers included: "policy 1" is not "policy 10") and CJK
    character bigrams, lowercased, stopwords left out: the units in which a candidate's
    coverage of a query is counted. Trigram FTS cannot see a one- or two-character word;
    this can."""
    if text.isascii():  # NFKC leaves it alone, and every run is a word: one comprehension
        runs = _ASCII_WORD.findall(text.lower())  # no CJK run to try for at every position
        return frozenset([stem(run) for run in runs if run not in ENGLISH_STOPWORDS])
    runs = _WORD.findall(unicodedata.normalize("NFKC", text).lower())
    tokens: set[str] = set()
    for run in runs:
        if run[0].isascii():
            if run not in ENGLISH_STOPWORDS:
                tokens.add(stem(run))
        elif len(run) == 1:
            tokens.add(run)
        else:
            tokens.update(run[i : i + 2] for i in range(len(run) - 1))
    return frozenset(tokens)
