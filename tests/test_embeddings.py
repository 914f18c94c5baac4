"""Step 6's embeddings: the offline hashing embedder and the cosine helpers."""
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

STEP = Path(__file__).resolve().parent.parent / "steps" / "06-embeddings"
sys.path.insert(0, str(STEP))

from hash_embedder import HashEmbedder, slot, word_form, words  # noqa: E402
from vectors import cosine, dot, norm, normalise  # noqa: E402


def is_unit(vector):
    return math.isclose(norm(vector), 1.0, rel_tol=1e-9)


# ---- the offline embedder ----------------------------------------------------------

SAMPLES = [
    "Feed the sourdough starter equal weights of flour and water.",
    "Crème fraîche thickens overnight at room temperature.",
    "Kimchi: napa cabbage, gochugaru, garlic, fish sauce!",
    "",
]
IN_ANOTHER_PROCESS = (
    "import json, sys; sys.path.insert(0, sys.argv[1]); from hash_embedder import HashEmbedder; "
    "print(json.dumps(HashEmbedder().embed_documents(json.loads(sys.argv[2]))))"
)


def test_hash_vectors_are_the_same_in_every_process():
    here = HashEmbedder().embed_documents(SAMPLES)
    for seed in ("1", "2"):  # Python's own hash() of a str would differ between these
        done = subprocess.run(
            [sys.executable, "-c", IN_ANOTHER_PROCESS, str(STEP), json.dumps(SAMPLES)],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        assert json.loads(done.stdout) == here


def test_the_recipe_is_pinned():
    # Changing the hash or the feature strings changes every stored vector. If
    # you mean to, change HashEmbedder.name too (so old indexes are rebuilt), then these.
    assert slot("w:bread", 512) == (324, -1)
    assert slot("w:bread", 768) == (68, -1)


@pytest.mark.parametrize("dimension", [64, 512, 768])
def test_hash_vectors_have_the_dimension_and_length_one(dimension):
    hashing = HashEmbedder(dimension)
    assert hashing.name == f"hash-{dimension}" and hashing.dimension == dimension
    for vector in hashing.embed_documents(SAMPLES[:3]):
        assert len(vector) == dimension and is_unit(vector)


def test_the_default_is_512():
    assert HashEmbedder().name == "hash-512"


def test_similar_sentences_are_closer_than_unrelated_ones():
    hashing = HashEmbedder()
    starter, also_starter, cabbage = hashing.embed_documents(
        [
            "The sourdough starter doubled overnight.",
            "My starter doubles in size overnight when it is warm.",
            "Salt the napa cabbage for kimchi.",
        ]
    )
    assert cosine(starter, also_starter) > 0.3
    assert cosine(starter, also_starter) > cosine(starter, cabbage) + 0.2


def test_word_forms_meet():
    assert word_form("fermenting") == word_form("fermented") == word_form("ferments") == "ferment"
    assert word_form("bake") == word_form("bakes") == word_form("baked") == word_form("baking") == "bak"
    assert word_form("bread") == "bread"  # too short to lose 'ed'
    assert word_form("glass") == "glass"  # a double s is no plural
    hashing = HashEmbedder()
    assert cosine(hashing.embed_query("fermenting cabbage"), hashing.embed_query("fermented cabbages")) > 0.6


def test_words_are_folded_split_and_stop_words_dropped():
    assert words("The_Starter, and THE levain!") == ["starter", "levain"]
    composed, decomposed = "cr\u00e8me", "cre\u0300me"  # the same word, as macOS may store it
    assert words(composed) == words(decomposed) == ["crème"]
    hashing = HashEmbedder()
    assert hashing.embed_query("Rye BREAD") == hashing.embed_query("rye bread")


@pytest.mark.parametrize("text", ["", "   \n\t", "!?!", "the and of"])
def test_a_text_without_words_is_the_zero_vector(text):
    hashing = HashEmbedder()
    vector = hashing.embed_query(text)
    assert vector == [0.0] * hashing.dimension
    assert cosine(vector, hashing.embed_query("rye")) == 0.0


def test_repeating_a_word_counts_less_and_less():
    hashing = HashEmbedder()
    # With counts taken as they are, the ten 'rye's would drown out the 'wheat'.
    assert cosine(hashing.embed_query("rye " * 10 + "wheat"), hashing.embed_query("wheat")) > 0.2


def test_signs_are_balanced():
    signs = [slot(f"w:word{i}", 512)[1] for i in range(1000)]
    assert 400 < signs.count(1) < 600
    assert any(x < 0 for x in HashEmbedder().embed_query(SAMPLES[0]))


def test_queries_and_documents_are_embedded_alike():
    hashing = HashEmbedder()
    assert hashing.embed_query(SAMPLES[1]) == hashing.embed_documents([SAMPLES[1]])[0]
    assert hashing.embed_documents([]) == []


# ---- cosine and friends ------------------------------------------------------------


def test_dot_uses_sumprod_where_python_has_it():
    import vectors

    assert (vectors._sumprod is getattr(math, "sumprod", None)) == hasattr(math, "sumprod")
    a, b = [0.5, -1.0, 2.0], [4.0, 3.0, 0.25]
    assert dot(a, b) == pytest.approx(sum(x * y for x, y in zip(a, b)))


def test_dot_refuses_vectors_of_different_lengths():
    with pytest.raises(ValueError):
        dot([1.0, 2.0], [1.0])


def test_cosine():
    assert cosine([1.0, 2.0], [2.0, 4.0]) == pytest.approx(1.0)
    assert cosine([1.0, 0.0], [0.0, 3.0]) == 0.0
    assert cosine([1.0, 2.0], [-1.0, -2.0]) == pytest.approx(-1.0)
    assert cosine([0.0, 0.0], [1.0, 1.0]) == 0.0
    same = normalise([0.1, 0.7, 0.3])
    assert -1.0 <= cosine(same, same) <= 1.0


def test_normalise():
    assert normalise([3.0, 4.0]) == pytest.approx([0.6, 0.8])
    assert normalise([0.0, 0.0]) == [0.0, 0.0]
