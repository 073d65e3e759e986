"""Neutralise stored text before it enters a prompt: no container escape, no forged turn (R-READ-6).

Claims, persona and working text are data written partly by a model from conversation, so they
may contain what would close our `<context-data>` container, open a fake
`<runtime-directives>` block, or — read by the chat model's tokenizer — become a control token
that starts a system turn. Reference §4.9 (incl. the [later] list) is followed: a zero-width
space (U+200B) is inserted into each such sequence, so a human still reads the same text but
no tokenizer or tag parser sees the sequence.

What is neutralised (case-insensitive; fullwidth look-alikes of `< | [ /` count too):

- container tags: `<context-data`, `</context-data`, `<runtime-directives`,
  `</runtime-directives` (also with spaces after `<`);
- every `<|` (ChatML `<|im_start|>`, `<|im_end|>`, Llama-3 `<|eot_id|>`, any `<|…|>`) and
  DeepSeek's `<｜` — breaking the opener breaks every token of the family without listing it;
- `[INST]`, `[/INST]`, Mistral `[SYSTEM_PROMPT]`, `[AVAILABLE_TOOLS]`, `[TOOL_CALLS]`,
  `[TOOL_RESULTS]` (and their closers), GLM `[gMASK]`/`[sMASK]`, Llama-2 `<<SYS>>`/`<</SYS>>`;
- `<s>`, `</s>`, `<bos>`, `<eos>`, `<pad>`, `<unk>`, GLM `<sop>`/`<eop>`, Gemma
  `<start_of_turn>`/`<end_of_turn>`;
- tool and reasoning tags, with or without attributes: `<tool_call>`, `<tool_response>`,
  `<tool_result>`, `<function_call>`, `<think>`, `<thinking>` (and their closers);
- runs of ≥3 backticks or tildes (code fences), split with a zero-width space between each;
- per line: a leading `#` run (forged headings such as `### System:` or `## Relevant Memories`),
  also behind list or quote markers (`- # Runtime Directives`, as a memory's first line
  renders in a lane), gets a zero-width space in front; a leading role prefix (`system:`,
  `assistant:`, `user:`, `human:`, `developer:`, `tool:`) gets one before its colon.

Before matching, invisible characters are removed (decision): every Unicode format character
(category Cf — zero-width space/joiners, word joiner, BOM, soft hyphen, bidi controls, the tag
block used for invisible "ASCII smuggling"), variation selectors (also usable to smuggle
bytes), and control characters other than tab and newline. Otherwise stored text could carry
its own zero-width characters to pre-break a token so our patterns miss it — and anything
downstream that strips zero-width characters would then restore it. Line breaks (`\\r\\n`, `\\r`,
vertical tab, form feed, NEL, U+2028/U+2029) become `\\n` first, so per-line rules see every line
a model would. The cost: emoji ZWJ sequences render as their parts. The function is idempotent.

Matching runs on a folded shadow of the text, not the text (decision, issue 11): NFKC per
character (fullwidth `＜／ｃｏｎｔｅｘｔ－ｄａｔａ＞` and `［ＩＮＳＴ］` are what an NFKC
tokenizer reads), every Unicode space to a space (a thin space inside a tag), and the
Cyrillic/Greek look-alikes of Latin letters to those letters (`<сontext-data>` with a Cyrillic
`с`). Each shadow character knows its original, so the zero-width spaces go into the original
text, which is otherwise left as written: Russian or Greek prose is not rewritten to Latin.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from memory_core.domain.folding import fold

__all__ = ["ZWSP", "find_control_sequences", "sanitize", "strip_invisible"]

ZWSP = "\u200b"

_LINE_BREAKS = re.compile("\r\n|[\r\x0b\x0c\x85\u2028\u2029]")
_BREAK_CHARS = re.compile("[\r\x0b\x0c\x85\u2028\u2029]")  # one stands in every line break

# Look-alikes a model (or an NFKC-normalising tokenizer) reads as the ASCII character.
_LT = "[<\uff1c\ufe64]"
_GT = "[>\uff1e\ufe65]"
_BAR = "[|\uff5c]"
_LBRACKET = "[\\[\uff3b]"
_SLASH = "[/\uff0f]"
_SPACE = "[ \\t]*"

_BRACKET_NAMES = (
    "INST|SYSTEM_PROMPT|AVAILABLE_TOOLS|TOOL_CALLS|TOOL_RESULTS|TOOL_CONTENT|gMASK|sMASK"
)
_ANGLE_NAMES = "s|bos|eos|pad|unk|sop|eop|start_of_turn|end_of_turn"
_TAG_NAMES = "tool_call|tool_response|tool_result|function_call|think|thinking"

# Each pattern's group 1 is the opener character; the zero-width space goes right after it.
_OPENER_PATTERNS = re.compile(
    "|".join(
        (
            # container tags, with or without a closing slash and spaces
            rf"({_LT})(?={_SPACE}{_SLASH}?{_SPACE}(?:context-data|runtime-directives))",
            # ChatML / Llama-3 / DeepSeek: any `<|` or `<｜`
            rf"({_LT})(?={_BAR})",
            # Llama-2 system markers
            rf"({_LT})(?={_LT}{_SLASH}?SYS{_GT})",
            # bracketed template tokens
            rf"({_LBRACKET})(?={_SLASH}?(?:{_BRACKET_NAMES})\b)",
            # angle-bracket template tokens; `>` required so `<span` or `<sup>` stay untouched
            rf"({_LT})(?={_SPACE}{_SLASH}?{_SPACE}(?:{_ANGLE_NAMES}){_SPACE}{_GT})",
            # tool and reasoning tags: names no prose spells, so attributes may follow
            rf"({_LT})(?={_SPACE}{_SLASH}?{_SPACE}(?:{_TAG_NAMES})(?![\w-]))",
        )
    ),
    re.IGNORECASE,
)
_FENCE_RUN = re.compile(r"`{3,}|~{3,}")
# Behind list and quote markers too: `- # Runtime Directives` renders as a heading.
_LEADING_HASHES = re.compile(r"^([ \t]*(?:(?:[-*+>]|\d{1,9}[.)])[ \t]*)*)(?=#)", re.MULTILINE)
# Markdown around the role (`- system:`, `> **System**:`, `### System:`) and a fullwidth
# colon count too; the zero-width space is the one the heading rule just put in front.
_ROLE_PREFIX = re.compile(
    r"^([ \t>*_#\u200b-]*(?:system|assistant|user|human|developer|tool)[ \t*_]*)(?=[:\uff1a])",
    re.MULTILINE | re.IGNORECASE,
)


# Every opener pattern starts with one of these: the full pattern is tried only where one
# stands. Scanning all six alternatives at every position was most of a turn's sanitising
# (14 ms for a 24k-character working projection); most stored text holds no opener at all.
_OPENER_CHARS = re.compile("[<\uff1c\ufe64\\[\uff3b]")
_ASCII_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f]")


def _is_invisible(char: str) -> bool:
    if char in "\t\n":
        return False
    code = ord(char)
    if 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF:
        return True  # variation selectors
    return unicodedata.category(char) in ("Cf", "Cc")


@functools.cache
def _maybe_invisible() -> re.Pattern[str]:
    """The BMP's invisible characters, and every astral one (rare: asked one by one).
    Computed once over the BMP (tens of milliseconds), as `folding` does for its own set."""
    bmp = "".join(re.escape(chr(code)) for code in range(0x10000) if _is_invisible(chr(code)))
    return re.compile(f"[{bmp}\\U00010000-\\U0010FFFF]")


def _drop_invisible(match: re.Match[str]) -> str:
    char = match.group()
    return "" if _is_invisible(char) else char


def strip_invisible(text: str) -> str:
    """Unify line breaks to `\\n`, then drop format/control characters and variation selectors."""
    if text.isascii() and _ASCII_CONTROLS.search(text) is None:
        # Nearly every stored text: no break to unify (ASCII ones are controls) and nothing
        # to drop. One scan for a character class instead of the line-break alternation,
        # which a regular expression tries at every position (most of sanitising it).
        return text
    unified = _LINE_BREAKS.sub("\n", text) if _BREAK_CHARS.search(text) else text
    # The characters `_is_invisible` names, found by one scan instead of asked one by one
    # (that was most of sanitising a long text): in ASCII the C0 controls and DEL.
    if unified.isascii():
        return _ASCII_CONTROLS.sub("", unified)
    return _maybe_invisible().sub(_drop_invisible, unified)


def _break_points(shadow: str) -> list[int]:
    """Shadow indices before which a zero-width space goes, from every rule."""
    # Each opener pattern matches its one opener character (the lookahead holds the rest),
    # so its matches are exactly the opener positions where it matches.
    points = [
        found.end()
        for opener in _OPENER_CHARS.finditer(shadow)
        if (found := _OPENER_PATTERNS.match(shadow, opener.start())) is not None
    ]
    # The other rules each need a character most text lacks, and a substring test is far
    # cheaper than a scan (the fence alternation alone was most of sanitising a working
    # projection without a single backtick).
    if "```" in shadow or "~~~" in shadow:
        for match in _FENCE_RUN.finditer(shadow):
            points.extend(range(match.start() + 1, match.end()))
    if "#" in shadow:
        points.extend(match.end(1) for match in _LEADING_HASHES.finditer(shadow))
    if ":" in shadow or "\uff1a" in shadow:
        points.extend(match.end(1) for match in _ROLE_PREFIX.finditer(shadow))
    return points


def sanitize(text: str) -> str:
    """`text` with every control sequence broken by a zero-width space (see module docstring)."""
    cleaned = strip_invisible(text)
    folded = fold(cleaned, lookalikes=True)
    # Every break point precedes a shadow character (an opener, a fence or a `#` or `:` is
    # always followed by one), so it maps to the original character it goes in front of.
    before = sorted({folded.original_index(point) for point in _break_points(folded.text)})
    parts: list[str] = []
    cursor = 0
    for index in before:
        parts.extend((cleaned[cursor:index], ZWSP))
        cursor = index
    parts.append(cleaned[cursor:])
    return "".join(parts)


def find_control_sequences(text: str) -> list[str]:
    """Snippets of the control sequences `sanitize` would break, searched in the folded form
    of `text` as given.

    No stripping happens first, so a zero-width space inside a sequence counts as broken; on
    `sanitize`'s output this is always empty (a test asserts it). For tests and audits.
    """
    shadow = fold(text, keep_invisible=True, lookalikes=True).text
    found: list[str] = []
    for pattern in (_OPENER_PATTERNS, _LEADING_HASHES, _ROLE_PREFIX):
        found.extend(shadow[match.start() : match.end() + 16] for match in pattern.finditer(shadow))
    found.extend(match.group(0) for match in _FENCE_RUN.finditer(shadow))
    return found
