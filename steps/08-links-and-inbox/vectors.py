"""Vector arithmetic on plain lists of floats: no numpy.

An embedding is a list of floats. Two texts are alike when their vectors point the
same way, which cosine similarity measures: 1 for the same direction, 0 for
unrelated, -1 for opposite. Once every vector is scaled to length 1 (normalised),
cosine is just the dot product, so the index of step 7 stores normalised vectors
and computes one sum of products per stored vector.
"""
import math
import operator

# region dot
if hasattr(math, "sumprod"):  # Python 3.12 and newer: one loop in C, and more precise
    _sumprod = math.sumprod
else:  # Python 3.11

    def _sumprod(a, b):
        return sum(map(operator.mul, a, b))


def dot(a: list[float], b: list[float]) -> float:
    """The sum of products a[i] * b[i]. Lengths must match: the fallback's map
    would silently stop at the shorter one, which would hide a real bug."""
    if len(a) != len(b):
        raise ValueError(f"vectors of different lengths: {len(a)} and {len(b)}")
    return _sumprod(a, b)
# endregion dot


# region cosine
def norm(vector: list[float]) -> float:
    """The vector's length (its L2 norm)."""
    return math.sqrt(dot(vector, vector))


def normalise(vector: list[float]) -> list[float]:
    """The same direction with length 1. A vector of zeros has no direction and
    stays zeros: its cosine with anything is then 0, never a division by zero."""
    length = norm(vector)
    if length == 0:
        return [0.0] * len(vector)
    return [x / length for x in vector]


def cosine(a: list[float], b: list[float]) -> float:
    """Cosine similarity of any two vectors of the same length, in [-1, 1];
    0 when either is all zeros."""
    lengths = norm(a) * norm(b)
    if lengths == 0:
        return 0.0
    # Rounding can push a product of unit vectors a hair past 1.
    return max(-1.0, min(1.0, dot(a, b) / lengths))
# endregion cosine
