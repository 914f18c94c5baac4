"""How well step 7's search finds the right note: `make eval`.

tests/eval_queries.json holds questions about the sample vault, each with the note
(or notes) that answers it, and a kind: "paraphrase" when the question avoids the
note's own distinctive words (the way people ask), "words" when it uses them. For
every embedder that is available ("hash" always; "ollama" only if Ollama answers
at OLLAMA_HOST and has the model), this builds step 7's index of a temporary copy
of the sample vault in a temporary folder, asks every question in every mode, and
prints a table:

    recall@5  the share of questions whose right note is among the first 5 results
    MRR@5     the mean of 1/rank of the first right note among the first 5 (0 if absent)

over all questions, then the paraphrases and the word questions on their own. It
is a measurement, not a test (pytest does not collect it); the floor it measured
is pinned by tests/test_search_quality.py.

    python3 tests/eval.py              the table (make eval)
    python3 tests/eval.py --sweep      also hybrid with other RRF_K and semantic weights
    python3 tests/eval.py --what-if    also: how fusion treats a strong embedder (see what_if)
"""
import argparse
import contextlib
import heapq
import io
import json
import logging
import shutil
import sys
import tempfile
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STEP = ROOT / "steps" / "07-vector-index"
SAMPLE_VAULT = ROOT / "steps" / "sample-vault"
QUERIES = Path(__file__).resolve().parent / "eval_queries.json"
sys.path.insert(0, str(STEP))  # the step's own modules, not a copy of them

import search  # noqa: E402
from embeddings import make_embedder  # noqa: E402
from keyword_index import tokenize  # noqa: E402
from ollama_client import OllamaError  # noqa: E402
from tools import SEARCH_VAULT  # noqa: E402
from vault import Vault  # noqa: E402
from vault_index import VaultIndex  # noqa: E402

K = 5  # results looked at per question
KINDS = ("paraphrase", "words")
DEFAULT_MODE = SEARCH_VAULT.input_schema["properties"]["mode"]["default"]  # what a model gets unasked
SWEEP_K = (1, 2, 5, 20, 60)
SWEEP_SEMANTIC = (0.5, 1.0, 2.0, 4.0, 8.0)  # the keyword weight stays 1
WHAT_IF_GOOD = (1, 2, 3, 4, 5)  # ranks a model gives a paraphrase's answer when it does well
WHAT_IF_LOW = (6, 7, 8, 9, 10)  # and a word question's answer when it misses it narrowly


@dataclass
class Query:
    text: str
    answers: frozenset  # note paths; a question may have two equally good answers
    kind: str


def load_queries(path: Path = QUERIES) -> list[Query]:
    queries = []
    for item in json.loads(path.read_text(encoding="utf-8")):
        answers = item["answer"] if isinstance(item["answer"], list) else [item["answer"]]
        if item["kind"] not in KINDS:
            raise ValueError(f"{item['query']!r}: kind must be one of {KINDS}")
        queries.append(Query(item["query"], frozenset(answers), item["kind"]))
    return queries


