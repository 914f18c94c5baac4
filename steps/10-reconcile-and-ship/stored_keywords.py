"""The keyword postings, stored beside the note files, so that a restart loads them
instead of tokenizing every chunk again.

On a vault of 10,000 notes the note files load in a second or two, and building the
BM25 postings (keyword_index.py) from their chunks took five seconds more, which the
first search waited for. The postings are only numbers, two arrays per term, so the
stored copy is one line of JSON (what the numbers belong to), the arrays' own bytes,
and a CRC-32 of both: they load with a copy each, in a fraction of a second. Base64 in
JSON, as the vectors are stored (vector_search.py), took three times as long. The numbers
are read from the file into their arrays as they are taken, never the whole file into
memory first: at 10,000 notes that would be 21 MB more at the peak of a restart.

A copy is right only for the chunks it was made from, cut into words by the tokenizer
that made it. Each note's file in the index is replaced by a new file whenever the note
changes (index.py), so the copy lists each note with its file's inode, size and time,
and its number of chunks. Its rows are numbered as a load that reads the notes in the
copy's order numbers them (write_copy renumbers them so); ChunkIndex.load reads them in that
order and takes the copy only if every note it lists is there with its file unchanged.
Notes it does not list, added since, are loaded after those and tokenized. Any other
difference (a note changed or removed since, another tokenizer, a damaged copy, numbers
laid out otherwise) and the postings are built from the chunks, as without a copy.

VaultIndex saves a copy after a build, after a start whose copy did not fit or whose
reconcile changed a note, a while after the watcher's last change, and when the server
stops. A crash in between costs time: the next start finds the copy stale.
"""
import hashlib
import json
import os
import stat
import sys
import zlib
from array import array
from pathlib import Path

import keyword_index
from keyword_index import KeywordIndex

FILE = "keywords.postings"  # in the generation folder; not ".json", which ChunkIndex.load reads as a note
FORMAT = 1
LAYOUT = {"byteorder": sys.byteorder, "itemsize": array("I").itemsize}  # what the bytes mean


# region tokenizer
def source_hash(module) -> str:
    """A hash of a module's source, read as Python read it (from a file, or from a .pyz)."""
    try:
        source = module.__loader__.get_source(module.__name__) or ""
    except (ImportError, OSError):  # no source to be had: no protection, and no failure either
        source = ""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]


# What cut the words: postings made by another tokenizer (a new stopword, a new suffix rule)
# would not be the ones this one makes, however unchanged the chunks.
TOKENIZER = source_hash(keyword_index)
CHECKSUM_SIZE = 4  # the file ends with a CRC-32 of all before it: a flipped byte is caught
# endregion tokenizer


def file_stamp(inode: int, info: os.stat_result) -> list[int]:
    """What changes when index.py replaces a note's file: it is a new file, with an inode
    of its own (os.DirEntry.inode, since on Windows a DirEntry's stat has none)."""
    return [inode, info.st_size, info.st_mtime_ns]


# region read-copy
def read_copy(folder: Path) -> tuple[dict, "Numbers"] | None:
    """The stored copy in a generation folder: its header, and its numbers to be read as
    they are taken; None if there is none, or its header is damaged or was written by
    another layout or tokenizer. The CRC-32 of the whole is checked once the numbers are
    read (Numbers.take_the_end): a copy damaged there gives no postings either."""
    file = folder / FILE
    try:
        info = os.stat(file)
        if not stat.S_ISREG(info.st_mode):  # a FIFO would block the read
            return None
        with open(file, "rb") as handle:
            line = handle.readline()
        header = json.loads(line)
    except (OSError, ValueError, RecursionError):  # ValueError: not JSON
        return None
    if not line.endswith(b"\n") or not well_formed(header):
        return None
    return header, Numbers(file, len(line), info.st_size - CHECKSUM_SIZE, zlib.crc32(line))
# endregion read-copy


def well_formed(header) -> bool:
    """Whether the header is what write_copy writes, down to the type of every field, so
    that nothing after this can fail on it."""
    if not isinstance(header, dict) or header.get("format") != FORMAT or header.get("layout") != LAYOUT \
            or header.get("tokenizer") != TOKENIZER:
        return False
    notes, terms = header.get("notes"), header.get("terms")
    return (isinstance(notes, list) and isinstance(terms, list)
            and all(type(note) is list and len(note) == 5 and is_text(note[0])
                    and all(type(number) is int and number >= 0 for number in note[1:]) for note in notes)
            and all(type(term) is list and len(term) == 2 and is_text(term[0])
                    and type(term[1]) is int and term[1] > 0 for term in terms))


def is_text(value) -> bool:
    """A string that can be written as UTF-8: JSON can carry a lone surrogate, a file name cannot."""
    try:
        return isinstance(value, str) and bool(value.encode("utf-8"))
    except UnicodeEncodeError:
        return False


