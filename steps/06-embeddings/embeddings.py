"""Choosing an embedder, and a small demo of what embeddings do.

    make_embedder("auto")   Ollama if it answers and has the model, else the static table
    make_embedder("ollama") Ollama, or an OllamaError that says what to do
    make_embedder("static") the offline table distilled from a model (static_embedder.py)
    make_embedder("hash")   the offline hashing embedder, always: words only, no meaning

All three embedders are an Embedder (below): what the index asks of one. make_embedder
also returns one line for the server to print at startup, so the reader always knows
which embedder is in use, and why.

The demo embeds a few sentences and ranks them by cosine similarity:

    python3 steps/06-embeddings/embeddings.py                    the default sentences
    python3 steps/06-embeddings/embeddings.py "a text" "another"  your own
    python3 steps/06-embeddings/embeddings.py --query "why is my bread dense"
"""
import argparse
import sys
from typing import Protocol

from hash_embedder import DEFAULT_DIMENSION, HashEmbedder
from ollama_client import DEFAULT_MODEL, OllamaEmbedder, OllamaError
from static_embedder import StaticEmbedder, TableMissing
from vectors import cosine



# region embedder
class Embedder(Protocol):
    """What the index asks of an embedder. OllamaEmbedder, StaticEmbedder and
    HashEmbedder each have it; nothing inherits from this class, it only names the shape."""

    name: str  # recorded with the index: vectors of two embedders are not comparable
    dimension: int | None  # None until Ollama's first answer tells it

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, for what is stored."""

    def embed_query(self, text: str) -> list[float]:
        """The vector of a search, which some models embed differently from a document."""
# endregion embedder


KINDS = ("auto", "ollama", "static", "hash")
APPROXIMATE = "semantic search is approximate"


# region make-embedder
def make_embedder(
    kind: str = "auto",
    *,
    host: str | None = None,  # None reads OLLAMA_HOST
    model: str = DEFAULT_MODEL,
    dimension: int = DEFAULT_DIMENSION,  # of the hashing embedder
    probe_timeout: float = 2.0,  # seconds for auto's one look at Ollama
    **ollama_options,  # batch_size, timeout, attempts, backoff: see OllamaEmbedder
) -> tuple[Embedder, str]:
    """The embedder for kind, and one line for startup that says which it is and why."""
    if kind not in KINDS:
        raise ValueError(f"unknown embedder {kind!r}: choose one of {', '.join(KINDS)}")
    if kind == "hash":
        hashing = HashEmbedder(dimension)
        return hashing, f"embeddings: offline hashing ({hashing.name}), as configured; {APPROXIMATE}."
    if kind == "static":
        table = StaticEmbedder()
        return table, f"embeddings: offline static table ({table.name}), as configured; {APPROXIMATE}."
    try:
        ollama = OllamaEmbedder(host, model, **ollama_options)
        # The look costs one small request, and turns a missing Ollama or model
        # into a clear line now rather than a failed search later.
        ollama.check(probe_timeout)
    except OllamaError as error:
        if kind == "ollama":
            raise
        table = StaticEmbedder()
        return table, (
            f"embeddings: offline static table ({table.name}), because {error.problem}; {APPROXIMATE}. "
            f"For real embeddings: {error.fix}, then restart."
        )
    return ollama, f"embeddings: Ollama, model {ollama.model} at {ollama.url}."
# endregion make-embedder


DEFAULT_SENTENCES = [
    "Feed the sourdough starter equal weights of flour and water.",
    "My starter doubled overnight after a feed of rye flour.",
    "The levain is ripe when it is domed, bubbly and smells sour.",
    "Bulk fermentation ends when the dough has risen by half.",
    "Massage the salt into the shredded cabbage until it gives up its brine.",
    "Sauerkraut ferments for weeks with the cabbage kept under its brine.",
    "Kombucha is sweet tea fermented by a culture of yeast and bacteria.",
]


def rank(query: list[float], vectors: list[list[float]], texts: list[str]) -> list[tuple[float, str]]:
    """Every text with its cosine similarity to query, the most similar first."""
    scored = [(cosine(query, vector), text) for vector, text in zip(vectors, texts)]
    return sorted(scored, key=lambda pair: pair[0], reverse=True)


def show_rankings(embedder, texts: list[str], query: str | None) -> None:
    vectors = embedder.embed_documents(texts)
    if query is not None:
        print(f"\nquery: {query}")
        for score, text in rank(embedder.embed_query(query), vectors, texts):
            print(f"  {score:6.3f}  {text}")
        return
    for index, text in enumerate(texts):
        others = [i for i in range(len(texts)) if i != index]
        print(f"\n{text}")
        ranked = rank(vectors[index], [vectors[i] for i in others], [texts[i] for i in others])
        for score, other in ranked:
            print(f"  {score:6.3f}  {other}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Embed sentences and rank them by cosine similarity.")
    parser.add_argument("sentences", nargs="*", help="texts to compare (default: some on bread and ferments)")
    parser.add_argument("--query", help="rank the sentences against this search query instead")
    parser.add_argument("--embedder", choices=KINDS, default="auto", help="default: auto")
    parser.add_argument("--model", default=DEFAULT_MODEL, help=f"Ollama model (default: {DEFAULT_MODEL})")
    args = parser.parse_args(argv)
    texts = args.sentences or DEFAULT_SENTENCES
    if len(texts) < 2 and args.query is None:
        parser.error("give at least two sentences to compare, or a --query")
    try:
        embedder, line = make_embedder(args.embedder, model=args.model)
        print(line)
        show_rankings(embedder, texts, args.query)
    except (OllamaError, TableMissing) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
