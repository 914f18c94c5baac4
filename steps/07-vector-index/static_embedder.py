"""An offline embedder that knows some meaning: a table of token vectors
distilled from a real sentence-embedding model (all-MiniLM-L6-v2), and a sum.

Every token of the model's vocabulary was run through the model alone, and its
sentence vector kept; the vectors were shortened with PCA, weighted by how rare
the token is, and rounded to one signed byte a number. steps/data/ holds the
table, how it was made (README.md, distill.py) and the model's licence. A text's
vector is then the sum of its tokens' rows, scaled to length 1: a weighted mean,
since each row carries its weight. No model runs here, no network, no
dependency: the table and wordpiece.py, which cuts text into the model's tokens.

It knows that 'starter' and 'levain' are neighbours, because the model put them
near each other. It does not know word order or context: 'dog bites man' and
'man bites dog' are the same sum, and 'not ripe' is 'ripe' plus a little 'not'.

Summing hundreds of rows of 256 numbers in a Python loop would be slow, so each
row is packed into one big int (see PackedRows), and a text's sum is one int
addition per token, unpacked once at the end.
"""
import hashlib
import sys
from array import array
from pathlib import Path

from vectors import normalise
from wordpiece import WordPiece

# The shared data folder beside the step folders: steps/data/.
DATA_DIR = Path(__file__).resolve().parent.parent / "data"
VOCABULARY = "minilm-vocab.txt"
TABLE = "minilm-static.bin"
LANE = array("I").itemsize  # bytes per number in a packed row: 4 on every common platform
OFFSET = 128  # a signed byte plus 128 is 0..255, never negative, so lanes never borrow
TO_UNSIGNED = bytes(b ^ 0x80 for b in range(256))  # the byte of -128..127 as 0..255


class TableMissing(Exception):
    """The table is not where the embedder looks for it."""


def read_shared(path: Path) -> bytes:
    """A file of the shared data folder, read by this module's own loader: from the
    disk in the repository or an unpacked bundle, and from inside the zip when the
    server runs as one .pyz file, where open() cannot reach."""
    return __loader__.get_data(str(path))


class PackedRows(dict):
    """Token id -> its row of the table as one int, packed when first asked for."""

    def __init__(self, rows: bytes, dimension: int):
        super().__init__()
        self.rows, self.dimension = rows, dimension

    # region packed-row
    def __missing__(self, token: int) -> int:
        """The token's row as one int: each number plus OFFSET in a lane of LANE
        bytes. A lane holds up to 2**32 - 1, so sixteen million rows add up
        without spilling into the next lane, and adding two ints adds every lane."""
        start = token * self.dimension
        unsigned = self.rows[start : start + self.dimension].translate(TO_UNSIGNED)
        lanes = array("I", list(unsigned))  # a list: array("I", bytes) would read 4 bytes as one lane
        self[token] = packed = int.from_bytes(lanes.tobytes(), sys.byteorder)
        return packed
    # endregion packed-row


class StaticEmbedder:
    """The offline table: an Embedder (embeddings.py), like OllamaEmbedder and HashEmbedder."""

    # region load-table
    def __init__(self, data_dir: Path = DATA_DIR):
        try:
            tokens = read_shared(data_dir / VOCABULARY).decode("utf-8").splitlines()
            rows = read_shared(data_dir / TABLE)
        except OSError as error:
            raise TableMissing(f"no embedding table at {error.filename or data_dir}: steps/data/ comes with the repository") from None
        self.dimension, leftover = divmod(len(rows), len(tokens))
        if leftover or not self.dimension:
            raise TableMissing(f"{data_dir / TABLE} does not hold one row for each of {len(tokens)} tokens")
        self.tokenizer = WordPiece(tokens)
        self.packed = PackedRows(rows, self.dimension)
        # The name records which table made an index: another table, another name, a rebuild.
        self.name = f"static-minilm-{self.dimension}-{hashlib.blake2b(rows, digest_size=4).hexdigest()}"
    # endregion load-table

    # region embed
    def embed(self, text: str) -> list[float]:
        """The sum of the text's token rows, scaled to length 1."""
        tokens = self.tokenizer.encode(text)
        total = sum(map(self.packed.__getitem__, tokens))  # one int addition a token
        lanes = array("I", total.to_bytes(LANE * self.dimension, sys.byteorder))
        bias = OFFSET * len(tokens)  # each lane holds its sum plus OFFSET once per token
        return normalise([lane - bias for lane in lanes])
    # endregion embed

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.embed(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.embed(text)
