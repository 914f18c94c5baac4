"""The keyword postings, stored beside the note files, so that a restart loads them
instead of tokenizing every chunk again.

On a vault of 10,000 notes the note files load in a second or two, and building the
BM25 postings (keyword_index.py) from their chunks took five seconds more, which the
first search waited for. The postings are only numbers, two arrays per term, so the
stored copy is one line of JSON (what the numbers belong to) followed by the arrays'
own bytes: they load with a copy each, in a fraction of a second. Base64 in JSON, as
the vectors are stored (vector_search.py), took three times as long.

A copy is right only for the chunks it was made from. A note's file in the index is
replaced whole whenever the note changes (index.py), so its inode, size and time change
with it. The copy lists each note with those three and its number of chunks, in the
order of its rows; Index.load reads the note files in that order, so that each note
gets the rows it had, and takes the copy only if every note it lists is there with its
file unchanged. Notes it does not list, added since, are loaded after those and
tokenized. Any other difference (a note changed or removed since, a damaged copy, a
machine whose numbers are laid out otherwise) and the postings are built from the
chunks, as without a copy.

VaultIndex saves a copy after a build, after a start whose copy did not fit or whose
reconcile changed a note, and a while after the watcher's last change. A crash in
between costs time, never a wrong answer: the next start finds the copy stale.
"""
import json
import os
import sys
from array import array
from pathlib import Path

from keyword_index import KeywordIndex

FILE = "keywords.postings"  # in the generation folder; not ".json", which Index.load reads as a note
FORMAT = 1
LAYOUT = {"byteorder": sys.byteorder, "itemsize": array("I").itemsize}  # what the bytes mean


def file_stamp(info: os.stat_result) -> list[int]:
    """What changes when index.py replaces a note's file: a new file, so a new inode."""
    return [info.st_ino, info.st_size, info.st_mtime_ns]


def read_copy(folder: Path) -> tuple[dict, memoryview] | None:
    """The stored copy in a generation folder: its header and the bytes of its numbers;
    None if there is none, it is unreadable, or it was written by another layout."""
    try:
        data = (folder / FILE).read_bytes()
        end = data.index(b"\n")
        header = json.loads(data[:end])
    except (OSError, ValueError, RecursionError):  # ValueError: no line, or not JSON
        return None
    if not isinstance(header, dict) or header.get("format") != FORMAT or header.get("layout") != LAYOUT:
        return None
    return header, memoryview(data)[end + 1:]


def note_order(copy: tuple[dict, memoryview] | None) -> dict[str, int]:
    """Each listed note's place: Index.load reads the note files in this order, the rest after."""
    notes = copy[0].get("notes") if copy else None
    if not isinstance(notes, list):
        return {}
    return {note[0]: place for place, note in enumerate(notes) if isinstance(note, list) and note
            and isinstance(note[0], str)}


# region fit
def fit(copy, rows_by_note: dict[str, list[int]], stamps: dict[str, list[int]]) -> KeywordIndex | None:
    """The stored postings, if they belong to the notes just loaded: every note the copy
    lists has the rows it had and an unchanged file. None otherwise, or if damaged."""
    if copy is None:
        return None
    header, data = copy
    try:
        row = 0
        for path, chunks, *stamp in header["notes"]:
            rows = rows_by_note.get(path, [])  # the rows this load gave the note: they must be the next
            if len(rows) != chunks or rows != list(range(row, row + len(rows))) or stamps.get(path) != stamp:
                return None
            row += chunks
        return postings_from(header["terms"], Numbers(data), row)
    except (KeyError, TypeError, ValueError):  # a damaged copy is only a slower start
        return None
# endregion fit


def postings_from(terms: list, numbers: "Numbers", rows: int) -> KeywordIndex:
    """The KeywordIndex for rows 0 to rows - 1: each row's length, then each term's rows and
    counts; ValueError if the numbers do not fit them."""
    keywords = KeywordIndex()
    lengths = numbers.take(rows)
    keywords.lengths = dict(enumerate(lengths))
    keywords.total_length = sum(lengths)
    for term, count in terms:
        term_rows, counts = numbers.take(count), numbers.take(count)
        if not isinstance(term, str) or not term_rows or max(term_rows) >= rows:
            raise ValueError(f"the postings of {term!r} name rows there are not")
        keywords.postings[term] = (term_rows, counts)
    numbers.take_the_end()
    return keywords


class Numbers:
    """The copy's numbers, taken in the order they were written."""

    def __init__(self, data: memoryview):
        self.data, self.at = data, 0

    def take(self, count: int) -> array:
        end = self.at + count * LAYOUT["itemsize"]
        if count < 0 or end > len(self.data):
            raise ValueError("the copy is cut short")
        values = array("I")
        values.frombytes(self.data[self.at:end])
        self.at = end
        return values

    def take_the_end(self) -> None:
        if self.at != len(self.data):
            raise ValueError("the copy holds more numbers than its header names")


def write_copy(handle, keywords: KeywordIndex, notes: list[tuple[str, list[int]]], stamps: list[list[int]]) -> None:
    """Write the copy to a file opened for bytes, as Numbers reads it back. Rows are
    renumbered to those a load that reads the notes in this order gives them; each
    term's arrays are written as they are made, never the whole copy at once."""
    old_rows = [row for _, rows in notes for row in rows]
    new_row = renumbering(old_rows)
    header = {
        "format": FORMAT,
        "layout": LAYOUT,
        "notes": [[path, len(rows), *stamp] for (path, rows), stamp in zip(notes, stamps)],
        "terms": [[term, len(rows)] for term, (rows, _) in keywords.postings.items()],
    }
    handle.write(json.dumps(header, ensure_ascii=False).encode("utf-8") + b"\n")
    array("I", [keywords.lengths[row] for row in old_rows]).tofile(handle)
    for rows, counts in keywords.postings.values():
        (rows if new_row is None else array("I", map(new_row.__getitem__, rows))).tofile(handle)
        counts.tofile(handle)


def renumbering(old_rows: list[int]) -> array | None:
    """old row -> new row, for rows read in this order; None when each is its own, as after
    a build, or a load that changed nothing."""
    if old_rows == list(range(len(old_rows))):
        return None
    new_row = array("I", [0]) * (max(old_rows) + 1)
    for new, old in enumerate(old_rows):
        new_row[old] = new
    return new_row
