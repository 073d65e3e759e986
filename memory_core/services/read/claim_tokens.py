"""Each candidate's ranking tokens, computed once per claim revision and reused by every query.

Ranking needs two token sets per candidate — its coverage tokens (stems, `keywords`) and
its near-duplicate tokens (`token_set`) — and its canonical text. Tokenising a long claim on
every query made ranking cost grow with claim length (85 % of hybrid time at depth 50 on long
claims), while a claim's text only changes with its revision. So they are kept in a bounded
LRU keyed by (claim id, revision, length) — the length guards a store that rewrote a row
without bumping its revision — and a query's work per candidate is a set intersection whose
cost depends on the query, not the claim. No schema change: the cache is in-process and
rebuilt from the rows it sees.

The bound is in tokens held, not entries, so a few pasted documents cannot hold the memory
a thousand short facts would.
"""

from __future__ import annotations

import re
import unicodedata
from collections import OrderedDict

import attrs

from memory_core.domain.claims import Claim
from memory_core.domain.errors import ConfigError
from memory_core.domain.provenance import canonical_content
from memory_core.domain.tokens import is_cjk_like
from memory_core.services.read.keywords import coverage_tokens

__all__ = ["DEFAULT_TOKEN_BUDGET", "ClaimTokenCache", "ClaimTokens", "token_set"]

# ~200k short claims or ~700 claims of 2,000 characters: a few tens of MB at most.
DEFAULT_TOKEN_BUDGET = 2_000_000


_WORD = re.compile(r"[^\W_]+")
_ASCII_WORD = re.compile(r"[a-z0-9]+")  # `_WORD` in casefolded ASCII text


def token_set(text: str) -> frozenset[str]:
    """Lowercased word tokens for near-duplicate detection; CJK words become character bigrams."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    if folded.isascii():  # every word is ASCII: no word to look at char by char
        return frozenset(_ASCII_WORD.findall(folded))
    tokens: set[str] = set()
    for word in _WORD.findall(folded):
        # An ASCII word holds no CJK character: only the others are looked at char by char.
        if len(word) > 1 and not word.isascii() and any(is_cjk_like(char) for char in word):
            tokens.update(word[i : i + 2] for i in range(len(word) - 1))
        else:
            tokens.add(word)
    return frozenset(tokens)


@attrs.frozen(slots=True)
class ClaimTokens:
    coverage: frozenset[str]  # stems and CJK bigrams: the query coverage (lexical rank)
    duplicate: frozenset[str]  # words and CJK bigrams: near-duplicate collapse
    canonical: str  # exact-duplicate collapse

    @property
    def size(self) -> int:
        return len(self.coverage) + len(self.duplicate) + 1


@attrs.frozen(slots=True)
class _Collapse:
    duplicate: frozenset[str]
    canonical: str


@attrs.define(slots=True)
class _Entry:
    """One revision's tokens, each half computed when first asked for: the lexical rank needs
    only the coverage of every FTS row, the near-duplicate walk only the collapse tokens of
    the rows it reaches before the cut — most candidates of a turn are never walked."""

    coverage: frozenset[str] | None = None
    collapse: _Collapse | None = None

    @property
    def size(self) -> int:
        held = len(self.coverage) if self.coverage is not None else 0
        return held + (len(self.collapse.duplicate) + 1 if self.collapse is not None else 0)


_Key = tuple[str, int, int]


class ClaimTokenCache:
    """Bounded LRU of ranking tokens by (claim id, revision, content length)."""

    def __init__(self, *, token_budget: int = DEFAULT_TOKEN_BUDGET) -> None:
        if isinstance(token_budget, bool) or not isinstance(token_budget, int) or token_budget < 1:
            raise ConfigError("claim token cache budget must be a positive integer")
        self._budget = token_budget
        self._entries: OrderedDict[_Key, _Entry] = OrderedDict()
        self._held = 0
        self.hits = 0
        self.misses = 0  # claim revisions seen for the first time (or again after eviction)

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def held(self) -> int:
        return self._held

    def of(self, claim: Claim) -> ClaimTokens:
        """Both halves of `claim`'s tokens."""
        key, entry = self._entry(claim)
        collapse = self._collapse(claim, key, entry)
        return ClaimTokens(
            coverage=self._coverage(claim, key, entry),
            duplicate=collapse.duplicate,
            canonical=collapse.canonical,
        )

    def coverage(self, claim: Claim) -> frozenset[str]:
        """`coverage_tokens(claim.content)`, computed once per revision."""
        return self._coverage(claim, *self._entry(claim))

    def collapse(self, claim: Claim) -> tuple[str, frozenset[str]]:
        """`claim`'s canonical content and `token_set`, computed once per revision."""
        found = self._collapse(claim, *self._entry(claim))
        return found.canonical, found.duplicate

    def _coverage(self, claim: Claim, key: _Key, entry: _Entry) -> frozenset[str]:
        if entry.coverage is None:
            entry.coverage = coverage_tokens(claim.content)
            self._grew(key, entry, len(entry.coverage))
        return entry.coverage

    def _collapse(self, claim: Claim, key: _Key, entry: _Entry) -> _Collapse:
        if entry.collapse is None:
            entry.collapse = _Collapse(
                duplicate=token_set(claim.content), canonical=canonical_content(claim.content)
            )
            self._grew(key, entry, len(entry.collapse.duplicate) + 1)
        return entry.collapse

    def _entry(self, claim: Claim) -> tuple[_Key, _Entry]:
        key = (claim.id, claim.revision, len(claim.content))
        found = self._entries.get(key)
        if found is not None:
            self._entries.move_to_end(key)
            self.hits += 1
            return key, found
        self.misses += 1
        entry = _Entry()
        self._entries[key] = entry
        return key, entry

    def _grew(self, key: _Key, entry: _Entry, added: int) -> None:
        if entry.size > self._budget:
            # Larger than the whole cache: computed for this call, never held.
            if self._entries.pop(key, None) is not None:
                self._held -= entry.size - added
            return
        self._held += added
        while self._held > self._budget:
            _, evicted = self._entries.popitem(last=False)
            self._held -= evicted.size
