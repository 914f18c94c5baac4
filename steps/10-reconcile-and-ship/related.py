"""What else belongs with a note: its link neighbourhood and its nearest notes by meaning.

related_notes merges two signals, and says for each note why it is there.

Scoring, simple on purpose: each reason adds its weight to the note's score.
- "links to it" (the other note links here) 1.0, and "linked from it" (this note links
  there) 1.0: a link in both directions is the strongest bond, 2.0.
- "two links away, through X" 0.5: a neighbour of a neighbour, in either direction,
  counted once, and only for notes with no direct link. A hub (a note linked with more
  than HUB_SIZE others: a home page, an index) is not walked through: everything is
  two links away through it, so it says nothing.
- "similar content (0.83)": the cosine, between 0 and 1, of the note's centre (the
  average of its chunk vectors, so the whole note is compared, in one search) and the
  best-matching chunk of the other note. Below MIN_SIMILARITY it is noise, not a reason.
So a note that is linked and also similar comes first; then linked ones; then a
strongly similar note ahead of a mere neighbour's neighbour. Ties go alphabetically.
Without a search index (still building, or none) the links alone answer.
"""
from dataclasses import dataclass, field

from links import LinkGraph

LINK_WEIGHT = 1.0
TWO_LINKS_WEIGHT = 0.5
MIN_SIMILARITY = 0.2
HUB_SIZE = 15
SIMILAR_POOL = 30


@dataclass
class Related:
    path: str
    score: float = 0.0
    reasons: list[str] = field(default_factory=list)

    def add(self, weight: float, reason: str) -> None:
        self.score += weight
        self.reasons.append(reason)


# region related
def related_notes(graph: LinkGraph, vault_index, path: str, limit: int = 10) -> list[Related]:
    """Up to `limit` notes related to `path`, best first, each with its reasons."""
    found: dict[str, Related] = {}

    def add(other: str, weight: float, reason: str) -> None:
        found.setdefault(other, Related(other)).add(weight, reason)

    links_out, links_in = graph.neighbours(path)  # raises NoteNotFound for an unknown note
    for other in sorted(links_in):
        add(other, LINK_WEIGHT, "links to it")
    for other in sorted(links_out):
        add(other, LINK_WEIGHT, "linked from it")
    for other, through in two_links_away(graph, path, links_out | links_in).items():
        add(other, TWO_LINKS_WEIGHT, f"two links away, through {through}")
    # Similarity is looked up for more notes than asked for, so that a linked note's
    # score, and with it the order, does not depend on the limit.
    for other, cosine in similar_notes(vault_index, path, max(limit, SIMILAR_POOL)):
        add(other, cosine, f"similar content ({cosine:.2f})")
    ranked = sorted(found.values(), key=lambda related: (-related.score, related.path))
    return ranked[:limit]
# endregion related


# region two-links-away
def two_links_away(graph: LinkGraph, path: str, direct: set[str]) -> dict[str, str]:
    """The neighbours of the note's neighbours that are not direct neighbours, each with
    the first neighbour (alphabetically) that leads there."""
    found = {}
    for through in sorted(direct):
        links_out, links_in = graph.neighbours(through)
        if len(links_out | links_in) > HUB_SIZE:
            continue
        for other in sorted((links_out | links_in) - direct - {path}):
            found.setdefault(other, through)
    return found
# endregion two-links-away


# region similar-notes
def similar_notes(vault_index, path: str, count: int) -> list[tuple[str, float]]:
    """The notes nearest to this one by embedding, (path, cosine), best first, itself excluded."""
    index = getattr(vault_index, "chunk_index", None)  # None while the first build runs
    if index is None:
        return []
    with index.lock:  # a reindex may change rows meanwhile
        vectors = [index.vectors[row].numbers() for row in index.rows_by_note.get(path, [])]
        if not vectors:  # not indexed yet, or no text
            return []
        centre = [sum(numbers) / len(vectors) for numbers in zip(*vectors)]
        # Ask for more chunks than notes wanted: the note's own chunks come back first,
        # and one note may hold several of the best chunks.
        hits = index.nearest(centre, count * 3 + len(vectors))
        best: dict[str, float] = {}
        for cosine, row in hits:
            chunk = index.chunks[row]
            if chunk is not None and chunk.path != path and cosine >= MIN_SIMILARITY:
                best[chunk.path] = max(best.get(chunk.path, cosine), cosine)
    return sorted(best.items(), key=lambda item: (-item[1], item[0]))[:count]
# endregion similar-notes
