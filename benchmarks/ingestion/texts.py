"""The ingestion benchmark's user messages: built from templates, or a conversation file's
turns (`benchmarks.ingestion`)."""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["conversation", "messages"]

_NAMES = ("Tom", "Ana", "Mei", "Omar", "Lena", "Ravi", "Ines", "Kofi", "Yuki", "Pavel")
_RELATIVES = ("brother", "sister", "cousin", "neighbour", "colleague", "uncle", "aunt")
_ACTIVITIES = ("kayaking", "climbing", "chess", "pottery", "sailing", "baking", "cycling")
_PLACES = ("Porto", "Lyon", "Kyoto", "Accra", "Oslo", "Quito", "Tbilisi", "Hobart")
_PETS = ("cat", "dog", "parrot", "rabbit", "tortoise")
_INSTRUMENTS = ("violin", "cello", "oboe", "trumpet", "harp")


def messages(count: int, *, seed: int = 0) -> list[str]:
    """`count` distinct user messages the rules extractor turns into unslotted claims (no
    message supersedes another, so every claim stays recallable and is embedded)."""
    out: list[str] = []
    for n in range(seed, seed + count):
        name, relative = _NAMES[n % len(_NAMES)], _RELATIVES[n % len(_RELATIVES)]
        place, activity = _PLACES[n % len(_PLACES)], _ACTIVITIES[n % len(_ACTIVITIES)]
        match n % 4:
            case 0:
                text = f"I really enjoy {activity} with my {relative} {name} {n} on weekends."
            case 1:
                text = f"My {relative} {name} {n} plays the {_INSTRUMENTS[n % 5]} in {place}."
            case 2:
                text = f"I'm learning the language of {place} for trip number {n} next spring."
            case _:
                text = f"We adopted a {_PETS[n % 5]} called {name}-{n} while living in {place}."
        out.append(text)
    return out


def conversation(path: Path, count: int, *, seed: int = 0) -> list[str]:
    """`count` turns of the conversation at `path` (see the module docstring), from turn
    `seed` on, round and round. Each turn is its text as said; only a turn the window takes a
    second time carries a mark (" (again 1)"), so a window longer than the conversation stays
    distinct texts. Every turn marked — its position, as before — put a number in each: the
    date-phrase scan then read every sentence, where it reads a fifth of LoCoMo's."""
    data = json.loads(path.read_text(encoding="utf-8"))
    data = [data] if isinstance(data, dict) else data  # one sample on its own
    if all(isinstance(turn, str) for turn in data):
        turns = list(data)
    else:
        turns = [
            turn["text"]
            for sample in data
            for key, session in sample["conversation"].items()
            if key.startswith("session_") and isinstance(session, list)
            for turn in session
            if isinstance(turn, dict) and str(turn.get("text", "")).strip()
        ]
    if not turns:
        raise ValueError(f"{path}: no turns with text")
    texts = [turns[(seed + n) % len(turns)] for n in range(count)]
    return [
        text if (again := n // len(turns)) == 0 else f"{text} (again {again})"
        for n, text in enumerate(texts)
    ]
