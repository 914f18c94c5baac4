"""BERT's WordPiece tokenizer in pure Python: text to the token ids of a vocabulary.

static_embedder.py looks each token up in a table distilled from a model, so it
must cut text exactly as that model's own tokenizer does (all-MiniLM-L6-v2 uses
BERT's uncased vocabulary of 30,522 pieces). Two stages:

1. Words. Control characters go; the text is lower-cased and accents are
   stripped ('Café' becomes 'cafe'); it is split at white space, and every
   punctuation mark is a word of its own ('don't' is 'don', "'", 't'). Each
   Chinese, Japanese or Korean ideograph is a word of its own too.
2. Pieces. Each word is cut greedily, longest match first, into pieces of the
   vocabulary; a piece that continues a word is spelled with '##' in front:
   'embeddings' is 'em', '##bed', '##ding', '##s'. A word that cannot be cut (a
   letter the vocabulary lacks) is one [UNK].

Most text is ASCII, so words are found by a regular expression there; a character
loop handles the rest.
"""
import functools
import re
import unicodedata

UNKNOWN = "[UNK]"
CONTINUATION = "##"
LONGEST_WORD = 100  # characters; a longer word is [UNK], as in BERT

# In ASCII every printable character that is not a letter or a digit is punctuation to BERT.
ASCII_WORD = re.compile(r"[a-z0-9]+|[^\sa-z0-9]")
ASCII_CONTROLS = {c: None for c in range(32) if chr(c) not in "\t\n\r"} | {127: None}


def is_punctuation(char: str) -> bool:
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True  # '$', '+', '^', '`' and the like, which Unicode calls symbols
    return unicodedata.category(char).startswith("P")


def is_ideograph(code: int) -> bool:
    """The CJK Unified Ideographs blocks, as BERT lists them."""
    return (0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF or 0x20000 <= code <= 0x2A6DF
            or 0x2A700 <= code <= 0x2B73F or 0x2B740 <= code <= 0x2B81F or 0x2B820 <= code <= 0x2CEAF
            or 0xF900 <= code <= 0xFAFF or 0x2F800 <= code <= 0x2FA1F)


def strip_accents(text: str) -> str:
    """'é' becomes 'e': decomposed into 'e' and a combining accent, which is dropped."""
    return "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")


def split_other(text: str) -> list[str]:
    """The words of a stretch of non-ASCII text, one character at a time."""
    found, current = [], []
    for char in text:
        category = unicodedata.category(char)
        if char in "\t\n\r " or category == "Zs":
            breaks, alone = True, False
        elif char in "\x00\ufffd" or category in ("Cc", "Cf"):
            continue  # control characters are dropped
        else:
            breaks = alone = is_punctuation(char) or is_ideograph(ord(char))
        if breaks and current:
            found.append("".join(current))
            current = []
        if alone:
            found.append(char)
        elif not breaks:
            current.append(char)
    if current:
        found.append("".join(current))
    return found


def words(text: str) -> list[str]:
    """The text as BERT's basic tokenizer sees it: lower-case words without accents,
    each punctuation mark a word of its own."""
    text = text.lower()
    if text.isascii():  # the common case, in one pass
        return ASCII_WORD.findall(text.translate(ASCII_CONTROLS))
    found = []
    for part in text.split():
        part = strip_accents(part)
        if part.isascii():
            found += ASCII_WORD.findall(part.translate(ASCII_CONTROLS))
        else:
            found += split_other(part)
    return found


class WordPiece:
    """A vocabulary (token -> id) and the greedy cut of a word into its pieces."""

    def __init__(self, tokens: list[str]):
        self.ids = {token: number for number, token in enumerate(tokens)}
        self.unknown = self.ids[UNKNOWN]
        # Cached per word: a vault says the same words again and again.
        self.word_ids = functools.lru_cache(maxsize=1 << 16)(self._word_ids)

    # region pieces
    def _word_ids(self, word: str) -> tuple[int, ...]:
        """The ids of the word's pieces, longest match first; (unknown,) if it cannot be cut."""
        if len(word) > LONGEST_WORD:
            return (self.unknown,)
        found, start = [], 0
        while start < len(word):
            for end in range(len(word), start, -1):
                piece = word[start:end] if start == 0 else CONTINUATION + word[start:end]
                if piece in self.ids:
                    found.append(self.ids[piece])
                    start = end
                    break
            else:  # no piece of the vocabulary starts here
                return (self.unknown,)
        return tuple(found)

    def encode(self, text: str) -> list[int]:
        """Every token id of the text, in order."""
        return [number for word in words(text) for number in self.word_ids(word)]
    # endregion pieces
