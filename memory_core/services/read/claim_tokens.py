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


def token_set(text: str) -> frozenset[str]:
    """Lowercased word tokens for near-duplicate detection; CJK words become character bigrams."""
    tokens: set[str] = set()
    for word in _WORD.findall(unicodedata.normalize("NFKC", text).casefold()):
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


_Key = tuple[str, int, int]


class ClaimTokenCache:
    """Bounded LRU of `ClaimTokens` by (claim id, revision, content length)."""

    def __init__(self, *, token_budget: int = DEFAULT_TOKEN_BUDGET) -> None:
        if isinstance(token_budget, bool) or not isinstance(token_budget, int) or token_budget < 1:
            raise ConfigError("claim token cache budget must be a positive integer")
        self._budget = token_budget
        self._entries: OrderedDict[_Key, ClaimTokens] = OrderedDict()
        self._held = 0
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def held(self) -> int:
        return self._held

    def of(self, claim: Claim) -> ClaimTokens:
        key = (claim.id, claim.revision, len(claim.content))
        found = self._entries.get(key)
        if found is not None:
            self._entries.move_to_end(key)
            self.hits += 1
            return found
        self.misses += 1
        tokens = ClaimTokens(
            coverage=coverage_tokens(claim.content),
            duplicate=token_set(claim.content),
            canonical=canonical_content(claim.content),
        )
        if tokens.size > self._budget:
            return tokens  # larger than the whole cache: computed, never held
        self._entries[key] = tokens
        self._held += tokens.size
        while self._held > self._budget:
            _, evicted = self._entries.popitem(last=False)
            self._held -= evicted.size
        return tokens
