"""Search: vector similarity and BM25, fused, one result per note, each with a snippet.

    search(index, embedder, "how often to feed a starter", limit=5, tag="bread")

Three modes. "semantic" ranks chunks by cosine similarity to the query's vector
(index.nearest); "keyword" ranks them by BM25 (keyword_index.py); "hybrid", the
default, ranks both ways and fuses the two rankings by weighted reciprocal-rank
fusion: a chunk scores sum(weight / (RRF_K + rank)) over the rankings it is in.
Ranks, not raw scores, because a cosine and a BM25 score are on unrelated scales.
The weights depend on the embedder that made the index: with the offline one,
whose vectors know words but not meaning, the words count most; a real model's
ranking counts more than the words', and a section's note adds its own evidence.

A note has many chunks, and a model wants notes, so search asks for more chunks
than it needs, keeps the best chunk of each note, and asks again for more if too
few notes came back.
"""
import heapq
from dataclasses import dataclass
from operator import itemgetter

from keyword_index import matches, tokenize

MODES = ("hybrid", "semantic", "keyword")  # the first is the default
# Chosen with `make eval` (tests/eval.py) on two vaults no one here wrote, with
# labelled questions: Foam's documentation (86 notes, 50 questions) and the Rust book
# (112 chapters, 72), offline and with all-MiniLM-L6-v2 behind Ollama's API. The rule:
# hybrid must never find less than the better of its parts (within one question).
#
# RRF_K 4: with 1, a chunk one ranking puts first beats one both rankings put second;
# with 60, being in both lists decides whatever either put first. Between them, 4
# took the model's hybrid on Foam from 0.90 (at 5) to 0.92 and the static table's
# from 0.68 to 0.72 (the Rust book 0.92 and 0.75, one question less offline); 3 cost
# the hashing embedder two questions.
#
# The offline embedder's vectors find the right note for 0.38 and 0.32 of the
# questions, BM25 for 0.56 and 0.71: at equal weights the vectors pulled hybrid to
# 0.58 and 0.62; at half weight it stays within a question of BM25 (0.56, 0.69).
# A model's vectors find 0.88 and 0.83: at 2 to 1 the words add what they find
# (0.88, 0.89); at 4 or 8 to 1 they add nothing, at 1 to 1 they cost paraphrases.
# "note": see with_note_evidence. With the model, 0.25 took hybrid to 0.90 and 0.92
# (0.5: 0.90 and 0.89); offline, Foam to 0.58.
# A score-based fusion (each ranking's scores scaled to 0-1, then added) measured
# no better than ranks (offline: 0.54 and 0.71 at best), so ranks stay.
# The static table (chapter 6) finds 0.66 and 0.62 alone: at 1 to 1 with note 0.5
# hybrid found 0.68 and 0.76 at RRF_K 5; at 2 to 1, 0.72 and 0.64; note 0.25 cost Foam 0.04.
# Measured and dropped (within a question or worse, on one vault or both): fusing the
# notes' ranks instead of the chunks', a note share on the BM25 side, the query's
# vector moved toward its top hits', other field weights, BM25's k1 and b.
# region weights
RRF_K = 4
WEIGHTS = {  # by the kind of embedder that made the index; chosen with make eval, see above
    "hash": {"semantic": 0.5, "keyword": 1.0, "note": 0.25},  # the offline hashing embedder
    "static": {"semantic": 1.0, "keyword": 1.0, "note": 0.5},  # the offline static table of chapter 6
    "model": {"semantic": 2.0, "keyword": 1.0, "note": 0.25},  # a real embedding model: Ollama's
}
# endregion weights


def embedder_kind(embedder_name: str) -> str:
    """The key of WEIGHTS for an index made by this embedder ("hash-512",
    "static-minilm-256-...", "ollama/nomic-embed-text")."""
    kind = embedder_name.partition("-")[0]
    return kind if kind in ("hash", "static") else "model"


def hybrid_weights(embedder_name: str) -> dict[str, float]:
    return WEIGHTS[embedder_kind(embedder_name)]


CHUNKS_PER_NOTE = 4  # first guess at how many chunks to fetch per note wanted
SNIPPET_LENGTH = 200  # characters


@dataclass
class Hit:
    path: str
    heading_path: list[str]
    score: float  # hybrid: fused rank score; semantic: cosine, with the note's (see with_note_evidence); keyword: BM25
    snippet: str
    semantic: float | None = None  # the chunk's cosine similarity, when it was among the semantic results
    keyword: float | None = None  # its BM25 score, when it was among the keyword results


