"""Names that look the same to a reader: Unicode's confusable skeletons (UTS #39, section 4).

A Cyrillic "а" and a Latin "a" are different characters and the same shape, so
"Idеa.md" can sit beside "Idea.md" and no one reading the inbox could tell them
apart. Unicode's confusables table maps each such character to a prototype, the
character (or characters) it can be mistaken for: Cyrillic "а" to "a", "0" to "O",
"m" to "rn". A name's skeleton is its decomposed form (NFD) with every character
replaced by its prototype, decomposed again; two names look alike when their
skeletons are equal. The table (steps/data/confusables.txt) is read once, when first
needed. Invisible characters, which the skeleton would drop, never reach a name here:
inbox.py removes them first.
"""
import functools
import unicodedata
from pathlib import Path

# The shared data folder beside the step folders: steps/data/.
DATA_DIR = Path(__file__).resolve().parent.parent / "data"
TABLE = "confusables.txt"


# region prototypes
@functools.cache
def prototypes() -> dict[str, str]:
    """Each confusable character and its prototype, from the table."""
    # The module's own loader reads the file from disk, or from inside the .pyz the server may run as.
    text = __loader__.get_data(str(DATA_DIR / TABLE)).decode("ascii")
    table = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            source, prototype = line.split("\t")
            table[chr(int(source, 16))] = "".join(chr(int(code, 16)) for code in prototype.split())
    return table
# endregion prototypes


# region skeleton
def skeleton(name: str) -> str:
    """What `name` looks like, as UTS #39 defines it: equal skeletons, names that look alike."""
    table = prototypes()
    decomposed = unicodedata.normalize("NFD", name)
    return unicodedata.normalize("NFD", "".join(table.get(char, char) for char in decomposed))


def lookalike(name: str, others) -> str | None:
    """The first of `others` that reads the same as `name`, as written or once case is
    folded: where a file system ignores case, "IDЕA" (a Cyrillic Е) passes for "idea"."""
    as_written, folded = skeleton(name), skeleton(name.casefold())
    return next((other for other in others
                 if skeleton(other) == as_written or skeleton(other.casefold()) == folded), None)
# endregion skeleton
