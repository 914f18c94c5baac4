"""A hostile note must not make markdown.py's cost grow faster than the note: inputs on
which the parsers took minutes to hours (a heading of a million blanks, or of "[[";
a paragraph with an id on every line; one heading over 64,000 sections; a line of
backtick runs of every length) now take well under a second. Each call is stopped
after BOUND_SECONDS of processor time, a hang detector rather than a benchmark, and
what it returns is checked too. In this process, for each distinct copy of markdown.py."""

import pytest

from helpers import cpu_bounded, distinct_copies, step_modules
from manifest import find_step

MEGABYTE = 1024 * 1024  # the most a note may be (vault.MAX_NOTE_BYTES)
BOUND_SECONDS = 15.0
STEPS = distinct_copies("markdown.py", since=5)


def markdown_of(step: int):
    with step_modules(find_step(step).path):
        import markdown
    return markdown


def within_bound(function, *args):
    """function(*args), failing once it has used BOUND_SECONDS of processor time."""
    return cpu_bounded(BOUND_SECONDS, function, *args)


@pytest.mark.parametrize("step", STEPS)
def test_a_heading_of_a_million_blanks_is_read_in_linear_time(step):
    """The closing #s were stripped by a regular expression tried from every blank."""
    markdown = markdown_of(step)
    blanks = " " * (MEGABYTE - 4)
    assert within_bound(markdown.find_headings, f"# a{blanks}b") == [markdown.Heading(1, f"a{blanks}b", 1)]
    assert within_bound(markdown.find_headings, f"# a{blanks}##") == [markdown.Heading(1, "a", 1)]


@pytest.mark.parametrize("step", STEPS)
def test_a_paragraph_with_an_id_on_every_line_is_read_in_linear_time(step):
    """Each id walked up to its paragraph's start and copied the paragraph up to it. The
    copies are the square of the paragraph: all the texts together stop at MAX_BLOCK_TEXT."""
    markdown = markdown_of(step)
    ids = MEGABYTE // 2 // 9  # "a ^b12345": half a megabyte
    blocks = within_bound(markdown.find_blocks, "\n".join(f"a ^b{number}" for number in range(ids)))
    assert [block.id for block in blocks] == [f"b{number}" for number in range(ids)]
    assert {block.line for block in blocks} == {1}
    assert blocks[0].text == "a" and blocks[2].text == "a ^b0\na ^b1\na"
    assert blocks[500].text == "".join(f"a ^b{number}\n" for number in range(500)) + "a"
    assert sum(len(block.text) for block in blocks) <= markdown.MAX_BLOCK_TEXT


@pytest.mark.parametrize("step", STEPS)
def test_a_list_with_an_id_on_every_item_is_read_in_linear_time(step):
    """Each id walked up to the start of the list, then looked for the item it ends."""
    markdown = markdown_of(step)
    items = MEGABYTE // 2 // 11  # "- a ^b12345"
    blocks = within_bound(markdown.find_blocks, "\n".join(f"- a ^b{number}" for number in range(items)))
    assert blocks == [markdown.Block(f"b{number}", number + 1, "- a") for number in range(items)]


@pytest.mark.parametrize("step", STEPS)
def test_an_id_repeated_on_every_line_is_read_once(step):
    """The first of an id wins; each repeat still walked up and copied its paragraph."""
    markdown = markdown_of(step)
    blocks = within_bound(markdown.find_blocks, "\n".join(["a ^b"] * (MEGABYTE // 2 // 5)))
    assert blocks == [markdown.Block("b", 1, "a")]


@pytest.mark.parametrize("step", STEPS)
def test_a_heading_of_link_openers_is_looked_up_in_linear_time(step):
    """_heading_key tried a [[link]] from every "[[" to the end of the heading."""
    markdown = markdown_of(step)
    heading = "[[" * (MEGABYTE // 2 - 1)
    text = f"# {heading}\nunder it"
    assert within_bound(markdown.section_text, text, "x") is None
    assert within_bound(markdown.section_text, text, heading) == text


@pytest.mark.parametrize("step", STEPS)
def test_a_huge_heading_is_cut_before_it_is_joined_into_every_chunk(step):
    """Every section under a heading joined the whole heading into its context, then cut
    it. In a note of 1 MB that costs seconds; the sections are made here, one heading
    of 16 MB over 64,000 of them, so that it would cost minutes."""
    markdown = markdown_of(step)
    heading = "h" * (16 * MEGABYTE)
    sections = [markdown.Section("b", 2, [heading, "b"], 3 + 2 * n, "## b\nc") for n in range(64_000)]
    chunks = within_bound(markdown.chunk_sections, "T", sections)
    assert len(chunks) == len(sections) and chunks[-1].line == sections[-1].line + 1
    assert {chunk.text for chunk in chunks} == {"T > " + "h" * 496 + "\n\nc"}  # 2000 // 4 characters of context
    assert all(chunk.path == [heading, "b"] for chunk in chunks)


@pytest.mark.parametrize("step", STEPS)
def test_a_line_of_backtick_runs_of_every_length_is_masked_in_linear_time(step):
    """Each run with no closer of its length looked along the rest of the line. At 1 MB
    that costs seconds; a line of 16 MB would cost minutes."""
    markdown = markdown_of(step)
    lengths = []  # 1, 2, 3, ...: no run has a closer, so nothing is hidden
    while sum(lengths) + len(lengths) < 16 * MEGABYTE:
        lengths.append(len(lengths) + 1)
    line = "a " + " ".join("`" * length for length in lengths)
    assert within_bound(markdown.mask, line) == line
    assert within_bound(markdown.mask, "`code` " + line) == " " * 7 + line  # a span that closes is hidden
