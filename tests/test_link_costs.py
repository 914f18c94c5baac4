"""A note of 1 MiB built to make the link graph, the embeds of get_note or the frontmatter
parser work with the square of its size. Each hostile input below took the old code
minutes (the frontmatter's, a second and a half under its cap, and a minute or more
without it); now it takes a second or less, and the answer is still right. In this
process, for each distinct copy of the module that does the work.

The time bound is generous: it tells a hang from an answer, and is no benchmark."""
import time

import pytest

from helpers import distinct_copies, step_modules
from manifest import find_step

MEGABYTE = 1024 * 1024  # the most a note may be (vault.py's MAX_NOTE_BYTES)
BOUND = 15.0  # seconds


def by_step(name: str, since: int):
    return pytest.mark.parametrize("step", distinct_copies(name, since=since), ids=lambda step: f"step{step}")


@by_step("links.py", since=8)
def test_each_link_of_a_megabyte_line_is_shown_around_itself(step):
    """87,381 links on one line after half a megabyte of text: each link used to strip its
    whole line and search it from the start for the target, minutes in all."""
    with step_modules(find_step(step).path):
        from links import read_entry
    text = " " + "x" * (MEGABYTE // 2) + "[[xz]]" * (MEGABYTE // 12)
    started = time.monotonic()
    contexts = [context for _, context in read_entry("N.md", text).links]
    assert time.monotonic() - started < BOUND
    assert len(contexts) == MEGABYTE // 12
    assert contexts[0] == "…" + "x" * 64 + "[[xz]]" * 22 + "[[xz…"  # 200 characters, a third before the link
    assert contexts[len(contexts) // 2] == "…xz]]" + "[[xz]]" * 32 + "[[xz…"  # its own place, not the first link's
    assert contexts[-1] == "…]]" + "[[xz]]" * 33  # the line ends with it


@by_step("links.py", since=8)
def test_a_link_target_longer_than_any_name_is_unresolved_without_being_normalised(step, tmp_path):
    """NFC sorts a run of accents in time that grows with its square: the old graph took
    minutes to file this one link."""
    with step_modules(find_step(step).path):
        from links import MAX_NAME_CHARS, NOTE, UNRESOLVED, LinkGraph, key
        from vault import Vault
    accents = "a" + "\u0301\u0316" * 262_000  # 1,048,001 bytes of UTF-8
    (tmp_path / "N.md").write_text(f"[[{accents}]]\n[[Cre\u0300me]]\n", encoding="utf-8")
    (tmp_path / "Crème.md").write_text("# Crème\n", encoding="utf-8")
    graph = LinkGraph(Vault(tmp_path))
    started = time.monotonic()
    graph.update_note("N.md")
    graph.update_note("Crème.md")
    unresolved = graph.unresolved("N.md")
    assert graph.backlinks("Crème.md")[0].source == "N.md"
    assert time.monotonic() - started < BOUND
    assert [(link.kind, link.link.target, link.alias_of) for link in unresolved] == [(UNRESOLVED, accents, None)]
    decomposed = graph.outgoing("N.md")[1]  # a real name is still compared composed
    assert (decomposed.kind, decomposed.target) == (NOTE, "Crème.md")
    assert key("Cre\u0300me" * 100) == "crème" * 100 and len("Cre\u0300me" * 100) < MAX_NAME_CHARS


@by_step("embeds.py", since=8)
def test_a_note_that_embeds_a_missing_block_of_itself_a_thousand_times_is_parsed_once(step, tmp_path):
    """Each embed read and parsed its note again, even to refuse it: 1,000 parses of a
    note of 1 MiB, minutes for one get_note."""
    with step_modules(find_step(step).path):
        from embeds import MAX_EMBEDS, Embeds
        from links import LinkGraph
        from notes import parse_note
        from vault import Vault
    text = "![[Guest]]\n" + "![[Self#^missing]]\n" * MAX_EMBEDS + "word " * 200_000  # 1,019,011 bytes
    (tmp_path / "Self.md").write_text(text, encoding="utf-8")
    (tmp_path / "Guest.md").write_text("Borrowed words.\n", encoding="utf-8")
    vault = Vault(tmp_path)
    graph = LinkGraph.build(vault)
    started = time.monotonic()
    embeds = Embeds(vault, graph, len(text.encode("utf-8")))
    shown = embeds.expand(parse_note("Self", text).body, "Self.md", ("Self.md",))
    assert time.monotonic() - started < BOUND
    assert shown.startswith("> Embedded from Guest.md:\n> Borrowed words.\n![[Self#^missing]]\n")
    reasons = [skipped["reason"] for skipped in embeds.not_shown]
    assert reasons[:-1] == ['Self.md has no block "^missing"'] * (MAX_EMBEDS - 1)
    assert reasons[-1].startswith(f"only {MAX_EMBEDS} embeds are looked at")


@by_step("embeds.py", since=8)
def test_one_answer_reads_a_bounded_number_of_bytes_of_notes_for_its_embeds(step, tmp_path):
    """Past MAX_READ_BYTES an embed stays a link and says why; a note read before is
    not read again, so it still gets its own answer."""
    with step_modules(find_step(step).path):
        from embeds import MAX_READ_BYTES, Embeds
        from links import LinkGraph
        from notes import parse_note
        from vault import MAX_NOTE_BYTES, Vault
    for number in range(6):
        (tmp_path / f"Big {number}.md").write_text("word " * (MAX_NOTE_BYTES // 5) + "w", encoding="utf-8")
    host = "".join(f"![[Big {number}#^none]]\n" for number in [*range(6), 0])
    (tmp_path / "Host.md").write_text(host, encoding="utf-8")
    vault = Vault(tmp_path)
    embeds = Embeds(vault, LinkGraph.build(vault), len(host))
    started = time.monotonic()
    assert embeds.expand(parse_note("Host", host).body, "Host.md", ("Host.md",)) == host
    assert time.monotonic() - started < BOUND
    read = MAX_READ_BYTES // MAX_NOTE_BYTES  # notes of exactly MAX_NOTE_BYTES
    budget = f"embeds read {MAX_READ_BYTES // 2**20} MiB of notes at most in one answer"
    assert [skipped["reason"] for skipped in embeds.not_shown] == (
        [f'Big {number}.md has no block "^none"' for number in range(read)]
        + [budget] * (6 - read)
        + ['Big 0.md has no block "^none"']
    )


@by_step("frontmatter.py", since=5)
@pytest.mark.parametrize("line,properties", [
    pytest.param(lambda size: "&a " * (size // 3) + "k: v", {"k": "v"}, id="anchors before a key"),
    pytest.param(lambda size: "k: " + "!t " * (size // 3) + "!!str 12", {"k": "12"}, id="tags before a value"),
])
def test_anchors_and_tags_cost_the_length_of_their_line(step, line, properties, monkeypatch):
    """Each `&anchor` or `!tag` copied the rest of its line: a second and a half at the
    most MAX_CHARS lets through, and were the cap raised, a minute or more for a line
    of 2 MiB; the parser must not need the cap to be quick."""
    with step_modules(find_step(step).path):
        import frontmatter
    for size in (frontmatter.MAX_CHARS - 20, 2 * MEGABYTE):
        monkeypatch.setattr(frontmatter, "MAX_CHARS", max(size + 20, frontmatter.MAX_CHARS))
        started = time.monotonic()
        front = frontmatter.read_frontmatter("---\n" + line(size) + "\n---\nbody\n")
        assert time.monotonic() - started < BOUND
        assert (front.data, front.error, front.body) == (properties, "", "body\n")
