"""The profile grammar of the rules extractor: lead-ins, household plurals, copular facts,
work and study, family, pets, age, languages, hobbies, possessions, health and diet, names,
plans and their cancellation, negation — and what is not the user's fact at all: questions,
hypotheticals, other people's lives, sarcasm, moods (R-WRITE-1, R-DIR-1)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from extractor_support import MakeRequest, RunExtractor

from memory_adapters.extractors import RulesExtractor
from memory_core.domain.directives import DirectiveKind
from memory_core.domain.temporal import TemporalKind
from memory_core.ports.extraction import ExtractionResult

Extract = Callable[..., ExtractionResult]


@pytest.fixture
def extract(make_request: MakeRequest, run: RunExtractor) -> Extract:
    def go(*texts: str) -> ExtractionResult:
        return run(RulesExtractor(), make_request([("user", text) for text in texts]))

    return go


# sentence -> (content, slot)
PROFILE = {
    # lead-ins and labels
    "Quick background: I'm based in Lisbon.": ("The user lives in Lisbon.", "user.home_city"),
    "btw I work as a data engineer.": ("The user works as a data engineer.", "user.occupation"),
    "Fun fact: I have a pet snake.": ("The user has a pet snake.", "user.has.snake"),
    "Honestly, I prefer working from home.": ("The user prefers working from home.", None),
    # household plurals
    "We relocated to Porto two weeks ago.": ("The user lives in Porto.", "user.home_city"),
    "We live in a flat in Hackney.": ("The user lives in Hackney.", "user.home_city"),
    "My wife and I got married in 2015.": ("The user got married in 2015.", None),
    # copular facts
    "My favourite editor is Helix.": (
        "The user's favourite editor is Helix.",
        "user.my.favourite_editor",
    ),
    "My birthday's in July.": ("The user's birthday is in July.", "user.my.birthday"),
    "My cat's name is Mochi.": ("The user's cat's name is Mochi.", "user.my.cat_name"),
    "My dog is named Bella.": ("The user's dog is named Bella.", "user.my.dog_name"),
    # work, study, identity
    "I'm a nurse at St. Mary's hospital.": ("The user is a nurse at St. Mary's hospital.", None),
    "Update: I just started a new job at Globex.": ("The user works at Globex.", "user.employer"),
    "I'm learning Japanese at night school.": (
        "The user is learning Japanese at night school.",
        None,
    ),
    # family and pets: the user's household
    "My sister lives in Chicago.": ("The user's sister lives in Chicago.", None),
    "I have a dog named Biscuit.": ("The user has a dog named Biscuit.", "user.has.dog"),
    "I don't have a dog anymore.": ("The user no longer has a dog.", "user.has.dog"),
    # age, origin, languages, habits
    "I'm 34 years old.": ("The user is 34 years old.", "user.age"),
    "I'm originally from Nairobi.": ("The user is originally from Nairobi.", "user.origin"),
    "I speak Portuguese and Spanish.": (
        "The user speaks Portuguese and Spanish.",
        "user.does.speak_portuguese_and_spanish",
    ),
    "I smoke.": ("The user smokes.", "user.does.smok"),
    "I'm fluent in French.": ("The user is fluent in French.", "user.is.fluent"),
    # negation
    "I'm not married.": ("The user is not married.", "user.is.married"),
    "I don't eat pork.": ("The user does not eat pork.", "user.does.eat_pork"),
    "I can't eat shellfish.": ("The user cannot eat shellfish.", None),
    "I've never been to Asia.": ("The user has never been to Asia.", None),
    # phrasings beyond the team corpus
    "Everyone calls me Bea.": ("The user prefers to be called Bea.", "user.preferred_name"),
    "I'm flying to Lima on the 3rd.": (
        "The user plans a trip to Lima on the 3rd.",
        "user.trip.lima",
    ),
    "I'm from Canada originally.": ("The user is originally from Canada.", "user.origin"),
    "My son plays the violin.": ("The user's son plays the violin.", None),
    # names
    "Hi, I'm Lena.": ("The user's name is Lena.", "user.preferred_name"),
    "Please call me Dr. Okafor.": (
        "The user prefers to be called Dr Okafor.",
        "user.preferred_name",
    ),
}


@pytest.mark.parametrize("text", PROFILE)
def test_plain_first_person_statements_become_facts(extract: Extract, text: str) -> None:
    (found,) = extract(text).candidates
    assert (found.content, found.slot) == PROFILE[text]


def test_a_multi_fact_sentence_yields_each_fact(extract: Extract) -> None:
    result = extract("I'm Ana, I'm 31 and I live in Seville. I'm vegan and allergic to soy.")
    assert [c.content for c in result.candidates] == [
        "The user's name is Ana.",
        "The user is 31 years old.",
        "The user lives in Seville.",
        "The user is vegan.",
        "The user is allergic to soy.",
    ]


def test_quitting_a_habit_shares_the_habit_slot(extract: Extract) -> None:
    """ "I quit smoking last year" retires "The user smokes" through their common slot."""
    (habit,) = extract("I smoke.").candidates
    (quit,) = extract("I quit smoking last year.").candidates
    assert quit.slot == habit.slot and quit.temporal.kind is TemporalKind.EVENT


def test_a_cancelled_plan_takes_the_plan_slot_in_its_common_phrasings(extract: Extract) -> None:
    """R-TIME-2: "the Tokyo trip is cancelled" ends the plan "I'm flying to Tokyo"."""
    (plan,) = extract("I'm flying to Tokyo next month.").candidates
    for said in ("Update: the Tokyo trip is cancelled.", "I'm not going to Tokyo after all."):
        slots = [c.slot for c in extract(said).candidates]
        assert plan.slot in slots, said


def test_a_negation_of_an_older_value_keeps_no_slot(extract: Extract) -> None:
    """Initech, then Globex, then "no longer at Initech": Globex must stay current."""
    result = extract(
        "I work at Initech.", "I started a new job at Globex.", "I no longer work at Initech."
    )
    assert [(c.content, c.slot) for c in result.candidates] == [
        ("The user works at Initech.", "user.employer"),
        ("The user works at Globex.", "user.employer"),
        ("The user no longer works at Initech.", None),
    ]


@pytest.mark.parametrize(
    ("text", "topic"),
    [("No more talk about crypto please.", "crypto"), ("Don't bring up my ex again.", "ex")],
)
def test_no_more_and_dont_bring_up_are_draft_topics(
    extract: Extract, text: str, topic: str
) -> None:
    """R-DIR-1: a suggestion to approve, never a correction or a fact."""
    result = extract(text)
    assert result.candidates == ()
    assert [(s.kind, s.topic) for s in result.suggestions] == [
        (DirectiveKind.SUPPRESS_TOPIC, topic)
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Should I move to Berlin?",
        "Where do I live, do you remember?",
        "If I moved to Tokyo, would I need a visa?",
        "I might move to Seoul someday, who knows.",
        "I wish I lived by the sea.",
        "Suppose I worked at Google.",
        "In a story, my character lives in Mars City.",
        "My friend Jake is allergic to cats.",
        "My boss lives in Zurich, apparently.",
        "My neighbour has three cats.",
        "Sarah said she moved to Dublin.",
        "Oh great, I just love being stuck in traffic.",
        "Yeah right, I'm a billionaire.",
        "I'm so excited.",
        "It was a big leap but I'm happy.",
        "I'm not sure yet.",
        "I have a question.",
        "I see what you mean.",
        "My API key is sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c.",
    ],
)
def test_what_is_not_the_users_fact_stores_nothing(extract: Extract, text: str) -> None:
    result = extract(text)
    assert (result.candidates, result.rejected) == ((), ())
