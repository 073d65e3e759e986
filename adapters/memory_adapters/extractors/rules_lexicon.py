"""The word lists of the profile grammar (`rules_profile`): which verbs, adjectives and nouns
make a first-person clause a lasting fact about the user rather than conversation.

The grammar is small — subject, predicate, object — and stays general; what keeps it from
storing chit-chat is these closed lists: "I play the guitar" is a habit, "I see what you
mean" is not; "I'm married" is a state, "I'm so excited" a mood; "my sister lives in Chicago"
is the user's family, "my boss lives in Zurich" somebody else's life (reported facts about
other people are not the user's to store).
"""

from __future__ import annotations

import re

__all__ = [
    "ATTRIBUTES",
    "CREDENTIALS",
    "FAMILY",
    "HABIT_VERBS",
    "LIFE_EVENT_VERBS",
    "NATIONALITIES",
    "NOT_OWNED",
    "OTHER_PEOPLE",
    "PETS",
    "PROGRESSIVE_VERBS",
    "attribute_word",
    "word_set",
]


def word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Present-tense verbs of habits, skills, possessions and circumstances ("I play", "we own").
HABIT_VERBS = word_set(
    "play speak run collect own drive ride use study teach volunteer practise practice "
    "follow wear take eat drink smoke keep grow attend support cook bake knit paint sew "
    "surf climb swim hike cycle write read work manage lead coach train deploy code "
    "program build maintain write host rent share commute live do go sing dance draw "
    "garden fish hunt brew meditate"
)
# "-ing" forms of ongoing projects ("I'm learning Japanese", "I'm saving up for a house").
PROGRESSIVE_VERBS = word_set(
    "learning studying doing building training saving writing working developing "
    "preparing planning renovating raising taking teaching running organising organizing "
    "recovering expecting trying applying"
)
# Past-tense life events kept without a date ("I adopted a cat", "I grew up in Ohio").
LIFE_EVENT_VERBS = word_set(
    "adopted bought sold married divorced graduated retired founded launched inherited "
    "grew broke ran won lost quit started finished passed failed got moved joined left "
    "switched changed published"
)
# Lasting states a clause "I'm ..." can name ("I'm married", "I'm fluent in French").
ATTRIBUTES = word_set(
    "married single divorced widowed engaged separated retired unemployed self-employed "
    "pregnant vegetarian vegan pescatarian gluten-free dairy-free diabetic asthmatic "
    "epileptic blind deaf colour-blind color-blind left-handed right-handed "
    "allergic intolerant lactose fluent bilingual trilingual native into "
    "religious atheist agnostic sober introverted extroverted shy "
    "between freelance remote originally"
)
# The user's household: facts about them are the user's life too.
FAMILY = word_set(
    "wife husband partner spouse fiance fiancee girlfriend boyfriend son daughter child "
    "children kid kids baby twin twins mother mom mum mommy mummy father dad daddy parents "
    "brother brothers sister sisters sibling siblings grandmother grandma granny grandfather "
    "grandpa grandparents grandson granddaughter aunt uncle cousin niece nephew "
    "stepmother stepfather stepson stepdaughter family household"
)
PETS = word_set(
    "dog dogs cat cats puppy kitten parrot bird birds hamster hamsters rabbit rabbits "
    "snake lizard turtle tortoise horse fish goldfish guinea pig ferret pet pets beagle "
    "labrador retriever poodle terrier"
)
# People whose lives are their own: "my boss lives in Zurich" is not a fact about the user.
OTHER_PEOPLE = word_set(
    "friend friends colleague colleagues coworker coworkers co-worker boss manager "
    "neighbour neighbor neighbours neighbors roommate flatmate housemate classmate "
    "teacher doctor therapist landlord client clients customer ex character hero "
    "mate buddy acquaintance"
)
# Nouns after "I have" that are conversation, not possessions ("I have a question").
NOT_OWNED = word_set(
    "question questions idea ideas doubt doubts problem issue feeling suggestion minute "
    "moment second clue chance go look thought request favour favor point headache "
    "nothing something anything confession update cold cough fever flu hangover"
)
# What a user keeps secret is never a profile fact ("my API key is ..."), whatever policy
# the secret screen applies after.
CREDENTIALS = word_set(
    "key password passcode passphrase pin token secret ssn login credentials cvv"
)
NATIONALITIES = word_set(
    "American British English Scottish Welsh Irish Canadian Australian Mexican Brazilian "
    "Argentinian Chilean Colombian Peruvian Spanish Portuguese French German Dutch Belgian "
    "Swiss Austrian Italian Greek Turkish Polish Czech Slovak Hungarian Romanian Bulgarian "
    "Ukrainian Russian Swedish Norwegian Danish Finnish Icelandic Estonian Latvian "
    "Lithuanian Indian Pakistani Bangladeshi Chinese Japanese Korean Vietnamese Thai "
    "Filipino Indonesian Malaysian Singaporean Nigerian Kenyan Ghanaian Egyptian "
    "Moroccan Ethiopian South-African Israeli Iranian Iraqi Lebanese Syrian Saudi "
    "Jewish Muslim Christian Catholic Hindu Buddhist Sikh"
)

_ATTRIBUTE_HEAD = re.compile(r"[a-z]+(?:-[a-z]+)*", re.I)


def attribute_word(text: str) -> bool:
    """The predicate of "I'm ..." opens with a lasting state ("married", "fluent in")."""
    head = _ATTRIBUTE_HEAD.match(text)
    if head is None:
        return False
    word = head.group()
    return word.lower() in ATTRIBUTES or word in NATIONALITIES
