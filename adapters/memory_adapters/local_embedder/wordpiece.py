"""A BERT WordPiece tokenizer over a vendored `vocab.txt`, in pure Python.

Reproduces Hugging Face's `BertTokenizer` (lower-casing, accent stripping, CJK characters
as words, punctuation splits, greedy longest-match WordPiece) so the MiniLM model sees the
ids it was trained on — without the `tokenizers` → hub dependency chain.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from pathlib import Path

import attrs

__all__ = ["Encoding", "WordPieceTokenizer"]

_MAX_WORD_CHARS = 100
_CJK_RANGES = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B820, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)


def _is_cjk(code: int) -> bool:
    return any(low <= code <= high for low, high in _CJK_RANGES)


def _is_punctuation(char: str) -> bool:
    code = ord(char)
    # BERT treats every non-alphanumeric ASCII character as punctuation, "$" and "^" included.
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def _is_whitespace(char: str) -> bool:
    return char in " \t\n\r" or unicodedata.category(char) == "Zs"


def _is_control(char: str) -> bool:
    if char in "\t\n\r":
        return False
    return unicodedata.category(char) in ("Cc", "Cf")


@attrs.frozen(kw_only=True)
class Encoding:
    input_ids: tuple[int, ...]
    attention_mask: tuple[int, ...]


class WordPieceTokenizer:
    """Uncased BERT tokenization with `[CLS] … [SEP]` framing and truncation."""

    def __init__(self, vocab_path: Path, *, max_length: int = 256) -> None:
        tokens = vocab_path.read_text(encoding="utf-8").splitlines()
        self._vocab = {token: index for index, token in enumerate(tokens)}
        self._max_length = max_length
        self.pad_id = self._vocab["[PAD]"]
        self.unk_id = self._vocab["[UNK]"]
        self.cls_id = self._vocab["[CLS]"]
        self.sep_id = self._vocab["[SEP]"]

    def _basic_tokens(self, text: str) -> list[str]:
        cleaned: list[str] = []
        for char in text:
            code = ord(char)
            if code in (0, 0xFFFD) or _is_control(char):
                continue
            if _is_whitespace(char):
                cleaned.append(" ")
            elif _is_cjk(code):
                cleaned.append(f" {char} ")
            else:
                cleaned.append(char)
        words: list[str] = []
        for raw in "".join(cleaned).split():
            decomposed = unicodedata.normalize("NFD", raw.lower())
            current = ""
            for char in decomposed:
                if unicodedata.category(char) == "Mn":
                    continue  # accents are stripped, as uncased BERT was trained

                if _is_punctuation(char):
                    if current:
                        words.append(current)
                        current = ""
                    words.append(char)
                else:
                    current += char
            if current:
                words.append(current)
        return words

    def _word_ids(self, word: str) -> list[int]:
        if len(word) > _MAX_WORD_CHARS:
            return [self.unk_id]
        ids: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            found: int | None = None
            while start < end:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                found = self._vocab.get(piece)
                if found is not None:
                    break
                end -= 1
            if found is None:
                return [self.unk_id]
            ids.append(found)
            start = end
        return ids

    def token_ids(self, text: str) -> list[int]:
        """Ids of `text` without special tokens or truncation."""
        ids: list[int] = []
        for word in self._basic_tokens(text):
            ids.extend(self._word_ids(word))
        return ids

    def encode(self, text: str) -> list[int]:
        body = self.token_ids(text)[: self._max_length - 2]
        return [self.cls_id, *body, self.sep_id]

    def encode_batch(self, texts: Sequence[str]) -> list[Encoding]:
        """Encodings padded to the longest in the batch."""
        encoded = [self.encode(text) for text in texts]
        width = max((len(ids) for ids in encoded), default=0)
        return [
            Encoding(
                input_ids=tuple(ids + [self.pad_id] * (width - len(ids))),
                attention_mask=tuple([1] * len(ids) + [0] * (width - len(ids))),
            )
            for ids in encoded
        ]
