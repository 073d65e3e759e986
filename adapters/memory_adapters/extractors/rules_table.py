"""The rule table: which clause shapes the rules extractor recognises, in priority order.

Each pattern must match a whole clause (after its lead-in words); its handler may still
decline so the next rule gets its turn, and the first rule that answers wins the clause.
Order matters: directives before facts ("don't mention my job" is not a fact about a job),
cancellations and negations before the plain facts they contain, trips before plans.
"""

from __future__ import annotations

import re

from memory_adapters.extractors.rules_common import Handler
from memory_adapters.extractors.rules_directives import always, from_now_on, suppress
from memory_adapters.extractors.rules_facts import (
    allergy,
    diet,
    employer,
    fan,
    home,
    no_longer,
    preference,
    preferred_name,
)
from memory_adapters.extractors.rules_grammar import GENERAL, SPECIFIC
from memory_adapters.extractors.rules_plans import (
    appointment,
    called_off,
    cancelled,
    event,
    plan,
    trip,
)

__all__ = ["RULES"]

_I_AM = r"I(?:'m|\s+am)"
_I_HAVE = r"I(?:'ve|\s+have)"
_ADV = (
    r"(?:(?:really|truly|strongly|generally|usually|also|much|absolutely|definitely|actually"
    r"|currently|now|still|just|recently|finally|totally|kind\s+of|do)\s+)*"
)
_TRIP_NOUN = r"(?:planned\s+)?(?:trip|flight|travel|journey|vacation|holiday|visit|move)"
_TRAVELLING = r"(?:flying|going|travell?ing|driving|heading|taking\s+a\s+trip|moving|relocating)"
_TRAVEL = r"(?:fly|go|travel|drive|flying|going|travell?ing|driving)"
_I_PLAN = rf"(?:{_I_AM}|I)\s+{_ADV}(?:plan|planning|intend|intending|going)"
_SUPPRESS = (
    r"(?:please\s+)?(?:(?:stop|quit)\s+(?:mentioning|bringing\s+up|talking\s+about"
    r"|referring\s+to|discussing)|(?:don't|do\s+not|never)\s+(?:ever\s+)?(?:mention"
    r"|bring\s+up|talk\s+about|refer\s+to|discuss|raise)|I\s+(?:don't|do\s+not)\s+want"
    r"\s+(?:you\s+)?to\s+(?:talk\s+about|discuss|mention|hear\s+about|bring\s+up))"
)
_APPOINTMENT = (
    r"(?:a|an)\s+(?:[\w'-]+\s+){0,2}?(?:meeting|appointment|interview|exam|flight|deadline"
    r"|presentation|surgery|call)\b.+"
)
_EVENT_VERB = (
    r"went\s+to|visited|finished|started|completed|attended|joined|graduated\s+from|bought"
    r"|sold|quit|left|met|moved\s+out\s+of|got|won|passed|ran|adopted|broke|stopped|gave\s+up"
)
_CANCELLED = r"(?:cancell?ed|called\s+off|off|scrapped)"
_PREFERENCE_VERB = (
    r"prefer|like|love|enjoy|adore|hate|dislike|detest|can't\s+stand|cannot\s+stand"
    r"|don't\s+like|do\s+not\s+like|don't\s+enjoy|'d\s+prefer|\s*would\s+prefer|'d\s+rather"
    r"|\s*would\s+rather"
)
_DIET = r"vegetarian|vegan|pescatarian|lactose[\s-]intolerant"


def _rule(pattern: str, handler: Handler) -> tuple[re.Pattern[str], Handler]:
    return re.compile(pattern, re.IGNORECASE), handler