# region search
def search(index, embedder, query: str, limit: int = 5, folder: str | None = None,
           tag: str | None = None, mode: str = "hybrid") -> list[Hit]:
    """The `limit` notes that best match `query`, each as its best chunk, best first.

    folder: only notes in that folder or below it. tag: only chunks with that tag or
    a tag nested under it ("bread" matches "bread/sourdough"). `embedder` may be None
    in keyword mode."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    if limit < 1:
        return []
    terms = list(dict.fromkeys(tokenize(query)))  # each term once, in order
    query_vector = embedder.embed_query(query) if mode != "keyword" else None
    with index.lock:  # no update may reuse a row between ranking and reading it
        rows = index.rows_matching(folder, tag)
        wanted = limit * CHUNKS_PER_NOTE
        while True:
            ranked, exhausted = rank_chunks(index, query_vector, terms, wanted, rows, mode)
            best = best_chunk_per_note(index, ranked)
            if len(best) >= limit or exhausted:
                break
            wanted *= 4  # many chunks came from the same few notes: look further down
        best = best[:limit]
        texts = index.texts_to_show([row for row, _ in best])  # the index may keep them on disk
        return [make_hit(index.chunks[row], texts[row], score, terms, mode) for row, score in best]
# endregion search


# region rank-chunks
def rank_chunks(index, query_vector, terms, wanted: int, rows, mode: str):
    """Up to `wanted` chunks as [(row, (score, cosine, bm25))], best first, and
    whether that is all there is to find."""
    semantic, keyword, cosines = {}, {}, {}
    weights = hybrid_weights(index.embedder_name)
    if mode != "keyword":
        cosines = {row: cosine for cosine, row in index.nearest(query_vector, wanted, rows)}
        semantic = with_note_evidence(index, cosines, weights["note"])
    if mode != "semantic" and terms:
        scores = index.keywords().scores(terms, rows)
        keyword = dict(heapq.nlargest(wanted, scores.items(), key=itemgetter(1)))
    exhausted = len(cosines) < wanted and len(keyword) < wanted
    if mode == "semantic":
        fused = semantic
    elif mode == "keyword":
        fused = keyword
    else:
        rankings = {"semantic": list(semantic), "keyword": list(keyword)}
        fused = reciprocal_rank_fusion(rankings, weights, RRF_K)
    # Ties go by chunk id, so the order does not depend on where chunks sit in memory.
    ranked = sorted(fused.items(), key=lambda item: (-item[1], index.chunks[item[0]].id))
    return [(row, (score, cosines.get(row), keyword.get(row))) for row, score in ranked], exhausted
# endregion rank-chunks


# region note-evidence
def with_note_evidence(index, cosines: dict, weight: float) -> dict:
    """{row: its cosine plus `weight` times its note's share of the nearest}, best first.

    A note's share is the sum of its chunks' cosines among those found, divided by
    all its chunks: a note about the question has most of its sections near it; a
    FAQ or a changelog has one, and many far away. With the note's evidence added,
    the note about the question wins, even when its best section is a generic one.
    It costs nothing: the cosines are those nearest already computed."""
    if not weight:
        return cosines
    near: dict[str, float] = {}
    for row, cosine in cosines.items():
        path = index.chunks[row].path
        near[path] = near.get(path, 0.0) + cosine
    share = {path: total / len(index.rows_by_note[path]) for path, total in near.items()}
    scored = {row: cosine + weight * share[index.chunks[row].path] for row, cosine in cosines.items()}
    return dict(sorted(scored.items(), key=lambda item: (-item[1], index.chunks[item[0]].id)))
# endregion note-evidence


# region fusion
def reciprocal_rank_fusion(rankings: dict[str, list], weights: dict[str, float], k: int = RRF_K) -> dict:
    """Fuse rankings (lists of items, best first) into {item: score}, higher is better."""
    fused: dict = {}
    for name, ranking in rankings.items():
        for rank, item in enumerate(ranking, 1):
            fused[item] = fused.get(item, 0.0) + weights[name] / (k + rank)
    return fused
# endregion fusion


def best_chunk_per_note(index, ranked) -> list:
    """The first (best) chunk of each note in `ranked`, in order."""
    seen, best = set(), []
    for row, scores in ranked:
        path = index.chunks[row].path
        if path not in seen:
            seen.add(path)
            best.append((row, scores))
    return best


def make_hit(chunk, text: str, scores, terms, mode: str) -> Hit:
    score, cosine, bm25 = scores
    words = terms if mode != "semantic" else ()
    return Hit(chunk.path, chunk.heading_path, round(score, 6), snippet(text, words), cosine, bm25)


def snippet(text: str, terms, length: int = SNIPPET_LENGTH) -> str:
    """About `length` characters of text: around the most query terms close
    together, or from the start when none occur."""
    start = 0
    found = matches(text, set(terms))[:100]  # enough to choose from, and the choice below is quadratic
    if found:

        def terms_in_window_from(match) -> int:
            return len({term for begin, _, term in found if match[0] <= begin < match[0] + length})

        best = max(found, key=terms_in_window_from)  # the first such place, if several tie
        start = max(0, best[0] - length // 5)  # a little context before the first matched word
        while start > 0 and not text[start - 1].isspace():  # do not start inside a word
            start -= 1
    end = min(len(text), start + length)
    while end < len(text) and not text[end].isspace():  # nor end inside one
        end += 1
    piece = " ".join(text[start:end].split())
    return ("…" if start > 0 else "") + piece + ("…" if end < len(text) else "")
