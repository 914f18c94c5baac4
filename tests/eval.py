"""How well the finished server's search finds the right note: `make eval`.

A query file is a JSON list of labelled questions, the format of the corpora this
project was tuned on:

    {"q": "a question as a person asks it", "targets": ["Folder/Note.md"], "kind": "paraphrase"}

`targets` are the notes that answer it (any one counts), `kind` says what sort of
question it is: "paraphrase" when it avoids the note's own distinctive words, the
way people ask; other kinds ("words", "keyword", "section") are reported the same
way. tests/eval_queries.json holds 42 questions about the sample vault, the default.

For every embedder that is available ("hash" and "static" always; "ollama" only if an Ollama
answers at OLLAMA_HOST and has the model), this builds step 10's index of a
temporary copy of the vault in a temporary folder, asks every question in every
mode, and prints, over all questions and then per kind:

    recall@5  the share of questions whose right note is among the first 5 results
    MRR@10    the mean of 1/rank of the first right note among the first 10 (0 if absent)

A real model embeds a large vault slowly, so its vectors are kept between runs in
a file of the system's temporary folder (vault-eval-cache/), keyed by the text: a
changed chunk is embedded again, an unchanged one is not. It is a measurement, not
a test (pytest does not collect it); tests/test_search_quality.py pins a floor.

    python3 tests/eval.py                                    the sample vault (make eval)
    python3 tests/eval.py --vault DIR --queries FILE.json    any vault (make eval VAULT=... QUERIES=...)
    python3 tests/eval.py --sweep                            also hybrid with other RRF_K and weights
"""
import argparse
import contextlib
import hashlib
import io
import json
import logging
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STEP = ROOT / "steps" / "10-reconcile-and-ship"
SAMPLE_VAULT = ROOT / "steps" / "sample-vault"
QUERIES = Path(__file__).resolve().parent / "eval_queries.json"
CACHE = Path(tempfile.gettempdir()) / "vault-eval-cache"
sys.path.insert(0, str(STEP))  # the step's own modules, not a copy of them

import search  # noqa: E402
from embeddings import make_embedder  # noqa: E402
from ollama_client import OllamaError  # noqa: E402
from tools import SEARCH_VAULT  # noqa: E402
from vault import Vault  # noqa: E402
from vault_index import VaultIndex  # noqa: E402

RECALL_AT = 5  # a question is found when its note is among this many results
MRR_AT = 10
DEFAULT_MODE = SEARCH_VAULT.input_schema["properties"]["mode"]["default"]  # what a model gets unasked
SWEEP_K = (1, 5, 20, 60)
SWEEP_SEMANTIC = (0.5, 1.0, 2.0, 4.0, 8.0)  # the keyword weight stays 1


@dataclass
class Query:
    text: str
    answers: frozenset  # note paths; any one of them is a right answer
    kind: str


def load_queries(path: Path = QUERIES) -> list[Query]:
    return [Query(item["q"], frozenset(item["targets"]), item["kind"])
            for item in json.loads(Path(path).read_text(encoding="utf-8"))]


class CachedEmbedder:
    """An embedder that remembers every vector it was given, in a file, between runs."""

    def __init__(self, embedder):
        self.embedder, self.name = embedder, embedder.name
        key = hashlib.sha256(embedder.name.encode()).hexdigest()[:16]
        self.file = CACHE / f"{key}.json"
        self.vectors = json.loads(self.file.read_text()) if self.file.exists() else {}
        self.dimension = embedder.dimension or next((len(v) for v in self.vectors.values()), None)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._embed(texts, "d", self.embedder.embed_documents)

    def embed_query(self, text: str) -> list[float]:
        return self._embed([text], "q", lambda texts: [self.embedder.embed_query(texts[0])])[0]

    def _embed(self, texts, role: str, embed) -> list[list[float]]:
        keys = [role + hashlib.sha256(text.encode()).hexdigest() for text in texts]
        missing = [text for key, text in zip(keys, texts) if key not in self.vectors]
        if missing:
            for key, vector in zip([k for k in keys if k not in self.vectors], embed(missing)):
                self.vectors[key] = vector
            self.dimension = self.embedder.dimension
        return [self.vectors[key] for key in keys]

    def save(self) -> None:
        CACHE.mkdir(exist_ok=True)
        temporary = self.file.with_suffix(".tmp")
        temporary.write_text(json.dumps(self.vectors))
        temporary.replace(self.file)


