"""Folding for pattern matching keeps a map back to the original text (R-PRIV-1, R-READ-6)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memory_core.domain.folding import fold

PIECES = st.sampled_from(
    [
        "a",
        "Z",
        " ",
        "\u200b",
        "\u00ad",
        "\u2009",
        "ﬁ",
        "Ｄ",
        "с",
        "é",
        "e\u0301",
        "猫",
        "😀",
        "\ufe0f",
    ]
)


def test_a_worked_example_maps_every_folded_character_to_its_original() -> None:
    text = "a\u200bbﬁc\u200b\u200bＤ\U0001f600e"
    folded = fold(text, lookalikes=True)
    assert folded.text == "abficD\U0001f600e"
    assert [folded.original_index(i) for i in range(len(folded.text))] == [0, 2, 3, 3, 4, 7, 8, 9]
    assert folded.original_span(2, 4) == (3, 4)  # both halves of the ligature


@given(st.lists(PIECES, max_size=40).map("".join), st.booleans(), st.booleans())
def test_each_folded_character_comes_from_the_original_it_maps_to(
    text: str, keep_invisible: bool, lookalikes: bool
) -> None:
    folded = fold(text, keep_invisible=keep_invisible, lookalikes=lookalikes)
    indices = [folded.original_index(i) for i in range(len(folded.text))]
    assert indices == sorted(indices)
    for position, index in enumerate(indices):
        alone = fold(text[index], keep_invisible=keep_invisible, lookalikes=lookalikes).text
        assert folded.text[position] in alone
    if not lookalikes:
        expected = "".join(fold(char, keep_invisible=keep_invisible).text for char in text)
        assert folded.text == expected
