"""Vectors in the index: how they are stored, and how the nearest ones are found fast.

A stored vector is quantized: its numbers are divided by a step (the largest
in size over 127) and rounded, so each becomes a whole number from -127 to 127,
and 128 is added to make it a byte of an array('B'). The step is kept beside
it; (code - 128) * step gives the number back to within half a step. A
768-number vector takes 768 bytes, where float32 takes 3,072 and a list of
Python floats 24,576: the vectors on disk and in memory shrink fourfold, and an
index loads in half the time. The cosines are off by about a thousandth, below
the difference between a good match and a poor one; the benchmark measures what
that costs in recall. On disk the bytes are base64 text: one byte has no byte
order, so an index written on one machine reads on any other.

Why 1 to 255 and not signed bytes: Python keeps one shared object for each int
from -5 to 256, so reading 1 to 255 out of an array creates no objects, and a
dot product over them runs about as fast as over floats; signed bytes below -5
would make a new int each, and the dot product half as slow again. The 128 comes
back out once per query, not once per number: sum(q * (c - 128)) is
sum(q * c) - 128 * sum(q).

Cosine similarity of unit vectors is their dot product. Scoring every vector
costs about 30 microseconds each in pure Python (768 multiplications, each
making a float object), so 40,000 of them take over a second: too slow for a
tool a model calls while someone waits. So search runs in two stages:

1. Every vector also has a sketch: one bit per dimension, its sign, kept as a
   Python int. Two vectors that point the same way agree on most signs, so the
   number of differing bits (XOR, then int.bit_count) is a rough distance. It
   costs a fifth of a microsecond a vector: two operations on 96-byte integers,
   done in C, instead of 768 multiplications done one by one.
2. The SHORTLIST vectors nearest by that rough distance are scored with every
   number, and the best of them returned.

The sketch needs vectors whose signs vary, as learned embeddings' and signed
feature hashing's do. Were all numbers positive, every sketch would be equal,
every row would tie for the shortlist, and search would score them all: slow,
but still right.
"""
import array
import base64
import binascii
import heapq
import math
import operator
from itertools import repeat
from typing import NamedTuple

# How many sketch-nearest candidates are scored with every number. tests/bench_index.py
# measured recall@10 against exact search over the original floats, on 40,000
# clustered 768-dimension vectors: 0.85 with 100 candidates, 0.93 with 150, 0.97
# with 200, 0.98 with 250, and no better with more, since scoring every stored
# vector finds 0.985: that is what a byte a number costs. Each candidate costs
# one dot product, about 30 microseconds.
SHORTLIST = 250

ZERO = 128  # the code of 0.0; codes below it stand for negative numbers
MAX_STEP = 1.0001 / 127  # a unit vector's largest number is 1, and float32 rounding may add a hair

# bytes.translate turns each code into "1" (negative) or "0" (zero or more).
SIGN_DIGIT = bytes.maketrans(bytes(range(256)), b"1" * ZERO + b"0" * (256 - ZERO))

try:
    from math import sumprod as dot  # Python 3.12+: one C loop
except ImportError:  # Python 3.11

    def dot(a, b) -> float:
        return sum(map(operator.mul, a, b))


class StoredVector(NamedTuple):
    """A quantized vector: number i is about (codes[i] - ZERO) * step."""

    codes: array.array  # of "B", bytes from 1 to 255
    step: float

    def numbers(self) -> list[float]:
        return [(code - ZERO) * self.step for code in self.codes]


def unit_vector(numbers) -> array.array:
    """The vector as float32, scaled to length 1 (a zero vector stays zero)."""
    vector = array.array("f", numbers)
    length = math.sqrt(dot(vector, vector))
    if length == 0.0 or abs(length - 1.0) < 1e-5:  # embedders promise length 1: then keep it as it is
        return vector
    return array.array("f", map(operator.mul, vector, repeat(1.0 / length)))


# region quantize
def quantize(numbers) -> StoredVector:
    """The vector in bytes: the largest number becomes ZERO + 127 or ZERO - 127, the rest in proportion."""
    largest = max(map(abs, numbers), default=0.0)
    step = largest / 127
    if step == 0.0:
        return StoredVector(array.array("B", [ZERO] * len(numbers)), 0.0)
    return StoredVector(array.array("B", [round(number / step) + ZERO for number in numbers]), step)