RULES: tuple[tuple[re.Pattern[str], Handler], ...] = (
    # directives: suggestions only (R-DIR-1)
    _rule(rf"{_SUPPRESS}\s+(?P<obj>.+)", suppress),
    _rule(
        r"no\s+more\s+(?:talk(?:ing)?|discussion|chat(?:ting)?|questions|jokes|mentions?"
        r"|comments|updates)\s+(?:about|of|on)\s+(?P<obj>.+)",
        suppress,
    ),
    _rule(r"no\s+more\s+(?P<obj>.+)", suppress),
    _rule(r"(?:please\s+)?always\s+(?P<obj>.+)", always),
    # cancellations and negations, before the facts they mention
    _rule(
        r"I(?:'ve|\s+have)?\s+(?:just\s+)?(?:had\s+to\s+)?(?:cancel(?:l?ed)?|called\s+off"
        rf"|scrapped)\s+(?:my|the|our)\s+{_TRIP_NOUN}\s+to\s+(?P<obj>.+)",
        cancelled,
    ),
    _rule(
        rf"(?:my|the|our)\s+{_TRIP_NOUN}\s+to\s+(?P<obj>.+?)\s+(?:is|was|got|has\s+been)\s+"
        rf"{_CANCELLED}(?:\s+.*)?",
        cancelled,
    ),
    _rule(
        rf"(?:my|the|our)\s+(?P<obj>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?)\s+{_TRIP_NOUN}\s+"
        rf"(?:is|was|got|has\s+been)\s+{_CANCELLED}(?:\s+.*)?",
        cancelled,
    ),
    _rule(
        r"I(?:'ve|\s+have)?\s+(?:just\s+)?(?:had\s+to\s+)?(?:cancel(?:l?ed)?|called\s+off"
        r"|scrapped)\s+(?P<obj>(?:my|the|our)\s+.+)",
        called_off,
    ),
    _rule(
        r"(?P<obj>(?:my|the|our)\s+(?:[\w'-]+\s+){0,2}?[\w'-]+)\s+(?:is|was|got|has\s+been)\s+"
        r"(?:cancell?ed|called\s+off)(?:\s+.*)?",
        called_off,
    ),
    _rule(rf"{_I_AM}\s+(?:not|no\s+longer)\s+{_TRAVELLING}\s+to\s+(?P<obj>.+)", cancelled),
    _rule(r"I(?P<be>'m|\s+am)?\s+no\s+longer\s+(?P<obj>.+)", no_longer),
    _rule(r"I(?P<be>)\s+(?:don't|do\s+not)\s+(?P<obj>.+?)\s+any\s?more", no_longer),
    # states
    _rule(
        r"(?P<how>my\s+name\s+is(?:\s+actually)?|my\s+name's|(?:please\s+|you\s+can\s+"
        r"|(?:I\s+want|I'd\s+like)\s+you\s+to\s+)?call\s+me|I\s+go\s+by"
        r"|(?:everyone|everybody|people|friends|they)\s+calls?\s+me)"
        r"\s+(?P<obj>.+)",
        preferred_name,
    ),
    _rule(r"(?P<obj>.+)", from_now_on),
    _rule(rf"I(?:'ve|\s+have)?\s+{_ADV}(?:moved|relocated)\s+(?:back\s+)?to\s+(?P<obj>.+)", home),
    _rule(rf"I\s+{_ADV}live\s+in\s+(?P<obj>.+)", home),
    _rule(rf"{_I_AM}\s+{_ADV}(?:based|living|located)\s+in\s+(?P<obj>.+)", home),
    _rule(rf"{_I_HAVE}\s+(?:been\s+living|lived)\s+in\s+(?P<obj>.+)", home),
    _rule(rf"I\s+{_ADV}work\s+(?:at|for)\s+(?P<obj>.+)", employer),
    _rule(rf"{_I_AM}\s+{_ADV}(?:working|employed)\s+(?:at|for|by)\s+(?P<obj>.+)", employer),
    _rule(rf"{_I_HAVE}\s+been\s+working\s+(?:at|for)\s+(?P<obj>.+)", employer),
    _rule(rf"{_I_AM}\s+{_ADV}(?:severely\s+|very\s+)?allergic\s+to\s+(?P<obj>.+)", allergy),
    _rule(rf"{_I_AM}\s+{_ADV}(?:(?:a|an|strictly|fully)\s+)*(?P<diet>{_DIET})(?:\s+.*)?", diet),
    *SPECIFIC,
    # trips, plans, events
    _rule(rf"{_I_AM}\s+{_ADV}{_TRAVELLING}\s+(?:back\s+)?to\s+(?P<obj>.+)", trip),
    _rule(rf"I(?:'ll|\s+will)\s+(?:be\s+)?{_TRAVEL}\s+to\s+(?P<obj>.+)", trip),
    _rule(r"I(?:'ll|\s+will)\s+be\s+in\s+(?P<obj>[A-Z].+)", trip),
    _rule(rf"{_I_PLAN}\s+to\s+(?:fly|go|travel|drive)\s+to\s+(?P<obj>.+)", trip),
    _rule(
        rf"(?:{_I_AM}\s+{_ADV}(?:planning|taking|booking)|I\s+{_ADV}(?:plan|have|booked)"
        rf"|I've\s+(?:got|booked)|I(?:'ll|\s+will)\s+take)\s+(?:a|my|our|the)\s+{_TRIP_NOUN}"
        r"\s+to\s+(?P<obj>.+)",
        trip,
    ),
    _rule(rf"{_I_PLAN}\s+to\s+(?P<obj>.+)", plan),
    _rule(
        r"(?:my|our)\s+(?P<obj>(?:[\w'-]+\s+){0,2}?(?:meeting|appointment|interview|exam"
        r"|flight|deadline|presentation|surgery|call|wedding|party|concert))\s+is\s+(?P<when>.+)",
        appointment,
    ),
    _rule(rf"I\s+(?P<have>have)\s+(?P<obj>{_APPOINTMENT})", plan),
    _rule(rf"I\s+{_ADV}(?P<verb>{_EVENT_VERB})\s+(?P<obj>.+)", event),
    # preferences
    _rule(rf"I(?:\s+{_ADV})?(?P<verb>{_PREFERENCE_VERB})\s+(?P<obj>.+)", preference),
    _rule(rf"{_I_AM}\s+{_ADV}(?:not\s+)?(?:a\s+)?(?:big\s+|huge\s+)?fan\s+of\s+(?P<obj>.+)", fan),
    # the general profile grammar, last
    *GENERAL,
)
