"""The floor under the finished server's search quality, measured by `make eval` (tests/eval.py).

With the offline embedder, on a temporary copy of the sample vault, the default
mode must keep finding what it found when the fusion was chosen; and on a small
vault written here, hybrid search must never find less than the better of its two
parts, keyword and semantic. The indexes build in well under a second, so these
run with the rest of the suite.
"""
from pathlib import Path

import pytest
from helpers import step_modules

with step_modules(Path(__file__).resolve().parent.parent / "steps" / "10-reconcile-and-ship"):
    from eval import DEFAULT_MODE, Query, evaluate, load_queries, make_embedder, rank_of_answer, sample_index
    from eval import search, vault_index

# Measured when RRF_K and WEIGHTS were chosen (make eval): the default mode found the
# right note among the first 5 for 24 of the 42 questions (recall@5 0.57), as keyword
# search alone did. The floor leaves one question of margin.
MIN_RECALL = 0.54  # 23 of 42
ONE_QUESTION = 0.02  # hybrid may trail the better of its parts by this much (issue 16), on the corpora


@pytest.fixture(scope="module")
def ranks():
    """{mode: [rank of the right note, or None, for each question]} with the offline embedder."""
    queries = load_queries()
    embedder, _ = make_embedder("hash")
    with sample_index(embedder) as index:
        return queries, {mode: [rank_of_answer(index, query, mode) for query in queries] for mode in search.MODES}


def found(ranks: list, queries, kind=None) -> int:
    return sum(rank is not None for rank, query in zip(ranks, queries) if kind in (None, query.kind))


def test_the_tool_default_is_the_first_mode():
    assert DEFAULT_MODE == search.MODES[0]


def test_the_default_mode_finds_at_least_what_it_did_when_tuned(ranks):
    queries, by_mode = ranks
    recall = found(by_mode[DEFAULT_MODE], queries) / len(queries)
    assert recall >= MIN_RECALL, (
        f"{DEFAULT_MODE} search found the right note among the first 5 for {recall:.2f} of the questions, "
        f"below the floor of {MIN_RECALL}: run make eval to see which mode and kind of question lost"
    )


def test_a_far_keyword_match_does_not_overturn_the_models_first_choice():
    """RRF_K 4 (make eval on the two corpora, the model's hybrid on Foam 0.90 at 5, 0.92
    at 4): a chunk the model puts second and BM25 only twelfth stays behind the model's
    first, which BM25 missed; with RRF_K 5 the far keyword match would lift it above."""
    keyword = [f"other {rank}" for rank in range(1, 12)] + ["second"]  # "second" twelfth
    fused = search.reciprocal_rank_fusion({"semantic": ["first", "second"], "keyword": keyword},
                                          search.WEIGHTS["model"], search.RRF_K)
    assert fused["first"] > fused["second"], f"RRF_K {search.RRF_K} lets BM25's twelfth overturn the model's first"
    near = keyword[:3] + ["second"]  # fourth in BM25 is real agreement, and still counts
    fused = search.reciprocal_rank_fusion({"semantic": ["first", "second"], "keyword": near},
                                          search.WEIGHTS["model"], search.RRF_K)
    assert fused["second"] > fused["first"]


def test_the_default_mode_finds_what_keyword_search_finds_on_the_sample_vault(ranks):
    queries, by_mode = ranks
    assert found(by_mode[DEFAULT_MODE], queries) >= found(by_mode["keyword"], queries) - 1


# region hybrid-fixture
RARE = ["einkorn", "koji", "scoby", "levain", "kvass", "natto", "amazake", "tempeh"]


def write_fixture_vault(folder: Path) -> list[Query]:
    """Notes that each explain one rare word, among logs that all say "warm water": the
    offline embedder, which knows words and not meaning, ranks the logs nearest to
    "koji with warm water"; keyword search knows "koji" is the rare word that matters."""
    folder.mkdir()
    for rare in RARE:
        (folder / f"{rare.title()}.md").write_text(
            f"# {rare.title()}\n\nWhat {rare} is, where it comes from, how it is made, and a few ways to use it.\n")
    for number, word in enumerate("kitchen jar salt sugar flour time day week shelf lid cloth towel".split()):
        (folder / f"Kitchen log {number}.md").write_text(f"# Kitchen log {number}\n\nWarm water, {word}.\n")
    return [Query(f"{rare} with warm water", frozenset([f"{rare.title()}.md"]), "words") for rare in RARE]


def test_hybrid_finds_what_the_better_of_its_parts_finds(tmp_path):
    queries = write_fixture_vault(tmp_path / "vault")
    embedder, _ = make_embedder("hash")
    with vault_index(embedder, tmp_path / "vault", queries) as index:
        recall = {mode: evaluate(index, queries, mode)["all"][0] for mode in search.MODES}
    better = max(recall["keyword"], recall["semantic"])
    assert recall["hybrid"] >= better - ONE_QUESTION, (
        f"hybrid found {recall['hybrid']:.2f} of the questions, keyword {recall['keyword']:.2f}, "
        f"semantic {recall['semantic']:.2f}: fusion loses what one of its parts finds (search.WEIGHTS)"
    )
# endregion hybrid-fixture
