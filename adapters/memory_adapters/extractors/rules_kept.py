"""Nothing said is lost to recall: a first-person disclosure no rule understood is kept as said.

"I volunteer at the shelter on Saturdays" has a rule; "我住在上海" or "honestly the commute
is what wears me down, I cycle 20 km each way" may not. Such a sentence is kept as an episodic
claim ("The user said: ..."), sourced to its message and dated by when it was said, so hybrid
recall can still find it. Only disclosures are kept: a sentence whose own subject is the user
(not "my boss", not "Sarah"), that is a statement (questions, hypotheticals and sarcasm are
screened as for the rules), and that is more than chit-chat ("I'm so tired", "I see what
you mean", "let me think"). Its length is bounded by the extractor's claim limit — a longer
sentence is rejected, never truncated — and the secret policy applies as to every candidate.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memory_adapters.extractors.rules_clauses import SENTENCE_BREAK, MessageReading, clauses_of
from memory_adapters.extractors.rules_common import BEFORE_REFERENCE_CONFIDENCE
from memory_adapters.extractors.rules_lexicon import CREDENTIALS, OTHER_PEOPLE
from memory_adapters.extractors.rules_mood import is_sarcastic, is_statement
from memory_core.domain.claims import ClaimKind
from memory_core.domain.temporal import Interval, Precision, TemporalKind, TemporalMetadata
from memory_core.ports.extraction import CandidateClaim
from memory_core.ports.tape import TapeEntry

__all__ = ["KEPT_IMPORTANCE", "KEPT_PREFIX", "kept_utterances"]

KEPT_PREFIX = "The user said"
KEPT_IMPORTANCE = 0.3  # below every rule's facts: a kept sentence is found, rarely chosen
_KEPT_CONFIDENCE = 0.6
_MAX_SENTENCES = 3  # per message: a long story is not a memory dump

_ABOUT_SELF = re.compile(r"(?:I|I'm|I've|I'd|I'll|me|my|mine)\b", re.I)
_MY_SOMEONE = re.compile(r"my\s+(?P<noun>(?:[\w'-]+\s+){0,2}[\w'-]+)", re.I)
_CHIT_CHAT = re.compile(
    r"I(?:'m|\s+am)\s+(?:(?:so|very|really|a\s+bit|quite|pretty|just|not|kind\s+of|too)\s+)*"
    r"(?:happy|sad|tired|excited|sure|glad|sorry|fine|good|ok|okay|great|bored|hungry"
    r"|confused|thrilled|exhausted|busy|done|back|here|ready|curious|afraid|nervous|worried"
    r"|stressed|lost|kidding|joking|listening|thinking|wondering)\b"
    r"|I\s+(?:(?:just|really|totally|kind\s+of)\s+)?(?:see|think|guess|agree|know|mean"
    r"|understand|hope|wonder|suppose|believe|feel|get\s+it|got\s+it|can't\s+wait"
    r"|don't\s+know|don't\s+think|love\s+it|like\s+it|hate\s+it|appreciate)\b"
    r"|(?:let\s+me|let's)\b|I\s+have\s+(?:a|one|another)\s+(?:quick\s+)?question\b"
    # ends on what the conversation is about, not on something of the user's
    r"|.*\b(?:that|this|it)(?:\s+(?:idea|one|thing|again|later|now))?$",
    re.IGNORECASE,
)
# A first-person pronoun in Chinese, Japanese or Korean opens the sentence.
_CJK_SELF = re.compile(r"^(?:我|私|僕|俺|저는|제가|저|나는|내가)")
_CJK_QUESTION = re.compile(r"[吗嗎呢][。！]?$|か[。]?$")
_MIN_WORDS = 4
_MIN_CJK_CHARS = 4


def _discloses(sentence: str, *, entry_id: str, reading: MessageReading) -> bool:
    if _CJK_SELF.match(sentence):
        return len(sentence) >= _MIN_CJK_CHARS and not _CJK_QUESTION.search(sentence)
    if len(sentence.split()) < _MIN_WORDS:
        return False
    for clause in clauses_of(sentence, entry_id=entry_id, reading=reading):
        text = clause.text
        if not _ABOUT_SELF.match(text) or _CHIT_CHAT.match(text):
            continue
        someone = _MY_SOMEONE.match(text)
        if someone is not None:
            words = someone["noun"].lower().split()
            if any(w in OTHER_PEOPLE or w in CREDENTIALS for w in words):
                continue  # somebody else's life, or a secret: never kept
        return True
    return False


def kept_utterances(entry: TapeEntry, *, reading: MessageReading) -> Iterator[CandidateClaim]:
    """The sentences of `entry` that disclose something about the user, kept as said.
    `reading`: the message's reading (its reference and zone), shared with the rules' pass
    over the same sentences, which cut most of them into clauses already."""
    reference, timezone = reading.reference, reading.timezone
    message = entry.content.strip()
    if is_sarcastic(message):
        return
    kept = 0
    for raw in SENTENCE_BREAK.split(message.replace("\u2019", "'")):
        sentence = " ".join(raw.split())
        if not sentence or not is_statement(sentence) or sentence.endswith(("？", "?")):
            continue
        if not _discloses(sentence, entry_id=entry.id, reading=reading):
            continue
        yield CandidateClaim(
            content=f'{KEPT_PREFIX}: "{sentence}"',
            kind=ClaimKind.EPISODIC,
            importance=KEPT_IMPORTANCE,
            confidence=_KEPT_CONFIDENCE,
            # Said no later than the message: its date, not a claim about when it held.
            temporal=TemporalMetadata(
                kind=TemporalKind.EVENT,
                interval=Interval(valid_until=reference),
                precision=Precision.UNKNOWN,
                timezone=timezone,
                confidence=BEFORE_REFERENCE_CONFIDENCE,
            ),
            source_entry_ids=(entry.id,),
        )
        kept += 1
        if kept >= _MAX_SENTENCES:
            return