def note_order(copy: tuple[dict, memoryview] | None) -> dict[str, int]:
    """Each listed note's place: ChunkIndex.load reads the note files in this order, the rest after."""
    return {note[0]: place for place, note in enumerate(copy[0]["notes"])} if copy else {}


# region fit
def fit(copy, rows_by_note: dict[str, list[int]], stamps: dict[str, list[int]]) -> KeywordIndex | None:
    """The stored postings, if they belong to the notes just loaded: every note the copy
    lists got the rows the copy numbered for it, and has an unchanged file; else None."""
    if copy is None:
        return None
    header, numbers = copy
    row = 0
    for path, chunks, *stamp in header["notes"]:
        rows = rows_by_note.get(path, [])  # the rows this load gave the note: they must be the next
        if len(rows) != chunks or rows != list(range(row, row + len(rows))) or stamps.get(path) != stamp:
            return None
        row += chunks
    try:
        with numbers:
            return postings_from(header["terms"], numbers, row)
    except (OSError, ValueError):  # numbers that do not fit, a file cut or changed: only a slower start
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
        if max(term_rows) >= rows:
            raise ValueError(f"the postings of {term!r} name rows there are not")
        keywords.postings[term] = (term_rows, counts)
    numbers.take_the_end()
    return keywords


# region numbers
class Numbers:
    """The copy's numbers, taken in the order they were written, read from its file a block
    at a time; `with` opens and closes the file."""

    BLOCK = 1 << 20  # bytes read at once: a few calls for the whole copy, and little memory

    def __init__(self, file: Path, start: int, end: int, checksum: int):
        self.file, self.start, self.end, self.checksum = file, start, end, checksum
        self.handle, self.block, self.at = None, b"", 0  # self.at: the next number's place in the block

    def __enter__(self) -> "Numbers":
        self.handle = open(self.file, "rb")
        self.handle.seek(self.start)
        self.read = self.start  # bytes of the file read so far
        return self

    def __exit__(self, *_) -> None:
        self.handle.close()

    def take(self, count: int) -> array:
        size = count * LAYOUT["itemsize"]
        if self.read - (len(self.block) - self.at) + size > self.end:
            raise ValueError("the copy is cut short")
        while len(self.block) - self.at < size:
            more = self.handle.read(min(max(self.BLOCK, size), self.end - self.read))
            if not more:
                raise ValueError("the copy is shorter than it was")
            self.checksum = zlib.crc32(more, self.checksum)
            self.block, self.at, self.read = self.block[self.at:] + more, 0, self.read + len(more)
        values = array("I")
        values.frombytes(memoryview(self.block)[self.at:self.at + size])
        self.at += size
        return values

    def take_the_end(self) -> None:
        """The last check: every number taken, and the file's CRC-32 that of all read."""
        if self.read != self.end or self.at != len(self.block):
            raise ValueError("the copy holds more numbers than its header names")
        if self.handle.read() != self.checksum.to_bytes(CHECKSUM_SIZE, "big"):
            raise ValueError("the copy is damaged: its CRC-32 does not match")
# endregion numbers


def write_copy(handle, keywords: KeywordIndex, notes: list[tuple[str, list[int]]], stamps: list[list[int]]) -> None:
    """Write the copy to a file opened for bytes, as read_copy and Numbers read it back.
    Rows are renumbered to those a load that reads the notes in this order gives them;
    each term's arrays are written as they are made, never the whole copy at once."""
    old_rows = [row for _, rows in notes for row in rows]
    if len(old_rows) != len(keywords.lengths):
        raise ValueError("the postings and the notes' rows disagree; not stored")
    new_row = renumbering(old_rows)
    header = {
        "format": FORMAT,
        "layout": LAYOUT,
        "tokenizer": TOKENIZER,
        "notes": [[path, len(rows), *stamp] for (path, rows), stamp in zip(notes, stamps)],
        "terms": [[term, len(rows)] for term, (rows, _) in keywords.postings.items()],
    }
    out = Summed(handle)
    out.write(json.dumps(header, ensure_ascii=False).encode("utf-8") + b"\n")
    out.write(array("I", [keywords.lengths[row] for row in old_rows]).tobytes())
    for rows, counts in keywords.postings.values():
        out.write((rows if new_row is None else array("I", map(new_row.__getitem__, rows))).tobytes())
        out.write(counts.tobytes())
    handle.write(out.checksum.to_bytes(CHECKSUM_SIZE, "big"))


class Summed:
    """A file opened for bytes that keeps a CRC-32 of what is written to it."""

    def __init__(self, handle):
        self.handle, self.checksum = handle, 0

    def write(self, data: bytes) -> None:
        self.checksum = zlib.crc32(data, self.checksum)
        self.handle.write(data)


def renumbering(old_rows: list[int]) -> array | None:
    """old row -> new row, for rows read in this order; None when each is its own, as after
    a build, or a load that changed nothing."""
    if old_rows == list(range(len(old_rows))):
        return None
    new_row = array("I", [0]) * (max(old_rows) + 1)
    for new, old in enumerate(old_rows):
        new_row[old] = new
    return new_row