@contextlib.contextmanager
def vault_index(embedder, vault: Path = SAMPLE_VAULT, queries: list[Query] = ()):
    """A VaultIndex of a temporary copy of `vault`, built in a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="vault-eval-") as scratch:
        vault_dir = Path(scratch) / "vault"
        shutil.copytree(vault, vault_dir)
        index = VaultIndex(Vault(vault_dir), embedder, Path(scratch) / "index")
        with contextlib.redirect_stderr(io.StringIO()):  # the build's progress line
            index.open(rebuild=True)
        if index.chunk_index is None:
            raise RuntimeError(f"the index could not be built with {embedder.name}")
        missing = {a for q in queries for a in q.answers} - set(index.chunk_index.note_paths())
        if missing:
            raise RuntimeError(f"the questions name notes the vault does not have: {sorted(missing)}")
        yield index


def sample_index(embedder):
    return vault_index(embedder, SAMPLE_VAULT, load_queries())


def rank_of_answer(index: VaultIndex, query: Query, mode: str, depth: int = RECALL_AT) -> int | None:
    """The rank (1 = first) of the first right note among the first `depth` results, or None."""
    hits = index.search(query.text, depth, mode=mode)
    return next((rank for rank, hit in enumerate(hits, 1) if hit.path in query.answers), None)


def scores(ranks: list) -> tuple[float, float]:
    """(recall@5, MRR@10) of [(kind, rank among 5, rank among 10)], a rank None for a miss."""
    if not ranks:
        return 0.0, 0.0
    return (sum(top5 is not None for _, top5, _ in ranks) / len(ranks),
            sum(1 / top10 for _, _, top10 in ranks if top10) / len(ranks))


def evaluate(index: VaultIndex, queries: list[Query], mode: str) -> dict[str, tuple[float, float]]:
    """{"all" or a kind: (recall@5, MRR@10)} of one mode."""
    # Two searches: the first 5 of a search for 10 may differ a little from a search for 5.
    ranks = [(q.kind, rank_of_answer(index, q, mode), rank_of_answer(index, q, mode, MRR_AT)) for q in queries]
    result = {"all": scores(ranks)}
    for kind in kinds(queries):
        result[kind] = scores([rank for rank in ranks if rank[0] == kind])
    return result


def kinds(queries: list[Query]) -> list[str]:
    return sorted({query.kind for query in queries})


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


def available_embedders():
    """(label, embedder or None, why it was skipped) for hash, static, then ollama."""
    hashing, _ = make_embedder("hash")
    yield "hash", hashing, None
    table, _ = make_embedder("static")  # the offline default
    yield "static", table, None
    try:
        ollama, _ = make_embedder("ollama", probe_timeout=2.0)
    except OllamaError as error:  # not running, or running without the model
        where = error.problem.removeprefix("Ollama is not answering at ")
        yield "ollama", None, f"skipped: Ollama not answering at {where}" if where != error.problem \
            else f"skipped: {error.problem}"
    else:
        yield "ollama", CachedEmbedder(ollama), None


def table_header(queries: list[Query]) -> list[str]:
    groups = [f"all ({len(queries)})"] + [f"{kind} ({sum(q.kind == kind for q in queries)})" for kind in kinds(queries)]
    return [
        f"{'embedder':<24} {'mode':<10}" + "".join(f"  {group:<16}" for group in groups),
        f"{'':<24} {'':<10}" + "  recall@5 MRR@10 " * len(groups),
    ]


def table_row(embedder: str, mode: str, result: dict) -> str:
    cells = "".join(f"  {result[group][0]:>8.2f} {result[group][1]:>6.2f} " for group in result)
    return f"{embedder:<24} {mode:<10}{cells}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vault", type=Path, default=SAMPLE_VAULT, help="the vault (default: the sample vault)")
    parser.add_argument("--queries", type=Path, help="its labelled questions (needed with --vault)")
    parser.add_argument("--sweep", action="store_true", help="also hybrid with other RRF_K and semantic weights")
    args = parser.parse_args(argv)
    if args.queries is None and args.vault != SAMPLE_VAULT:
        parser.error("--vault needs --queries: the questions about that vault, with their answers")
    logging.disable(logging.INFO)  # the index's own log lines
    queries = load_queries(args.queries or QUERIES)
    print(f"{len(queries)} questions on {args.vault}; recall@{RECALL_AT}: the right note among the first "
          f"{RECALL_AT} results; MRR@{MRR_AT}: 1/its rank among the first {MRR_AT}.")
    print(f"* marks the default mode ({DEFAULT_MODE}). Hybrid: RRF_K {search.RRF_K}, weights by embedder "
          f"{search.WEIGHTS}\n")
    print("\n".join(table_header(queries)))
    for label, embedder, skipped in available_embedders():
        if embedder is None:
            print(f"{label:<24} {skipped}")
            continue
        with vault_index(embedder, args.vault, queries) as index:
            if isinstance(embedder, CachedEmbedder):
                embedder.save()
            for mode in search.MODES:
                shown = mode + (" *" if mode == DEFAULT_MODE else "")
                print(table_row(embedder.name, shown, evaluate(index, queries, mode)), flush=True)
            if args.sweep:
                for k in SWEEP_K:
                    for semantic in SWEEP_SEMANTIC:
                        with fusion(embedder.name, k, semantic):
                            result = evaluate(index, queries, "hybrid")
                        print(table_row(embedder.name, f"k={k} s={semantic:g}", result), flush=True)
            if isinstance(embedder, CachedEmbedder):
                embedder.save()  # the questions' vectors too
    return 0


if __name__ == "__main__":
    sys.exit(main())
