"""Keyword search: words, their normal forms, and BM25 over chunks.

Vector search finds what a passage is about; keyword search finds the passage
that says the rare word you typed: a name, a term, a number. Each misses what
the other finds, so search.py fuses the two.

The tokenizer lower-cases, splits on anything that is not a letter or digit,
drops the function words of English (articles, pronouns, auxiliaries,
prepositions, question words: "how do I", "what can my"), which say how a question
is asked, not what it is about, and folds some English word forms together, so
that "starters" finds "starter" and "baking" finds "baked". normal_form is a
handful of suffix rules, not a real stemmer ("loaves" and "loaf" stay apart). To
words of four letters or more it does, in order:

    -ies  -> -y           berries -> berry (and nothing more)
    -sses -> -ss          glasses -> glass
    -ches, -shes, -xes, -zes lose -es      batches -> batch, boxes -> box
    -s    dropped         starters -> starter, bakes -> bake
                          (not after s, u, i: glass, citrus, basis)
    -ing, -ed dropped     when 3 letters with a vowel remain, and not from -eed (seed, need):
                          proofed, proofing -> proof; a doubled last letter is undone,
                          stopped -> stop, but not l, s, z: filled -> fill; an -e comes
                          back on a short stem that needs it: baking -> bake
    -e    dropped         unless the stem is short and ends consonant-vowel-consonant:
                          change, changed -> chang, but note stays note, or it would
                          meet "not"

The results are not always words, and need not be: they are only compared with
each other. Words of other languages pass through lower-cased.
"""
import math
import re
from array import array
from collections import Counter
from functools import lru_cache

WORD = re.compile(r"[^\W_]+")  # letters and digits; the underscore is not part of a word
# Checked before a word is folded, so each is listed as it is written.
STOPWORDS = frozenset("""
    a about after again all also am an and any are as at be been before being both but by can
    could did do does doing done during each either else ever every few for from get gets got had
    has have having he her here hers him his how i if in into is it its itself just let me might
    more most much must my myself no nor of off on once only or other our ours out over own same
    shall she should so some such than that the their theirs them then there these they this
    those through to too under until up upon us very was we were what when where whether which
    while who whom whose why will with within without would yet you your yours
    s t d ll m re ve
""".split())  # s, t, d, ll, m, re, ve: what is left of it's, don't, I'd, we'll, I'm, you're, I've
VOWELS = set("aeiouy")
# A short stem such as "not", "bak", "fil": one vowel, then one consonant that may take an -e.
SHORT_STEM = re.compile(r"[^aeiouy]*[aeiouy][^aeiouywx]")
# How much a word counts where it appears: a word in the title or an alias says
# more about the chunk than the same word in a sentence of the text (which counts 1).
FIELD_WEIGHTS = {"title": 3, "aliases": 3, "headings": 2, "tags": 2}