@contextlib.contextmanager
def sample_index(embedder):
    """A VaultIndex of a temporary copy of the sample vault, built in a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="vault-eval-") as scratch:
        vault_dir = Path(scratch) / "vault"
        shutil.copytree(SAMPLE_VAULT, vault_dir)
        index = VaultIndex(Vault(vault_dir), embedder, Path(scratch) / "index")
        with contextlib.redirect_stderr(io.StringIO()):  # the build's progress line
            index.open(rebuild=True)
        if index.index is None:
            raise RuntimeError(f"the index could not be built with {embedder.name}")
        missing = {a for q in load_queries() for a in q.answers} - set(index.index.note_paths())
        if missing:
            raise RuntimeError(f"eval_queries.json names notes the vault does not have: {sorted(missing)}")
        yield index


def rank_of_answer(index: VaultIndex, query: Query, mode: str) -> int | None:
    """The rank (1 = first) of the first right note among the first K results, or None."""
    hits = index.search(query.text, K, mode=mode)
    return next((rank for rank, hit in enumerate(hits, 1) if hit.path in query.answers), None)


def scores(ranks: list) -> tuple[float, float]:
    """(recall@K, MRR@K) of a list of ranks, None for a miss."""
    if not ranks:
        return 0.0, 0.0
    return sum(r is not None for r in ranks) / len(ranks), sum(1 / r for r in ranks if r) / len(ranks)


def evaluate(index: VaultIndex, queries: list[Query], mode: str) -> dict[str, tuple[float, float]]:
    """{"all" | "paraphrase" | "words": (recall@K, MRR@K)} of one mode."""
    ranks = [(query.kind, rank_of_answer(index, query, mode)) for query in queries]
    result = {"all": scores([rank for _, rank in ranks])}
    for kind in KINDS:
        result[kind] = scores([rank for k, rank in ranks if k == kind])
    return result


@contextlib.contextmanager
def fusion(embedder_name: str, k: float, semantic: float):
    """Hybrid search with RRF_K k and this semantic weight (keyword 1), for a while."""
    weights = search.hybrid_weights(embedder_name)
    saved = search.RRF_K, dict(weights)
    search.RRF_K = k
    weights.update(semantic=semantic, keyword=1.0)
    try:
        yield
    finally:
        search.RRF_K = saved[0]
        weights.clear()
        weights.update(saved[1])


def what_if(index: VaultIndex, queries: list[Query], kind: str, ranks, weights: dict, k: float) -> list:
    """How fusion would treat an embedder that understands questions, as a real model
    should, where no such model is at hand: [(r, rank after fusion)].

    For each question of `kind` and each r in `ranks`, the right note's best chunk is
    put at rank r of the semantic ranking, the other chunks in this embedder's order,
    and that ranking is fused with the real keyword ranking, as search would."""
    store, wanted = index.index, K * search.CHUNKS_PER_NOTE  # as many chunks as search first asks for
    found = []
    for query in (q for q in queries if q.kind == kind):
        vector = index.embedder.embed_query(query.text)
        order = [row for _, row in store.nearest(vector, len(store), exact=True)]
        right = next(row for row in order if store.chunks[row].path in query.answers)
        others = [row for row in order if store.chunks[row].path not in query.answers]
        scores = store.keywords().scores(list(dict.fromkeys(tokenize(query.text))))
        keyword = [row for row, _ in heapq.nlargest(wanted, scores.items(), key=itemgetter(1))]
        for r in ranks:
            semantic = others[: r - 1] + [right] + others[r - 1 : wanted - 1]
            fused = search.reciprocal_rank_fusion({"semantic": semantic, "keyword": keyword}, weights, k)
            ranked = sorted(fused.items(), key=lambda item: (-item[1], store.chunks[item[0]].id))
            notes = [store.chunks[row].path for row, _ in search.best_chunk_per_note(store, ranked)]
            found.append((r, next(i for i, path in enumerate(notes, 1) if path in query.answers)))
    return found


def print_what_if(index: VaultIndex, queries: list[Query]) -> None:
    """The harm fusion does to a model's good rankings of paraphrases, and the help
    the words give it where it ranks a word question's answer just too low."""
    print(f"\n{index.embedder.name}, if a model ranked the right note (see what_if in tests/eval.py):")
    print(f"{'':<34}{f'paraphrases put at {WHAT_IF_GOOD[0]}-{WHAT_IF_GOOD[-1]}':<34}"
          f"word questions put at {WHAT_IF_LOW[0]}-{WHAT_IF_LOW[-1]}")
    print(f"{'':<34}{f'fusion ranks lower / out of top {K}':<34}fusion brings into the top {K}")
    for k in (search.RRF_K, 60):
        for semantic in (1.0, 2.0, 4.0, 8.0):
            weights = {"semantic": semantic, "keyword": 1.0}
            good = what_if(index, queries, "paraphrase", WHAT_IF_GOOD, weights, k)
            low = what_if(index, queries, "words", WHAT_IF_LOW, weights, k)
            lower, out = sum(rank > r for r, rank in good), sum(rank > K for _, rank in good)
            into = sum(rank <= K for _, rank in low)
            print(f"  {f'RRF_K {k:<2} semantic {semantic:g} : keyword 1':<32}"
                  f"{f'{lower:>3} / {out:>3} of {len(good)}':<34}{into:>3} of {len(low)}")


def available_embedders():
    """(label, embedder or None, why it was skipped) for hash, then ollama."""
    hashing, _ = make_embedder("hash")
    yield "hash", hashing, None
    try:
        ollama, _ = make_embedder("ollama", probe_timeout=2.0)
    except OllamaError as error:  # not running, or running without the model
        where = error.problem.removeprefix("Ollama is not answering at ")
        yield "ollama", None, f"skipped: Ollama not answering at {where}" if where != error.problem \
            else f"skipped: {error.problem}"
    else:
        yield "ollama", ollama, None


def table_header(queries: list[Query]) -> list[str]:
    counts = {kind: sum(q.kind == kind for q in queries) for kind in KINDS}
    groups = [f"all ({len(queries)})"] + [f"{kind} ({counts[kind]})" for kind in KINDS]
    return [
        f"{'embedder':<24} {'mode':<10}" + "".join(f"  {group:<15}" for group in groups),
        f"{'':<24} {'':<10}" + "  recall@5 MRR@5 " * len(groups),
    ]


def table_row(embedder: str, mode: str, result: dict) -> str:
    cells = "".join(f"  {result[group][0]:>8.2f} {result[group][1]:>5.2f} " for group in ("all", *KINDS))
    return f"{embedder:<24} {mode:<10}{cells}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweep", action="store_true", help="also hybrid with other RRF_K and semantic weights")
    parser.add_argument("--what-if", action="store_true", help="also how fusion treats a strong embedder")
    args = parser.parse_args(argv)
    logging.disable(logging.INFO)  # the index's own log lines
    queries = load_queries()
    print(f"{len(queries)} questions on the sample vault; the right note among the first {K} results.")
    print(f"* marks the default mode ({DEFAULT_MODE}). Hybrid: RRF_K {search.RRF_K}, weights by embedder "
          f"{search.WEIGHTS}\n")
    print("\n".join(table_header(queries)))
    for label, embedder, skipped in available_embedders():
        if embedder is None:
            print(f"{label:<24} {skipped}")
            continue
        with sample_index(embedder) as index:
            for mode in search.MODES:
                shown = mode + (" *" if mode == DEFAULT_MODE else "")
                print(table_row(embedder.name, shown, evaluate(index, queries, mode)))
            if args.sweep:
                for k in SWEEP_K:
                    for semantic in SWEEP_SEMANTIC:
                        with fusion(embedder.name, k, semantic):
                            result = evaluate(index, queries, "hybrid")
                        print(table_row(embedder.name, f"k={k} s={semantic:g}", result))
            if args.what_if:
                print_what_if(index, queries)
    return 0


if __name__ == "__main__":
    sys.exit(main())