# endregion quantize


def encode_codes(codes: array.array) -> str:
    return base64.b64encode(codes.tobytes()).decode("ascii")


# region decode
def decode_codes(text: str, dimension: int) -> array.array:
    """The inverse of encode_codes; ValueError if the text is not `dimension` bytes."""
    raw = binascii.a2b_base64(text, strict_mode=True)  # base64.b64decode, minus a copy; binascii.Error is a ValueError
    if len(raw) != dimension:
        raise ValueError(f"a vector holds {len(raw)} numbers, expected {dimension} (cut short, or another model)")
    codes = array.array("B")
    codes.frombytes(raw)
    return codes


def check_step(step) -> float:
    """A stored step, checked: JSON allows NaN and Infinity, and a step must be neither, nor
    negative, nor larger than a vector of length 1 can have (its largest number is 1 at most)."""
    if not isinstance(step, float) or not math.isfinite(step) or not 0 <= step <= MAX_STEP:
        raise ValueError(f"a vector's step is {step!r}, not a number from 0 to {MAX_STEP:.6f}")
    return step
# endregion decode


# region sketch
def sketch(codes: array.array) -> int:
    """One bit per dimension, set where the code is below ZERO: where the number is
    negative by half a step or more (one nearer zero rounds to ZERO itself)."""
    return int(codes.tobytes().translate(SIGN_DIGIT), 2)
# endregion sketch


# region empty-sketch
def empty_sketch(dimension: int) -> int:
    """The sketch of a row that holds no chunk. Its set bits all lie above the
    dimension, so it differs from any query's sketch in more bits (2 * dimension
    at least) than a real sketch can (dimension at most), and is shortlisted last."""
    return ((1 << 2 * dimension) - 1) << dimension
# endregion empty-sketch


# region cosine
def cosine(query, query_offset: float, vector: StoredVector) -> float:
    """The cosine of a unit query and a stored unit vector. Each number is off by half a
    step at most, so the cosine by half a step times the sum of the query's numbers in
    size: about a thousandth for embeddings, whose numbers are of similar sizes, more
    for a vector with one number far larger than the rest (and so a coarse step).
    `query_offset` is ZERO * sum(query), computed once for all the vectors."""
    return (dot(query, vector.codes) - query_offset) * vector.step


def nearest_exact(query, vectors, rows, k: int) -> list[tuple[float, int]]:
    """The k best (cosine, row) among `rows`, scoring every one: the slow, certain way."""
    offset = ZERO * math.fsum(query)
    scored = ((cosine(query, offset, vectors[row]), row) for row in rows)
    return heapq.nlargest(k, scored)
# endregion cosine


# region nearest-sketched
def nearest_sketched(query, vectors, sketches, rows, k: int, shortlist: int = SHORTLIST) -> list[tuple[float, int]]:
    """The k best (cosine, row) among `rows`: shortlist by sketch distance, then score in full.

    `vectors` are StoredVectors; `rows` is None for every row. A row no longer in
    use has the vector None and the sketch empty_sketch(dimension)."""
    query_sketch = sketch(quantize(query).codes)
    if rows is None:
        rows = range(len(sketches))
        distances = [(query_sketch ^ other).bit_count() for other in sketches]
    else:
        distances = [(query_sketch ^ sketches[row]).bit_count() for row in rows]
    shortlist = max(shortlist, k)
    if len(distances) > shortlist:
        # The shortlist-th smallest distance is the cut; the rows at or under it go on
        # (a few more than `shortlist` when several lie exactly at the cut).
        cut = heapq.nsmallest(shortlist, distances)[-1]
        rows = [row for row, distance in zip(rows, distances) if distance <= cut]
    offset = ZERO * math.fsum(query)
    scored = ((cosine(query, offset, vectors[row]), row) for row in rows if vectors[row] is not None)
    return heapq.nlargest(k, scored)
# endregion nearest-sketched