# region normal-form
@lru_cache(maxsize=100_000)  # a vault repeats its words; each is normalised once
def normal_form(word: str) -> str:
    """The lower-cased word with a few English suffixes folded (see the module docstring)."""
    word = word.lower()
    if len(word) < 4 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:  # but pies -> pie
        return word[:-3] + "y"
    if word.endswith("sses"):
        word = word[:-2]
    elif word.endswith(("ches", "shes", "xes", "zes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        stem = word[: -len(suffix)]
        if word.endswith(suffix) and len(stem) >= 3 and VOWELS & set(stem) and not word.endswith("eed"):
            if stem[-1] == stem[-2] and stem[-1] not in "lsz":
                return stem[:-1]  # stopped -> stop
            return stem + "e" if SHORT_STEM.fullmatch(stem) else stem  # baking -> bake
    if word.endswith("e") and len(word) > 3 and not SHORT_STEM.fullmatch(word[:-1]):
        word = word[:-1]
    return word
# endregion normal-form


@lru_cache(maxsize=100_000)
def index_term(word: str) -> str:
    """The normal form of a word, or "" for a stopword."""
    return "" if word.lower() in STOPWORDS else normal_form(word)


def tokenize(text: str) -> list[str]:
    """The normal forms of the words in text, in order, without the stopwords."""
    return [term for term in map(index_term, WORD.findall(text)) if term]


def matches(text: str, terms) -> list[tuple[int, int, str]]:
    """(start, end, term) of each word in text whose normal form is one of terms."""
    found = []
    for match in WORD.finditer(text):
        term = normal_form(match.group())
        if term in terms:
            found.append((match.start(), match.end(), term))
    return found


# region weighted-terms
def weighted_terms(title: str, aliases, heading_path, tags, text: str) -> Counter:
    """How often each term occurs in a chunk, a word in the title counting FIELD_WEIGHTS["title"] times, etc."""
    headings = heading_path[1:] if heading_path[:1] == [title] else heading_path  # the title is counted once
    fields = {
        "title": title,
        "aliases": " ".join(aliases),
        "headings": " ".join(headings),
        "tags": " ".join(tags),  # "bread/sourdough" gives "bread" and "sourdough"
    }
    counts = Counter(tokenize(text))
    for field, words in fields.items():
        weight = FIELD_WEIGHTS[field]
        for term in tokenize(words) if words else ():
            counts[term] = counts.get(term, 0) + weight  # not counts[term] +=, which is slower on a Counter
    return counts
# endregion weighted-terms


# region position
def position(rows: array, row: int) -> int:
    """Where `row` is in `rows`. array.index would compare one Python int at a time;
    bytes.find looks for the row's four bytes in C, tens of times faster, and a
    term of a large vault can have tens of thousands of rows."""
    data, wanted, size = rows.tobytes(), array("I", [row]).tobytes(), rows.itemsize
    at = data.find(wanted)
    while at % size and at != -1:  # found across two numbers: look further
        at = data.find(wanted, at + 1)
    if at == -1:
        raise ValueError(f"row {row} is not in the postings")
    return at // size
# endregion position


class KeywordIndex:
    """BM25 over chunks, each known by its row number.

    BM25 scores a chunk for a query term by how rare the term is in the whole
    index (idf: a word in every chunk tells nothing) and how often it occurs in
    the chunk, with diminishing returns (k1) and shorter chunks favoured (b)."""

    k1 = 1.2
    b = 0.75

    # region postings
    def __init__(self):
        # term -> (rows, counts): two arrays of 4-byte numbers, the rows that have the term
        # and its weighted count in each, in the order they were added. A dict {row: count}
        # per term would take about 100 bytes an entry, and a vault has millions of entries.
        self.postings: dict[str, tuple[array, array]] = {}
        self.lengths: dict[int, int] = {}  # row -> weighted number of terms
        self.total_length = 0

    def add(self, row: int, terms: Counter) -> None:
        postings = self.postings  # a local name is found faster, and this loop runs millions of times
        for term, count in terms.items():
            entry = postings.get(term)
            if entry is None:
                postings[term] = entry = (array("I"), array("I"))
            entry[0].append(row)
            entry[1].append(count)
        length = sum(terms.values())
        self.lengths[row] = length
        self.total_length += length

    def remove(self, row: int, terms: Counter) -> None:
        """Forget a row; `terms` are the ones it was added with."""
        for term in terms:
            rows, counts = self.postings[term]
            at = position(rows, row)
            del rows[at], counts[at]
            if not rows:
                del self.postings[term]
        self.total_length -= self.lengths.pop(row)
    # endregion postings

    # region bm25
    def idf(self, term: str) -> float:
        chunks = len(self.lengths)
        having = len(self.postings[term][0]) if term in self.postings else 0
        return math.log(1 + (chunks - having + 0.5) / (having + 0.5))

    def scores(self, terms, rows=None) -> dict[int, float]:
        """BM25 of every row (or only those in the set `rows`) that has at least one of terms."""
        if not self.lengths:
            return {}
        average_length = self.total_length / len(self.lengths)
        scores: dict[int, float] = {}
        for term in set(terms):
            idf = self.idf(term)
            for row, count in zip(*self.postings.get(term, ((), ()))):
                if rows is not None and row not in rows:
                    continue
                norm = self.k1 * (1 - self.b + self.b * self.lengths[row] / average_length)
                scores[row] = scores.get(row, 0.0) + idf * count * (self.k1 + 1) / (count + norm)
        return scores
    # endregion bm25
