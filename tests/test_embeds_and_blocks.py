"""Block ids (step 5 on) and embeds (step 8 on) over real HTTP, on a temporary vault made
for it: get_note returns the block "^id" names, in each kind of block; get_backlinks
names the block a link points at; get_note quotes embedded notes, sections and blocks in
place, cycle-safe, depth-limited, within the size of one note read, never from outside
the vault, and gives the raw text when asked."""
import time
from contextlib import ExitStack

import pytest

from helpers import tool_data as data
from helpers import tool_refusal as refusal
from helpers import distinct_copies, tool_call, tool_session
from launch import running_server
from manifest import find_step

BLOCK_STEPS = [5, 7, 8]  # the distinct copies of get_note (6 is 5's, 9 and 10 are 8's)
EMBED_STEPS = [8, 9, 10]  # one embeds.py and tools.py, three link graphs kept three ways
MAX_NOTE_BYTES = 1024 * 1024  # vault.py's limit on a note read

BLOCKS = """---
tags: [blocks]
---
A paragraph that ends
with an id. ^para-1

- first item
- second item ^item-2
- third item
    ^item-3

- whole list one
- whole list two

^list-1

> [!tip] A callout
> that spans two lines
^callout-1

> A plain quote ^quote-1

| a | b |
|---|---|
| 1 | 2 |

^table-1

| c | d |
|---|---|
^table-2

```
code ^not-a-block
```

## A heading ^not-either
An id with a bad character ^not_valid

## Under a heading

^not-a-heading
"""

BIG = ("All work and no play. " * 40 + "\n") * 700  # about 620 KB: one fits, two do not

NOTES = {
    "Blocks.md": BLOCKS,
    "Source.md": "---\nsecret-prop: kept out\n---\n# Source\nfirst part\n## Part two\nsecond part text\n",
    "Host.md": "Intro\n\n![[Blocks#^item-2]]\n\nInline ![[Source#Part two]] here.\n\n![[Source]]\n\n"
               "![[chart.png]]\n\n![[Missing note]]\n\n![[Source#No such part]]\n",
    "Linker.md": "See [[Blocks#^para-1]] and [[Blocks]].\n",
    "Map.md": "- Bread: ![[Source#Part two]]\n- ![[Source#Part two]]\n  ![[Source#Part two]]\n\n"
              "> [!note] Kept\n> see ![[Source#Part two]] there\n",
    "Cycle A.md": "A text\n\n![[Cycle B]]\n",
    "Cycle B.md": "B text\n\n![[Cycle A]]\n",
    "Self.md": "## One\nfirst\n\n## Two\n![[#One]]\n![[#Two]]\n",
    "Deep 1.md": "level 1\n\n![[Deep 2]]\n",
    "Deep 2.md": "level 2\n\n![[Deep 3]]\n",
    "Deep 3.md": "level 3\n\n![[Deep 4]]\n",
    "Deep 4.md": "level 4\n\n![[Deep 5]]\n",
    "Deep 5.md": "level 5\n",
    "Escape.md": "![[Linked out]]\n\n![[../outside/secret]]\n\n![[/../outside/secret]]\n\n![[Huge]]\n",
    "Huge.md": "x" * (MAX_NOTE_BYTES + 1),  # the graph knows its name; the vault refuses to read it
    "Big.md": BIG,
    "Twice big.md": "![[Big]]\n\n![[Big]]\n",
    "Broken many.md": "![[No note here]]\n" * 3_000,  # 75,000 would take seconds, and megabytes of reasons
    "Wide 1.md": "one\n" + "![[Wide 2]]\n" * 12,  # 12 * 12 * 12 * 12 embeds, three levels deep
    "Wide 2.md": "two\n" + "![[Wide 3]]\n" * 12,
    "Wide 3.md": "three\n" + "![[Wide 4]]\n" * 12,
    "Wide 4.md": "four\n" + "![[Wide 5]]\n" * 12,
    "Wide 5.md": "five\n",
    # The label names the folder: each quote is 100 bytes longer than its length in characters.
    "Ü" * 50 + "/Tiny embed.md": "tiny\n",
    "Nearly full.md": "Filler words to fill a long line. " * 30 * 1_000 + "\n" + "![[Tiny embed]]\n" * 400,
}
MAX_EMBEDS = 1000  # embeds.py: embeds looked at in one answer
SECRET = "TOP SECRET outside the vault"


