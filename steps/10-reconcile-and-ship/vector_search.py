"""Vectors in the index: how they are stored, and how the nearest ones are found fast.

A vector is an array('f'): 4 bytes a number instead of the 32 a Python float
takes in a list, which is what lets tens of thousands of 768-number vectors fit
in memory. On disk it is base64 text of its float32 bytes, always little-endian,
so an index written on one machine reads on any other.

Cosine similarity of unit vectors is their dot product. Scoring every vector
exactly costs about 40 microseconds each in pure Python (768 multiplications,
each making float objects), so 40,000 of them take over a second and a half: too
slow for a tool a model calls while someone waits. So search runs in two stages:

1. Every vector also has a sketch: one bit per dimension, its sign, kept as a
   Python int. Two vectors that point the same way agree on most signs, so the
   number of differing bits (XOR, then int.bit_count) is a rough distance. It
   costs a fifth of a microsecond a vector: two operations on 96-byte integers,
   done in C, instead of 768 multiplications done one by one.
2. The SHORTLIST vectors nearest by that rough distance are scored exactly, and
   the best of them returned.

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
import sys
from itertools import repeat

# How many sketch-nearest candidates are scored exactly. tests/bench_index.py
# measured recall@10 against exact search on 40,000 clustered 768-dimension
# vectors: 0.90 with 100 candidates, 0.965 with 150, 0.99 with 200, 1.0 with 300.
# Each candidate costs one exact dot product; 200 keeps a margin above 0.95 for
# embeddings more crowded than the benchmark's, at about a third of the search time.
SHORTLIST = 200

# bytes.translate turns each byte into "0" or "1" by its top bit. In a
# little-endian float32 that top bit, in the 4th byte, is the sign.
SIGN_DIGIT = bytes.maketrans(bytes(range(256)), b"0" * 128 + b"1" * 128)

try:
    from math import sumprod as dot  # Python 3.12+: one C loop
except ImportError:  # Python 3.11

    def dot(a, b) -> float:
        return sum(map(operator.mul, a, b))


def unit_vector(numbers) -> array.array:
    """The vector as float32, scaled to length 1 (a zero vector stays zero)."""
    vector = array.array("f", numbers)
    length = math.sqrt(dot(vector, vector))
    if length == 0.0 or abs(length - 1.0) < 1e-5:  # embedders promise length 1: then keep it as it is
        return vector
    return array.array("f", map(operator.mul, vector, repeat(1.0 / length)))


def little_endian_bytes(vector: array.array) -> bytes:
    """The float32 bytes in little-endian order, whatever this machine's order is."""
    if sys.byteorder == "little":
        return vector.tobytes()
    swapped = array.array("f", vector)
    swapped.byteswap()
    return swapped.tobytes()


def encode_vector(vector: array.array) -> str:
    return base64.b64encode(little_endian_bytes(vector)).decode("ascii")


def decode_vector(text: str, dimension: int) -> array.array:
    """The inverse of encode_vector; ValueError if the text is not `dimension` float32s."""
    raw = binascii.a2b_base64(text, strict_mode=True)  # base64.b64decode, minus a copy; binascii.Error is a ValueError
    if len(raw) != 4 * dimension:
        raise ValueError(f"a vector holds {len(raw) / 4:g} numbers, expected {dimension} (cut short, or another model)")
    vector = array.array("f")
    vector.frombytes(raw)
    if sys.byteorder == "big":
        vector.byteswap()
    return vector


# region sketch
def sketch(vector: array.array) -> int:
    """One bit per dimension, set where the number is negative (its sign bit)."""
    sign_bytes = little_endian_bytes(vector)[3::4]  # the byte holding each number's sign
    return int(sign_bytes.translate(SIGN_DIGIT), 2)
# endregion sketch


def empty_sketch(dimension: int) -> int:
    """The sketch of a row that holds no chunk. Its set bits all lie above the
    dimension, so it differs from any query's sketch in more bits (2 * dimension
    at least) than a real sketch can (dimension at most), and is shortlisted last."""
    return ((1 << 2 * dimension) - 1) << dimension


def nearest_exact(query, vectors, rows, k: int) -> list[tuple[float, int]]:
    """The k best (cosine, row) among `rows`, scoring every one: the slow, certain way."""
    scored = ((dot(query, vectors[row]), row) for row in rows)
    return heapq.nlargest(k, scored)


# region nearest
def nearest_sketched(query, vectors, sketches, rows, k: int, shortlist: int = SHORTLIST) -> list[tuple[float, int]]:
    """The k best (cosine, row) among `rows`: shortlist by sketch distance, then score exactly.

    `rows` is None for every row. A row no longer in use has the vector None and
    the sketch empty_sketch(dimension)."""
    query_sketch = sketch(array.array("f", query))
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
    scored = ((dot(query, vectors[row]), row) for row in rows if vectors[row] is not None)
    return heapq.nlargest(k, scored)
# endregion nearest
