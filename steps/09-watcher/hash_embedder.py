"""An offline embedder: feature hashing. No model, no network, the same vector for
the same text on every machine and in every process.

It is no language model. It knows nothing of meaning, only of shared words and
pieces of words: 'starter' and 'levain' are strangers to it, while 'fermented'
and 'fermenting' look alike. That is enough for search to work without Ollama,
and make_embedder says so loudly at startup, so nobody takes it for the real thing.

How a text becomes a vector:
1. Unicode NFKC, then case-folded: 'é' typed as one character or as 'e' plus an
   accent (as macOS file names store it) is one letter, and 'Bread' is 'bread'.
2. Words are runs of letters and digits. A short list of English stop words
   ('the', 'and', 'of', ...) is dropped: they are in every text, and would make
   every text look a little like every other.
3. Features, strings tagged with their kind so that kinds never meet on purpose:
     w:ferment          the word form (a few English suffixes stripped: word_form)
     p:starter doubl    two neighbouring word forms: a little of the word order
     c:<fe c:fer ...    3 to 5 characters of '<word>' (the word between boundary
                        marks): shared roots the suffix rules miss ('sourdough'
                        and 'dough'), and typos
4. Each feature is hashed with BLAKE2b to a slot in [0, dimension) and a sign.
   BLAKE2b, not Python's hash(): hash() of a string is salted anew in every
   process (PYTHONHASHSEED), so vectors stored by one run would not match the
   next. The sign (+1 or -1) makes unrelated features that share a slot cancel
   out on average instead of always piling up.
5. Weights: 1 + log(count) for a feature seen count times (sub-linear: a word
   said ten times is not ten times the topic), times a weight for its kind.
6. The vector is normalised to length 1. A text without words (empty, spaces,
   punctuation) has no features and gets the zero vector: cosine 0 with anything.

Task prefixes ('search_query: ') are a convention a model was trained with; the
hasher ignores them, since the same words added to every text only blur them.
"""
import functools
import hashlib
import math
import re
import unicodedata
from collections import Counter

from vectors import normalise

DEFAULT_DIMENSION = 512

# How much each kind of feature counts, by its tag. A word has one form but
# many pieces (a 9-letter word has 24), so each piece counts for less.
KIND_WEIGHTS = {"w": 1.0, "p": 0.5, "c": 0.25}
PIECE_SIZES = (3, 4, 5)

WORD = re.compile(r"[^\W_]+")  # letters and digits; '_' counts as a separator
STOP_WORDS = frozenset(
    "a an and are as at be but by for from had has have i if in into is it its "
    "me my no not of on or our so than that the their them then there these they "
    "this to too was we were what when which will with you your".split()
)
# Longest first, so 'bakes' loses 'es' rather than 's'.
SUFFIXES = ("ing", "ed", "es", "s", "e")
MIN_STEM = 3


def word_form(word: str) -> str:
    """A few English endings stripped, so that 'fermenting', 'fermented' and
    'ferments' all become 'ferment', and 'bake', 'bakes', 'baked' become 'bak'.
    Not a real stemmer: it leaves at least MIN_STEM letters ('bread' stays
    'bread'), keeps a double 's' ('glass'), and gets some words wrong ('loaves'
    becomes 'loav', not 'loaf'), consistently, which is what matching needs."""
    if word.endswith("ss"):
        return word
    for suffix in SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= MIN_STEM:
            return word[: -len(suffix)]
    return word


def words(text: str) -> list[str]:
    """The text's words, normalised and case-folded, without stop words."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return [w for w in WORD.findall(text) if w not in STOP_WORDS]


def pieces(word: str) -> list[str]:
    """Character n-grams of '<word>', e.g. 'rye' gives c:<ry c:rye c:ye> c:<rye
    c:rye> c:<rye>."""
    marked = f"<{word}>"
    return [
        "c:" + marked[start : start + size]
        for size in PIECE_SIZES
        for start in range(len(marked) - size + 1)
    ]


# region features
def features(text: str) -> Counter:
    """Every feature of the text (see the module's docstring), with its count."""
    found = Counter()
    the_words = words(text)
    forms = [word_form(w) for w in the_words]
    found.update("w:" + form for form in forms)
    found.update(f"p:{left} {right}" for left, right in zip(forms, forms[1:]))
    for word in the_words:
        found.update(pieces(word))
    return found
# endregion features


# region slot
@functools.lru_cache(maxsize=1 << 17)
def slot(feature: str, dimension: int) -> tuple[int, int]:
    """Where a feature goes: (index in [0, dimension), sign +1 or -1).
    Cached: in a vault the same words come back all the time."""
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    number = int.from_bytes(digest, "little")
    # The remainder picks the slot and the top bit the sign: for a dimension
    # far below 2**63 the two are as good as independent.
    sign = 1 if number >> 63 == 0 else -1
    return number % dimension, sign
# endregion slot


class HashEmbedder:
    """An Embedder (embeddings.py), like OllamaEmbedder and StaticEmbedder. The
    name records the recipe in the index ('hash-512'); if you change the recipe,
    change the name, so an old index is rebuilt, not mixed."""

    def __init__(self, dimension: int = DEFAULT_DIMENSION):
        if dimension < 2:
            raise ValueError("dimension must be at least 2")
        self.dimension = dimension
        self.name = f"hash-{dimension}"

    # region embed
    def embed(self, text: str) -> list[float]:
        """The text's vector: every feature added, weighted, into its slot."""
        vector = [0.0] * self.dimension
        for feature, count in features(text).items():
            index, sign = slot(feature, self.dimension)
            weight = (1 + math.log(count)) * KIND_WEIGHTS[feature[0]]
            vector[index] += sign * weight
        return normalise(vector)
    # endregion embed

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.embed(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.embed(text)
