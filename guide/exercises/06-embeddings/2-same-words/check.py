"""Words that mean the same here: asked about a ready starter, hashing finds the ripe levain."""
from probe import expect, ok, run_copy

QUESTION = "how do I know my starter is ready"
LEVAIN = "The levain is ripe when it is domed, bubbly and smells sour."


def demo(server, *args) -> list[str]:
    """The lines the copy's demo prints with the hashing embedder."""
    done = run_copy(server.folder, ["embeddings.py", "--embedder", "hash", *args])
    expect(done.returncode == 0, f"python3 embeddings.py --embedder hash {' '.join(args)} failed: "
                                 f"{(done.stderr or done.stdout).strip()[-600:]}")
    return done.stdout.splitlines()


def ranked(lines: list[str]) -> list[str]:
    """The sentences of a ranking ('   0.390  text'), best first."""
    return [line.split(None, 1)[1] for line in lines if line.startswith("  ") and len(line.split(None, 1)) == 2]


def check(server):
    lines = demo(server, "--query", QUESTION)
    order = ranked(lines[3:])
    expect(LEVAIN in order, f"the demo's ranking should still hold the sentence {LEVAIN!r}; it printed {lines}")
    expect(order[0] == LEVAIN,
           f"asked {QUESTION!r}, the hashing embedder ranks the levain sentence {order.index(LEVAIN) + 1} of "
           f"{len(order)}, after {order[0]!r}. Give words() (hash_embedder.py) a table of words that mean the "
           f"same in this vault, each written as the one word it stands for, until it ranks first")
    ok("asked how to tell a starter is ready, the levain sentence ranks first")

    name = lines[0].partition("offline hashing (")[2].partition(")")[0]
    expect(name and name != "hash-512",
           f"the recipe changed, so every vector it makes did: give HashEmbedder a new name (it is {name!r}), "
           f"so that an index built with the old recipe is rebuilt rather than mixed with the new")
    ok(f"the embedder has a name of its own: {name}")

    blocks = "\n".join(demo(server)[1:]).strip().split("\n\n")
    best = {block.splitlines()[0]: (ranked(block.splitlines()[1:]) or [""])[0] for block in blocks}
    pairs = [("Feed the sourdough starter equal weights of flour and water.",
              "My starter doubled overnight after a feed of rye flour."),
             ("Massage the salt into the shredded cabbage until it gives up its brine.",
              "Sauerkraut ferments for weeks with the cabbage kept under its brine.")]
    for one, other in pairs:
        expect(best.get(one) == other and best.get(other) == one,
               f"the demo's default sentences should still find each other: {one!r} and {other!r} were each "
               f"other's best match, and now the best are {best.get(one)!r} and {best.get(other)!r}")
    ok("the default sentences still find the same best matches")