def make_vault(root):
    vault = root / "vault"
    for path, text in NOTES.items():
        (vault / path).parent.mkdir(parents=True, exist_ok=True)
        (vault / path).write_text(text, encoding="utf-8")
    (root / "outside").mkdir()
    (root / "outside" / "secret.md").write_text(SECRET + "\n", encoding="utf-8")
    (vault / "Linked out.md").symlink_to(root / "outside" / "secret.md")
    return vault


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """One running server per step, started when a test first asks for it."""
    started = {}
    with ExitStack() as running:

        def server(number):
            if number not in started:
                vault = make_vault(tmp_path_factory.mktemp(f"embeds{number}"))
                step = find_step(number)
                url, _log = running.enter_context(running_server(step.server, "--vault", str(vault), timeout=30))
                started[number] = tool_session(url, step.path)
            return started[number]

        yield server


@pytest.fixture(params=BLOCK_STEPS, ids=lambda number: f"step{number}")
def block_server(request, servers):
    return servers(request.param)


@pytest.fixture(params=EMBED_STEPS, ids=lambda number: f"step{number}")
def embed_server(request, servers):
    client = servers(request.param)
    wait_for_links(client)
    return client


def wait_for_links(client) -> None:
    """Until the server has its link graph, which embeds need: a test may be the first to ask."""
    deadline = time.monotonic() + 30
    while "being built" in str(tool_call(client, "get_backlinks", path="Host")):
        assert time.monotonic() < deadline, "the link graph was never built"
        time.sleep(0.1)


# Block ids

@pytest.mark.parametrize("block,text", [
    ("^para-1", "A paragraph that ends\nwith an id."),
    ("^item-2", "- second item"),  # an id on a list item's line: that item alone
    ("^item-3", "- third item"),  # alone on the line under the item: still that item
    ("^list-1", "- whole list one\n- whole list two"),  # alone after a blank line: the whole list
    ("^callout-1", "> [!tip] A callout\n> that spans two lines"),  # the line right after a callout
    ("^quote-1", "> A plain quote"),
    ("^table-1", "| a | b |\n|---|---|\n| 1 | 2 |"),  # a table's id stands after it
    ("^table-2", "| c | d |\n|---|---|"),  # or on the line right after it
    ("^PARA-1", "A paragraph that ends\nwith an id."),  # ids compare without case, like headings
])
def test_get_note_returns_the_block_an_id_names(block_server, block, text):
    note = data(block_server, "get_note", path="Blocks.md", heading=block)
    assert note["heading"] == block and note["text"] == text


def test_get_note_lists_the_block_ids_with_their_lines(block_server):
    blocks = data(block_server, "get_note", path="Blocks.md")["blocks"]
    assert blocks == [
        {"id": "para-1", "line": 4}, {"id": "item-2", "line": 8}, {"id": "item-3", "line": 9},
        {"id": "list-1", "line": 12}, {"id": "callout-1", "line": 17}, {"id": "quote-1", "line": 21},
        {"id": "table-1", "line": 23}, {"id": "table-2", "line": 29},
    ]


@pytest.mark.parametrize("block", ["^not-a-block", "^not-either", "^not_valid", "^not-a-heading", "^missing"])
def test_what_is_no_block_is_refused_with_the_ids_there_are(block_server, block):
    said = refusal(block_server, "get_note", path="Blocks.md", heading=block)
    assert f"has no block {block!r}" in said.replace('"', "'") and "^para-1, ^item-2" in said


def test_a_missing_heading_is_still_refused_as_a_heading(block_server):
    assert "has no heading" in refusal(block_server, "get_note", path="Blocks.md", heading="Nowhere")


def test_backlinks_name_the_block_a_link_points_at(embed_server):
    backlinks = data(embed_server, "get_backlinks", path="Blocks")["backlinks"]
    assert [(b["path"], b["line"], b.get("block")) for b in backlinks] == [
        ("Host.md", 3, "item-2"), ("Linker.md", 1, "para-1"), ("Linker.md", 1, None)]


# Embeds

def embedded(source: str, text: str) -> str:
    """The quote get_note puts where a note embeds `source`."""
    return "\n".join([f"> Embedded from {source}:"] + ["> " + line for line in text.split("\n")])


