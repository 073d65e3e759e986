"""The profile grammar's patterns: subject, predicate, object, in the rule table's form.

Two groups, placed by `rules_table`: `SPECIFIC` shapes that name what they are about
(occupation, age, birth, origin, a new job, a diet change, "I'm in Lisbon"), tried before the
trip and plan rules; `GENERAL` shapes — "I have ...", "I <habit verb> ...", "I'm a ...",
"I'm <state>", "my <noun> is ...", their negations and undated life events — tried last,
so that every more specific rule has had its turn.
"""

from __future__ import annotations

import re

from memory_adapters.extractors import rules_profile as p
from memory_adapters.extractors.rules_common import Handler
from memory_adapters.extractors.rules_facts import diet, employer, home
from memory_adapters.extractors.rules_lexicon import (
    HABIT_VERBS,
    LIFE_EVENT_VERBS,
    PROGRESSIVE_VERBS,
)

__all__ = ["ADV", "GENERAL", "I_AM", "I_HAVE", "SPECIFIC"]

I_AM = r"I(?:'m|\s+am)"
I_HAVE = r"I(?:'ve|\s+have)"
ADV = (
    r"(?:(?:really|truly|strongly|generally|usually|also|much|absolutely|definitely|actually"
    r"|currently|now|still|just|recently|finally|totally|kind\s+of|do|basically|mostly"
    r"|always|often|sometimes|regularly|honestly|officially|already|even)\s+)*"
)
_DIET = r"vegetarian|vegan|pescatarian|lactose[\s-]intolerant|gluten[\s-]free|keto"


def _alternation(words: frozenset[str]) -> str:
    return "|".join(sorted(words, key=len, reverse=True))


_HABIT = _alternation(HABIT_VERBS)
_PROGRESSIVE = _alternation(PROGRESSIVE_VERBS)
_LIFE = _alternation(LIFE_EVENT_VERBS - {"grew"}) + r"|grew\s+up|gave\s+up|stopped"
# "-ing" forms that make a plan only with a date ("next week I'm visiting my parents").
_DATED_PROGRESSIVE = r"visiting|seeing|meeting|hosting|attending|starting|getting|having|turning"


def _rule(pattern: str, handler: Handler) -> tuple[re.Pattern[str], Handler]:
    return re.compile(pattern, re.IGNORECASE), handler


SPECIFIC: tuple[tuple[re.Pattern[str], Handler], ...] = (
    _rule(rf"I\s+{ADV}work\s+as\s+(?P<obj>.+)", p.occupation),
    _rule(rf"{I_AM}\s+{ADV}working\s+as\s+(?P<obj>.+)", p.occupation),
    _rule(
        rf"I(?:'ve|\s+have)?\s+{ADV}(?:started|got|landed|accepted|took|began)\s+(?:a\s+)?"
        r"(?:new\s+)?(?:job|position|role)\s+(?:at|with)\s+(?P<obj>.+)",
        employer,
    ),
    _rule(rf"{I_AM}\s+{ADV}(?P<n>\d{{1,3}})(?:\s+years?\s+old|\s+yo)?(?:\s+(?:now|today))?", p.age),
    _rule(rf"I(?:'ve|\s+have)?\s+{ADV}turned\s+(?P<n>\d{{1,3}})(?:\s+.*)?", p.age),
    _rule(r"I\s+was\s+born\s+(?P<obj>.+)", p.born),
    _rule(rf"{I_AM}\s+{ADV}(?:originally\s+)?from\s+(?P<obj>.+)", p.origin),
    _rule(r"I\s+grew\s+up\s+in\s+(?P<obj>.+)", p.origin),
    _rule(
        rf"I(?:'ve|\s+have)?\s+{ADV}(?:went|gone|became|become|turned)\s+(?P<diet>{_DIET})"
        r"(?:\s+.*)?",
        diet,
    ),
    _rule(rf"{I_AM}\s+{ADV}(?P<diet>gluten[\s-]free|keto)(?:\s+.*)?", diet),
    _rule(rf"{I_AM}\s+{ADV}in\s+(?P<obj>[A-Z].+)", home),
    _rule(
        r"I\s+live\s+in\s+(?:a|an|my)\s+(?:[\w-]+\s+)?(?:flat|house|apartment|place|home)"
        r"\s+in\s+(?P<obj>.+)",
        home,
    ),
)

GENERAL: tuple[tuple[re.Pattern[str], Handler], ...] = (
    _rule(
        r"my\s+(?P<subj>(?:[\w'-]+\s+){0,2}?[\w'-]+?)\s+(?P<verb>is|are|was|were|has|have"
        r"|had|lives|live|works|loves|likes|goes|go|attends|attend|speaks|plays|runs|uses"
        r"|studies|passed|turned|just\s+turned|got|moved|talks)\b\s*(?P<rest>.*)",
        p.my_subject,
    ),
    _rule(
        r"my\s+(?P<subj>[\w-]+)(?P<verb>'s)\s+(?P<rest>(?:in|on|at|a|an|the|not|called|named"
        r"|\d).*)",
        p.my_subject,
    ),
    _rule(
        rf"{I_HAVE}\s+never\s+(?P<obj>(?:been|visited|tried|owned|had|seen|met|smoked"
        r"|driven|learned|learnt|lived)\b.+)",
        p.never_done,
    ),
    _rule(rf"{I_HAVE}\s+been\s+(?P<obj>.+)", p.has_been),
    _rule(rf"I\s+{ADV}have\s+(?P<obj>.+)", p.have),
    _rule(rf"{I_HAVE}\s+{ADV}got\s+(?P<obj>.+)", p.have),
    _rule(
        rf"I\s+(?P<neg>don't|do\s+not|never|can't|cannot|can\s+not)\s+{ADV}"
        rf"(?P<verb>{_HABIT}|have|own|eat|stand)\b\s*(?P<obj>.*)",
        p.not_do,
    ),
    _rule(rf"I\s+can\s+{ADV}(?P<verb>{_HABIT})\s+(?P<obj>.+)", p.can_do),
    _rule(rf"I\s+{ADV}(?P<verb>{_HABIT})\b\s*(?P<obj>.*)", p.habit),
    _rule(
        rf"{I_AM}\s+{ADV}(?P<verb>(?P<ongoing>{_PROGRESSIVE})|{_DATED_PROGRESSIVE})\b\s*(?P<obj>.*)",
        p.progressive,
    ),
    _rule(rf"{I_AM}\s+(?:not|no)\s+(?P<obj>.+)", p.not_attribute),
    _rule(rf"{I_AM}\s+{ADV}(?P<obj>(?:a|an)\s+.+)", p.identity),
    _rule(rf"{I_AM}\s+(?P<name>[A-Z][\w'-]+)(?:,.*)?", p.self_named),
    _rule(
        rf"{I_AM}\s+{ADV}(?P<obj>[\w.'-]+\s+(?:feet|foot|ft|cm|metres|meters)\s+.*tall)", p.identity
    ),
    _rule(rf"{I_AM}\s+{ADV}(?P<obj>on\s+[A-Z].+)", p.identity),
    _rule(rf"{I_AM}\s+{ADV}(?P<obj>.+)", p.attribute),
    _rule(rf"I(?:'ve|\s+have)?\s+{ADV}(?P<verb>{_LIFE})\s+(?P<obj>.+)", p.life_event),
)