def test_a_block_a_section_and_a_note_are_quoted_in_place_naming_their_source(embed_server):
    note = whole_note(embed_server, path="Host")
    assert note["text"].startswith("Intro\n\n" + embedded("Blocks.md#^item-2", "- second item") + "\n\n")
    # An embed inside a line is put on lines of its own, as Obsidian shows it as a block.
    assert "Inline \n" + embedded("Source.md#Part two", "## Part two\nsecond part text") + "\n here." in note["text"]
    assert embedded("Source.md", "# Source\nfirst part\n## Part two\nsecond part text") in note["text"]
    assert "kept out" not in note["text"]  # an embedded note's properties are not its text


def test_an_embed_stays_inside_its_list_item_or_callout(embed_server):
    """As Obsidian shows it: the quote continues the item or the callout that holds the embed."""
    part = embedded("Source.md#Part two", "## Part two\nsecond part text")
    inside_item = part.replace("\n", "\n  ")
    assert whole_note(embed_server, path="Map")["text"] == (
        "- Bread: \n  " + inside_item + "\n"  # words before it: the quote starts the item's next line
        "- " + inside_item + "\n"  # the item's only content: the quote follows its marker
        "  " + inside_item + "\n\n"  # the item's next line, indented: still inside it
        "> [!note] Kept\n> see \n> " + part.replace("\n", "\n> ") + "\n>  there\n")


def test_files_that_are_not_notes_stay_links_without_a_word(embed_server):
    note = whole_note(embed_server, path="Host")
    assert "\n![[chart.png]]\n" in note["text"]
    assert all("chart.png" not in skipped["embed"] for skipped in note["embedsNotShown"])


def test_an_embed_of_no_note_or_no_part_stays_as_written_and_is_reported(embed_server):
    note = whole_note(embed_server, path="Host")
    assert "\n![[Missing note]]\n" in note["text"] and "\n![[Source#No such part]]\n" in note["text"]
    reasons = {skipped["embed"]: skipped["reason"] for skipped in note["embedsNotShown"]}
    assert set(reasons) == {"![[Missing note]]", "![[Source#No such part]]"}
    assert "no note" in reasons["![[Missing note]]"]
    assert "has no heading" in reasons["![[Source#No such part]]"]


def test_embeds_false_gives_the_text_as_written(embed_server):
    note = whole_note(embed_server, path="Host", embeds=False)
    assert note["text"] == NOTES["Host.md"] and "embedsNotShown" not in note


def test_a_note_shows_its_own_sections_but_not_the_one_that_embeds_itself(embed_server):
    # As Obsidian's help does ("Set up Obsidian Sync" embeds four of its own sections).
    one = embedded("Self.md#One", "## One\nfirst")
    two = embedded("Self.md#Two", "## Two\n" + one + "\n![[#Two]]")
    note = whole_note(embed_server, path="Self")
    assert note["text"] == "## One\nfirst\n\n## Two\n" + one + "\n" + two + "\n"
    assert note["embedsNotShown"] == [
        {"embed": "![[#Two]]", "in": "Self.md", "reason": "Self.md#Two is already shown around it"}]


def test_the_section_asked_for_counts_as_shown(embed_server):
    note = whole_note(embed_server, path="Self", heading="two")
    assert note["text"] == "## Two\n" + embedded("Self.md#One", "## One\nfirst") + "\n![[#Two]]"
    assert [s["reason"] for s in note["embedsNotShown"]] == ["Self.md#Two is already shown around it"]


def test_a_cycle_is_shown_once_and_stops_where_it_would_repeat(embed_server):
    note = whole_note(embed_server, path="Cycle A")
    assert note["text"] == "A text\n\n" + embedded("Cycle B.md", "B text\n\n![[Cycle A]]") + "\n"
    assert note["embedsNotShown"] == [{"embed": "![[Cycle A]]", "in": "Cycle B.md",
                                       "reason": "Cycle A.md is already shown around it"}]


def test_embeds_are_shown_three_levels_deep_and_no_deeper(embed_server):
    note = whole_note(embed_server, path="Deep 1")
    for level in (2, 3, 4):
        assert "> " * (level - 1) + f"level {level}" in note["text"]
    assert "level 5" not in note["text"] and "> > > ![[Deep 5]]" in note["text"]
    assert [(s["embed"], s["in"]) for s in note["embedsNotShown"]] == [("![[Deep 5]]", "Deep 4.md")]


def test_an_embed_is_read_through_the_vault_guard_and_never_from_outside(embed_server):
    note = whole_note(embed_server, path="Escape")
    assert SECRET not in note["text"] and note["text"] == NOTES["Escape.md"]
    reasons = {skipped["embed"]: skipped["reason"] for skipped in note["embedsNotShown"]}
    assert list(reasons) == ["![[Linked out]]", "![[../outside/secret]]", "![[/../outside/secret]]", "![[Huge]]"]
    assert "larger than 1 MiB" in reasons["![[Huge]]"]  # the vault's own refusal, passed on


def whole_note(server, **arguments) -> dict:
    """get_note's answer with its whole text: from step 10 a long text comes in parts."""
    note = data(server, "get_note", **arguments)
    offset = note.pop("nextOffset", None)
    while offset is not None:
        more = data(server, "get_note", offset=offset, **arguments)
        note["text"] += more["text"]
        offset = more.get("nextOffset")
    return note


def test_the_answer_keeps_to_the_size_of_one_note_read(embed_server):
    note = whole_note(embed_server, path="Twice big")
    assert len(note["text"].encode("utf-8")) <= MAX_NOTE_BYTES
    assert note["text"].count("> Embedded from Big.md:") == 1 and note["text"].endswith("\n![[Big]]\n")
    assert [s["embed"] for s in note["embedsNotShown"]] == ["![[Big]]"]
    assert "1 MiB" in note["embedsNotShown"][0]["reason"]


def test_the_size_kept_to_counts_bytes_of_a_label_in_another_alphabet(embed_server):
    note = whole_note(embed_server, path="Nearly full")
    assert 0 < note["text"].count("> Embedded from Ü") < 400  # room for some, not all
    assert len(note["text"].encode("utf-8")) <= MAX_NOTE_BYTES


def test_an_answer_looks_at_a_bounded_number_of_embeds_and_says_where_it_stopped(embed_server):
    note = whole_note(embed_server, path="Broken many")
    assert note["text"] == NOTES["Broken many.md"]
    not_shown = note["embedsNotShown"]
    assert len(not_shown) == MAX_EMBEDS + 1 and f"only {MAX_EMBEDS} embeds" in not_shown[-1]["reason"]


def test_a_wide_fan_out_stops_at_the_same_bound(embed_server):
    note = whole_note(embed_server, path="Wide 1")
    shown = note["text"].count("Embedded from")
    assert 0 < shown <= MAX_EMBEDS and "> > > five" not in note["text"]  # level 4 is past MAX_DEPTH
    assert shown + len(note["embedsNotShown"]) <= MAX_EMBEDS + 1


@pytest.mark.parametrize("number", [5, 7])
def test_before_step_8_embeds_stay_as_written(servers, number):
    assert data(servers(number), "get_note", path="Host")["text"] == NOTES["Host.md"]


@pytest.mark.parametrize("step", distinct_copies("tools.py", since=8), ids=lambda step: f"step{step}")
def test_while_the_link_graph_is_built_a_note_is_read_and_its_embeds_wait(step, tmp_path, monkeypatch):
    """get_note needs no graph to read a note: only the embeds wait, each listed with why."""
    from test_index_in_every_copy import WordEmbedder, context, modules_of, write_vault

    modules = modules_of(step)
    notes = {"Host.md": "# Host\n\nBefore ![[Guest]] and ![[Guest#Part]] after. ![[chart.png]]\n",
             "Guest.md": "# Guest\n\nBorrowed.\n", "Many.md": "![[Guest]]\n" * (MAX_EMBEDS + 5)}
    vault = modules["Vault"](write_vault(tmp_path / "vault", notes))
    index = modules["vault_index"].VaultIndex(vault, WordEmbedder(), tmp_path / "index")  # not started: no graph
    monkeypatch.setattr(modules["vault_index"], "WAIT_FOR_FIRST_BUILD", 0.1)
    tools = modules["tools"]
    result = tools.call_tool(tools.TOOLS["get_note"], {"path": "Host.md"}, context(modules, index))
    assert result["isError"] is False, result
    answer = result["structuredContent"]
    assert "Before ![[Guest]] and ![[Guest#Part]] after." in answer["text"] and "Borrowed" not in answer["text"]
    reason = "The link graph is being built; try again in a moment"
    assert answer["embedsNotShown"] == [{"embed": "![[Guest]]", "in": "Host.md", "reason": reason},
                                        {"embed": "![[Guest#Part]]", "in": "Host.md", "reason": reason}]  # no chart
    many = tools.call_tool(tools.TOOLS["get_note"], {"path": "Many.md"}, context(modules, index))["structuredContent"]
    assert len(many["embedsNotShown"]) == MAX_EMBEDS + 1 and "only 1000" in many["embedsNotShown"][-1]["reason"]
