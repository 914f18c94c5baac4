"""Unit tests of step 8's server-independent modules: links.py (the link graph),
inbox.py (create_note, the one write) and related.py (related notes).

Every test works on real files: the sample vault (read only) or a temporary vault made
for the test. The cases follow Obsidian's help (obsidianmd/obsidian-help, en/:
Internal links, Aliases, Embed files, Accepted file formats) and Microsoft's rules for
Windows file names. The property tests feed seeded random input: a failure names its
seed and can be replayed.
"""
import datetime
import errno
import inspect
import os
import random
import re
import subprocess
import sys
import textwrap
import threading
import time
import unicodedata
from pathlib import Path

import pytest

from helpers import distinct_copies, step_modules

from manifest import SAMPLE_VAULT, find_step

ROOT = Path(__file__).resolve().parent.parent
STEP8 = ROOT / "steps" / "08-links-and-inbox"
STEP7 = ROOT / "steps" / "07-vector-index"




# Step 8's own folder first, then step 7's, which it builds on (until step 8 holds copies of all).
with step_modules(STEP8, STEP7):
    import inbox
    from hash_embedder import HashEmbedder
    from inbox import InboxError, NoteExists, create_note, safe_file_name
    from links import ATTACHMENT, NOTE, UNRESOLVED, LinkGraph
    from markdown import find_links
    from notes import parse_note
    from related import related_notes
    from vault import Vault, VaultError
    from vault_index import VaultIndex

TODAY = datetime.date(2026, 4, 5)


def make_vault(root: Path, notes: dict[str, str]) -> Vault:
    """A vault at root holding these notes (path -> text)."""
    root.mkdir(parents=True, exist_ok=True)
    for path, text in notes.items():
        write(root, path, text)
    return Vault(root)


def write(root: Path, path: str, text: str) -> None:
    file = root / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text, encoding="utf-8")


def graph_of(tmp_path: Path, notes: dict[str, str]) -> LinkGraph:
    return LinkGraph.build(make_vault(tmp_path / "vault", notes))


def target_of(graph: LinkGraph, source: str, written: str):
    """What the first link whose target is `written`, in `source`, resolves to."""
    for link in graph.outgoing(source):
        if link.link.target == written:
            return link.target
    raise AssertionError(f"{source} has no link to {written!r}")


def backlink_sources(graph: LinkGraph, path: str) -> list[str]:
    return sorted({backlink.source for backlink in graph.backlinks(path)})


def test_these_tests_run_step_8_modules_and_step_7_for_the_rest():
    for imported in (create_note, LinkGraph.build, related_notes, Vault.read_note, find_links, parse_note,
                     VaultIndex.search):  # functions know their file; a class asks sys.modules
        file = Path(inspect.getfile(imported))
        first = next(folder for folder in (STEP8, STEP7) if (folder / file.name).is_file())
        assert file.parent == first, imported


@pytest.fixture(scope="module")
def sample():
    return LinkGraph.build(Vault(SAMPLE_VAULT))


# ---------------------------------------------------------------------------
# Resolution on the sample vault: two notes named Troubleshooting, aliases,
# Markdown links, property links, attachments.

def test_a_bare_name_shared_by_two_notes_means_the_one_in_the_linking_notes_folder(sample):
    assert target_of(sample, "Ferments/Sauerkraut.md", "Troubleshooting") == "Ferments/Troubleshooting.md"
    assert target_of(sample, "Ferments/Kimchi.md", "Troubleshooting") == "Ferments/Troubleshooting.md"
    assert target_of(sample, "Bread/Basic country loaf.md", "Troubleshooting") == "Bread/Troubleshooting.md"
    assert target_of(sample, "Bread/Rye bread.md", "Troubleshooting") == "Bread/Troubleshooting.md"


def test_a_folder_path_names_its_note_whatever_folder_links(sample):
    assert target_of(sample, "Ferments/Troubleshooting.md", "Bread/Troubleshooting") == "Bread/Troubleshooting.md"
    assert target_of(sample, "Ferments/Kombucha.md", "Ferments/Troubleshooting") == "Ferments/Troubleshooting.md"


def test_backlinks_of_two_notes_with_one_name_are_kept_apart(sample):
    bread = backlink_sources(sample, "Bread/Troubleshooting.md")
    ferments = backlink_sources(sample, "Ferments/Troubleshooting.md")
    assert "Ferments/Sauerkraut.md" in ferments and "Ferments/Sauerkraut.md" not in bread
    assert "Bread/Bulk fermentation.md" in bread and "Bread/Bulk fermentation.md" not in ferments
    assert "Ferments/Troubleshooting.md" in bread  # [[Bread/Troubleshooting]], across folders


def test_case_and_md_do_not_matter(sample):
    assert target_of(sample, "Journal/2026-03-21 Bake log.md", "sourdough Starter") == "Bread/Sourdough starter.md"
    assert target_of(sample, "Inbox/Rice koji quick capture.md", "koji") == "Ferments/Koji.md"
    assert target_of(sample, "Home.md", "Glossary") == "Glossary.md"  # written [[Glossary.md]]


def test_markdown_links_with_percent_encoding_and_angle_brackets(sample):
    assert target_of(sample, "Bread/Focaccia.md", "Bulk fermentation") == "Bread/Bulk fermentation.md"
    assert target_of(sample, "Home.md", "Bread/Basic country loaf") == "Bread/Basic country loaf.md"
    assert target_of(sample, "Home.md", "Kitchen/Dutch oven (cast iron)") == "Kitchen/Dutch oven (cast iron).md"


def test_a_link_in_a_property_is_a_backlink_with_its_property_as_context(sample):
    from_properties = [b for b in sample.backlinks("Ferments/Koji.md") if b.link.from_property]
    assert [(b.source, b.line, b.context) for b in from_properties] == [
        ("Ferments/Miso.md", 4, "related: [[Koji]]")
    ]


def test_headings_blocks_and_embeds_point_at_their_note(sample):
    links = {(l.link.target, l.link.subpath): l for l in sample.outgoing("Bread/Bulk fermentation.md")}
    embed = links[("Sourdough starter", "^peak-signs")]
    assert (embed.kind, embed.target, embed.link.embed) == (NOTE, "Bread/Sourdough starter.md", True)
    sourdough = sample.backlinks("Bread/Sourdough starter.md")
    assert any(b.source == "Bread/Bulk fermentation.md" and b.link.embed for b in sourdough)
    chain = [l for l in sample.outgoing("Journal/2026-03-21 Bake log.md") if l.link.subpath == "Day 2#Timing"]
    assert chain[0].target == "Bread/Basic country loaf.md"


def test_a_heading_link_without_a_note_is_the_same_note_and_no_backlink(sample):
    own = [l for l in sample.outgoing("Bread/Basic country loaf.md") if l.link.target == ""]
    assert [(l.kind, l.target, l.via, l.link.subpath) for l in own] == [
        (NOTE, "Bread/Basic country loaf.md", "self", "Day 1")
    ]
    assert "Bread/Basic country loaf.md" not in backlink_sources(sample, "Bread/Basic country loaf.md")


def test_a_note_linking_to_itself_by_name_is_not_its_own_backlink(tmp_path):
    graph = graph_of(tmp_path, {"Own.md": "[[Own]] [[Own#Part]] ![[own]]", "Other.md": "[[Own]]"})
    assert {l.target for l in graph.outgoing("Own.md")} == {"Own.md"}
    assert backlink_sources(graph, "Own.md") == ["Other.md"]


def test_links_to_files_that_are_not_notes_are_attachments(sample):
    kinds = {l.link.target: l.kind for l in sample.outgoing("Bread/Baker's percentages.md")}
    assert kinds["hydration-table.csv"] == ATTACHMENT
    svg = [l for l in sample.outgoing("Bread/Troubleshooting.md") if l.link.target == "crumb-chart.svg"]
    assert (svg[0].kind, svg[0].target, svg[0].link.embed) == (ATTACHMENT, None, True)


def test_the_sample_vault_has_exactly_two_unresolved_links(sample):
    # [[not a link]] and [[Not A Link]] sit in code; attachments are not unresolved.
    found = [(l.source, l.link.target, l.link.line) for l in sample.unresolved()]
    assert found == [("Inbox/Try tangzhong.md", "Tangzhong", 12), ("Inbox/Try tangzhong.md", "Pizza dough", 12)]
    assert sample.unresolved("Bread/Baker's percentages.md") == []


def test_a_bare_alias_resolves_to_nothing_but_names_its_note_as_a_hint(sample):
    # The sample writes [[Sourdough starter|my starter]] (Obsidian's way); Obsidian leaves a bare [[Starter]] unresolved.
    assert sample.resolve("Starter", "Home.md") == (None, "")
    assert sample.alias_of("Starter", "Home.md") == "Bread/Sourdough starter.md"
    assert sample.alias_of("mother CULTURE", "Journal/x.md") == "Bread/Sourdough starter.md"
    assert sample.alias_of("Napa cabbage kimchi", "Home.md") == "Ferments/Kimchi.md"
    assert sample.alias_of("Sourdough starter", "Home.md") is None  # a name, not an alias


# ---------------------------------------------------------------------------
# Resolution rules, one vault per rule.

def test_the_shortest_path_wins_when_no_note_shares_the_linking_folder(tmp_path):
    graph = graph_of(tmp_path, {
        "a/b/c/Note.md": "", "x/Note.md": "", "Home.md": "[[Note]]", "q/Other.md": "[[Note]]",
    })
    assert target_of(graph, "Home.md", "Note") == "x/Note.md"
    assert target_of(graph, "q/Other.md", "Note") == "x/Note.md"


def test_equally_short_paths_are_decided_alphabetically_not_by_reading_order(tmp_path):
    graph = graph_of(tmp_path, {"bb/Note.md": "", "aa/Note.md": "", "Home.md": "[[Note]]"})
    assert target_of(graph, "Home.md", "Note") == "aa/Note.md"


def test_the_exact_vault_path_comes_before_the_same_folder(tmp_path):
    graph = graph_of(tmp_path, {"Note.md": "", "F/Note.md": "", "F/x.md": "[[Note]] [[F/Note]]"})
    assert target_of(graph, "F/x.md", "Note") == "Note.md"
    assert target_of(graph, "F/x.md", "F/Note") == "F/Note.md"


def test_a_partial_path_matches_the_end_of_a_longer_one(tmp_path):
    graph = graph_of(tmp_path, {"Archive/Bread/Old.md": "", "Other/Old.md": "", "Home.md": "[[Bread/Old]] [[ead/Old]]"})
    assert target_of(graph, "Home.md", "Bread/Old") == "Archive/Bread/Old.md"
    assert target_of(graph, "Home.md", "ead/Old") is None  # whole segments only


def test_case_insensitive_and_unicode_spellings_match(tmp_path):
    graph = graph_of(tmp_path, {
        "Ferments/Crème fraîche.md": "",
        "Home.md": "[[CRÈME FRAÎCHE]] [[ferments/crème fraîche]] [[" + unicodedata.normalize("NFD", "Crème fraîche")
                   + "]]",
    })
    assert {l.target for l in graph.outgoing("Home.md")} == {"Ferments/Crème fraîche.md"}


def test_md_is_optional_in_every_form(tmp_path):
    graph = graph_of(tmp_path, {
        "Bread/Focaccia.md": "",
        "Home.md": "[[Focaccia.md]] [[Bread/Focaccia.MD]] [a](Bread/Focaccia) [b](Focaccia.md)",
    })
    assert [l.target for l in graph.outgoing("Home.md")] == ["Bread/Focaccia.md"] * 4


def test_relative_links_start_at_the_linking_notes_folder(tmp_path):
    graph = graph_of(tmp_path, {
        "Bread/Focaccia.md": "", "Focaccia.md": "",
        "Journal/Log.md": "[[../Bread/Focaccia]] [[./Focaccia]] [[../../Focaccia]] [[/Focaccia]]",
    })
    found = {l.link.target: l.target for l in graph.outgoing("Journal/Log.md")}
    assert found == {"../Bread/Focaccia": "Bread/Focaccia.md", "./Focaccia": None,
                     "../../Focaccia": None, "/Focaccia": "Focaccia.md"}


def test_a_relative_link_names_one_path_and_never_falls_back_to_the_name(tmp_path):
    graph = graph_of(tmp_path, {
        "Bread/Focaccia.md": "",
        "Journal/Log.md": "[[../Focaccia]] [[./Focaccia]] [[Focaccia]]",
        "Home.md": "[[./Focaccia]] [[./Bread/Focaccia]]",
    })
    found = {l.link.target: l.target for l in graph.outgoing("Journal/Log.md")}
    assert found == {"../Focaccia": None, "./Focaccia": None, "Focaccia": "Bread/Focaccia.md"}  # only the bare name
    assert [l.target for l in graph.outgoing("Home.md")] == [None, "Bread/Focaccia.md"]


def test_a_bare_alias_is_unresolved_and_two_notes_with_it_follow_the_folder_rule_for_the_hint(tmp_path):
    graph = graph_of(tmp_path, {
        "Kitchen/Pot.md": "---\naliases: [Dutch oven]\n---\n",
        "Bread/Cast iron.md": "---\naliases:\n  - Dutch oven\n  - Starter\n---\n",
        "Other/Starter.md": "",
        "Bread/Loaf.md": "[[Dutch oven]] [[Starter]]",
        "Home.md": "[[Dutch oven]]",
    })
    assert graph.resolve("Starter", "Bread/Loaf.md") == ("Other/Starter.md", "name")
    assert graph.resolve("Dutch oven", "Bread/Loaf.md") == (None, "")
    hints = {(l.source, l.link.target): l.alias_of for l in graph.unresolved()}
    assert hints == {("Bread/Loaf.md", "Dutch oven"): "Bread/Cast iron.md",
                     ("Home.md", "Dutch oven"): "Kitchen/Pot.md"}  # the shorter path
    assert backlink_sources(graph, "Kitchen/Pot.md") == [] and backlink_sources(graph, "Bread/Cast iron.md") == []


def test_subpaths_do_not_change_the_target(tmp_path):
    graph = graph_of(tmp_path, {
        "Note.md": "# H1\n## H2\ntext ^blk\n",
        "Home.md": "[[Note#H1]] [[Note#H1#H2]] [[Note#^blk|see]] ![[Note#^blk]] [x](Note.md#H1)",
    })
    links = graph.outgoing("Home.md")
    assert [l.target for l in links] == ["Note.md"] * 5
    assert [l.link.subpath for l in links] == ["H1", "H1#H2", "^blk", "^blk", "H1"]
    assert len(graph.backlinks("Note.md")) == 5


def test_attachments_unresolved_links_and_external_urls(tmp_path):
    graph = graph_of(tmp_path, {
        "Home.md": (
            "![[photo.PNG|100x145]] ![[doc.pdf#page=3]] [[Fermentation map.canvas]] ![](img/x.jpg)\n"
            "[[Nowhere]] [[Release v1.2]] [[data.xyz]] [site](https://example.com/a.md) [m](mailto:a@b.c)"
        ),
    })
    kinds = [(l.link.target, l.kind) for l in graph.outgoing("Home.md")]
    assert kinds == [
        ("photo.PNG", ATTACHMENT), ("doc.pdf", ATTACHMENT), ("Fermentation map.canvas", ATTACHMENT),
        ("img/x.jpg", ATTACHMENT), ("Nowhere", UNRESOLVED), ("Release v1.2", UNRESOLVED), ("data.xyz", UNRESOLVED),
    ]
    assert [l.link.target for l in graph.unresolved()] == ["Nowhere", "Release v1.2", "data.xyz"]


def test_a_note_whose_name_looks_like_a_file_is_still_a_note(tmp_path):
    graph = graph_of(tmp_path, {"Figure 1.png.md": "", "Home.md": "[[Figure 1.png]]"})
    assert graph.outgoing("Home.md")[0].kind == NOTE


def test_unknown_notes_are_refused_with_a_vault_error(tmp_path):
    graph = graph_of(tmp_path, {"Home.md": ""})
    for query in (graph.outgoing, graph.backlinks, graph.unresolved):
        with pytest.raises(VaultError, match="No note"):
            query("Missing.md")


# ---------------------------------------------------------------------------
# Backlinks: line and context.

def test_a_backlink_has_its_line_and_the_text_around_the_link(tmp_path):
    long_line = "word " * 100 + "see [[Target|this]] for more " + "tail " * 100
    graph = graph_of(tmp_path, {
        "Target.md": "",
        "Source.md": "---\ntags: [a]\n---\n# Title\n\nshort line with [[Target]]\n\n" + long_line + "\n",
    })
    short, long = graph.backlinks("Target.md")
    assert (short.source, short.line, short.context) == ("Source.md", 6, "short line with [[Target]]")
    assert (long.source, long.line) == ("Source.md", 8)
    assert "[[Target|this]]" in long.context
    assert len(long.context) <= 202 and long.context.startswith("…") and long.context.endswith("…")
    source, line, context, link = short  # a plain tuple too
    assert link.target == "Target"


def test_backlinks_come_sorted_by_source_and_line(sample):
    backlinks = sample.backlinks("Ferments/Koji.md")
    assert backlinks == sorted(backlinks, key=lambda b: (b.source, b.line))
    assert len({(b.source, b.line, b.link.target, b.link.display) for b in backlinks}) == len(backlinks)


# ---------------------------------------------------------------------------
# Keeping the graph right while notes change.

def test_a_new_note_in_the_same_folder_takes_over_bare_links(tmp_path):
    root = tmp_path / "vault"
    vault = make_vault(root, {"Bread/Troubleshooting.md": "", "Ferments/Kimchi.md": "See [[Troubleshooting]]."})
    graph = LinkGraph.build(vault)
    assert target_of(graph, "Ferments/Kimchi.md", "Troubleshooting") == "Bread/Troubleshooting.md"

    write(root, "Ferments/Troubleshooting.md", "# Ferments")
    graph.update_note("Ferments/Troubleshooting.md")
    assert target_of(graph, "Ferments/Kimchi.md", "Troubleshooting") == "Ferments/Troubleshooting.md"
    assert backlink_sources(graph, "Ferments/Troubleshooting.md") == ["Ferments/Kimchi.md"]
    assert backlink_sources(graph, "Bread/Troubleshooting.md") == []

    (root / "Ferments/Troubleshooting.md").unlink()
    graph.remove_note("Ferments/Troubleshooting.md")
    assert target_of(graph, "Ferments/Kimchi.md", "Troubleshooting") == "Bread/Troubleshooting.md"


def test_renaming_a_note_leaves_links_to_the_old_name_unresolved(tmp_path):
    root = tmp_path / "vault"
    graph = LinkGraph.build(make_vault(root, {"Bread/Focaccia.md": "", "Home.md": "[[Focaccia]]"}))
    os.rename(root / "Bread/Focaccia.md", root / "Bread/Focaccia al rosmarino.md")
    graph.remove_note("Bread/Focaccia.md")
    graph.update_note("Bread/Focaccia al rosmarino.md")
    assert graph.backlinks("Bread/Focaccia al rosmarino.md") == []
    assert [l.link.target for l in graph.unresolved()] == ["Focaccia"]


def test_editing_links_and_aliases_changes_backlinks(tmp_path):
    root = tmp_path / "vault"
    graph = LinkGraph.build(make_vault(root, {"Pot.md": "", "Home.md": "[[Pot]] [[Dutch oven]]"}))
    assert [l.link.target for l in graph.unresolved()] == ["Dutch oven"]
    assert graph.unresolved()[0].alias_of is None
    write(root, "Pot.md", "---\naliases: [Dutch oven]\n---\n")
    graph.update_note("Pot.md")
    assert [(l.link.target, l.alias_of) for l in graph.unresolved()] == [("Dutch oven", "Pot.md")]
    assert len(graph.backlinks("Pot.md")) == 1
    write(root, "Home.md", "no links now")
    graph.update_note("Home.md")
    assert graph.backlinks("Pot.md") == []


def test_a_note_too_large_to_read_keeps_its_name_so_links_to_it_resolve(tmp_path):
    graph = graph_of(tmp_path, {"Huge.md": "[[Home]] " + "x" * (1024 * 1024), "Home.md": "[[Huge]]"})
    assert "Huge.md" in graph.note_paths()
    assert target_of(graph, "Home.md", "Huge") == "Huge.md"
    assert graph.outgoing("Huge.md") == []  # its own links are unknown


def test_update_note_of_a_deleted_note_removes_it(tmp_path):
    root = tmp_path / "vault"
    graph = LinkGraph.build(make_vault(root, {"A.md": "[[B]]", "B.md": ""}))
    (root / "B.md").unlink()
    graph.update_note("B.md")
    assert "B.md" not in graph and [l.link.target for l in graph.unresolved()] == ["B"]


def test_an_update_reads_one_note(tmp_path, monkeypatch):
    root = tmp_path / "vault"
    vault = make_vault(root, {f"F{n % 5}/N{n}.md": f"[[N{n + 1}]] [[N{n - 1}]]" for n in range(50)})
    graph = LinkGraph.build(vault)
    reads = []
    real_read = vault.read_note
    monkeypatch.setattr(vault, "read_note", lambda path: reads.append(path) or real_read(path))
    write(root, "F3/N3.md", "[[N40]]")
    graph.update_note("F3/N3.md")
    assert reads == ["F3/N3.md"]
    assert "F3/N3.md" in backlink_sources(graph, "F0/N40.md")


def snapshot(graph: LinkGraph) -> dict:
    """Everything the graph answers, in plain data, to compare two graphs."""
    return {
        path: (
            [(l.link.target, l.link.line, l.kind, l.target, l.via) for l in graph.outgoing(path)],
            [(b.source, b.line, b.context) for b in graph.backlinks(path)],
        )
        for path in graph.note_paths()
    }


@pytest.mark.parametrize("seed", range(6))
def test_after_any_changes_the_graph_answers_as_a_fresh_build_would(tmp_path, seed):
    """Random creates, edits, deletes and renames, each reported through update_note or
    remove_note, must leave the graph answering exactly as one built from scratch."""
    rng = random.Random(seed)
    names, folders = ["Note", "Other", "Third", "note"], ["", "x/", "y/", "x/z/"]
    root = tmp_path / "vault"
    vault = make_vault(root, {})
    graph = LinkGraph.build(vault)

    def random_text() -> str:
        front = f"---\naliases: [{rng.choice(names)} alias]\n---\n" if rng.random() < 0.3 else ""
        links = [f"[[{rng.choice(folders)}{rng.choice(names)}]]" if rng.random() < 0.3
                 else f"[[{rng.choice(names)}{rng.choice(['', ' alias', '#H'])}]]" for _ in range(rng.randint(0, 4))]
        return front + "\n".join(links) + "\n"

    for _ in range(60):
        existing = vault.list_notes()
        action = rng.choice(["write", "write", "delete", "rename"]) if existing else "write"
        if action == "write":
            path = f"{rng.choice(folders)}{rng.choice(names)}.md"
            if any(p.lower() == path.lower() and p != path for p in existing):
                continue  # two spellings of one name: a case-insensitive disk would merge them
            write(root, path, random_text())
            graph.update_note(path)
        elif action == "delete":
            path = rng.choice(existing)
            (root / path).unlink()
            graph.remove_note(path)
        else:
            old, new = rng.choice(existing), f"{rng.choice(folders)}{rng.choice(names)}.md"
            if any(p.lower() == new.lower() for p in existing):
                continue
            (root / new).parent.mkdir(parents=True, exist_ok=True)
            os.rename(root / old, root / new)
            graph.remove_note(old)
            graph.update_note(new)
        assert snapshot(graph) == snapshot(LinkGraph.build(vault)), f"seed {seed}"


WORDS = ["bread", "dough", "salt", "koji", "rice", "the", "crumb", "starter", "ferment", "warm", "day", "jar"]


def generated_vault(root: Path, count: int = 2000, seed: int = 8) -> Vault:
    """A vault of `count` notes of about 3 KB in 280 folders: properties, headings, 12 links each
    (bare names, paths, headings, embeds, attachments, some to notes that do not exist)."""
    rng = random.Random(seed)
    paths = [f"Area {n % 40}/Topic {n % 7}/Note {n}.md" for n in range(count)]
    for n, path in enumerate(paths):
        links = []
        for _ in range(12):
            other = rng.randrange(count + 100)  # some names no note has
            kind = rng.random()
            if kind < 0.6:
                links.append(f"[[Note {other}]]")
            elif kind < 0.75:
                links.append(f"[[Note {other}#Section {rng.randrange(3)}|see here]]")
            elif kind < 0.85 and other < count:
                links.append(f"[text]({paths[other].replace(' ', '%20')})")
            elif kind < 0.95:
                links.append(f"![[Note {other}]]")
            else:
                links.append(f"![[image {other}.png]]")
        body = "\n\n".join(
            f"## Section {s}\n\n" + " ".join(rng.choice(WORDS) for _ in range(80))
            + " " + " ".join(links[s * 3 : s * 3 + 3]) + "\n\n" + " ".join(rng.choice(WORDS) for _ in range(30))
            for s in range(4)
        )
        write(root, path, f"---\ntags: [t{n % 9}]\naliases: [Alias {n}]\n---\n# Note {n}\n\n{body}\n")
    return Vault(root)


@pytest.mark.slow
def test_building_the_graph_of_a_2000_note_vault(tmp_path, capsys):
    """Run with -s to see the timings: python3 -m pytest tests/test_links_and_inbox.py -k 2000_note -s"""
    vault = generated_vault(tmp_path / "vault")
    started = time.perf_counter()
    graph = LinkGraph.build(vault)
    built = time.perf_counter() - started
    started = time.perf_counter()
    total = sum(len(graph.backlinks(path)) for path in graph.note_paths())
    every_backlink = time.perf_counter() - started
    started = time.perf_counter()
    unresolved = len(graph.unresolved())
    all_unresolved = time.perf_counter() - started
    started = time.perf_counter()
    graph.update_note("Area 1/Topic 1/Note 1.md")
    update = time.perf_counter() - started
    with capsys.disabled():
        print(f"\n2000-note vault: build {built:.2f} s; backlinks of every note {every_backlink:.2f} s "
              f"({total} backlinks); unresolved() {all_unresolved * 1000:.0f} ms ({unresolved}); "
              f"one update_note {update * 1000:.1f} ms")
    assert len(graph) == 2000 and total > 20000 and unresolved > 0
    assert built < 60  # a generous bound for slow machines; typically a few seconds


# ---------------------------------------------------------------------------
# inbox.py: titles become safe file names.

RESERVED_DEVICES = ["CON", "PRN", "AUX", "NUL"] + [f"{d}{n}" for d in ("COM", "LPT") for n in "0123456789¹²³"]


def windows_reserves(file_name: str) -> bool:
    """Microsoft's rule, written here independently of inbox.py: the part before the first
    dot, trailing spaces ignored, is a device name, in any case."""
    device = file_name.split(".")[0].rstrip(" ").upper()
    return device in RESERVED_DEVICES


FORBIDDEN_CHARACTERS = set('\\/:*?"<>|#^[]') | {chr(n) for n in range(32)} | {chr(n) for n in range(127, 160)}
BIDI_CONTROLS = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c\ufeff")


def shows_nothing(char: str) -> bool:
    """Cf, a filler or selector of Default_Ignorable_Code_Point, a tag character, the braille blank."""
    return (unicodedata.category(char) == "Cf" or char in "\u034f\u115f\u1160\u17b4\u17b5\u3164\uffa0\u2800"
            or "\u180b" <= char <= "\u180f" or "\ufe00" <= char <= "\ufe0f" or "\U000e0000" <= char <= "\U000e0fff")


def assert_safe(name: str) -> None:
    """Every promise safe_file_name makes, checked on its answer."""
    assert name and name not in (".", "..")
    assert len(name.encode("utf-8")) <= inbox.MAX_NAME_BYTES
    assert unicodedata.is_normalized("NFC", name)
    bad = set(name) & (FORBIDDEN_CHARACTERS | BIDI_CONTROLS)
    assert not bad, f"{name!r} holds {bad}"
    assert not [char for char in name if shows_nothing(char)], name
    assert not any("\ud800" <= char <= "\udfff" for char in name)
    assert not name.startswith((".", " ")) and not name.endswith((".", " "))
    assert "%%" not in name and "  " not in name
    assert not windows_reserves(name + ".md"), name


@pytest.mark.parametrize("device", RESERVED_DEVICES)
def test_every_windows_device_name_is_made_safe_in_any_case_and_with_any_extension(device):
    for spelling in {device, device.lower(), device.capitalize(), device[0].lower() + device[1:]}:
        for ending in ("", ".txt", ".md", ".tar.gz", " .txt", "   ", ".", " - notes"):
            title = spelling + ending
            name = safe_file_name(title)
            assert_safe(name)
            assert name.lower().startswith(spelling.lower()), (title, name)


@pytest.mark.parametrize("title,expected", [
    ("Shopping list", "Shopping list"),
    ("Q&A: what? #tag [[x]] | y^z", "Q&A what tag x y z"),
    ("../../etc/passwd", "etc passwd"),
    ("..\\..\\windows\\system32", "windows system32"),
    ("/etc/passwd", "etc passwd"),
    ("C:\\x", "C x"),
    ("C:x", "C x"),
    ("\\\\server\\share\\x", "server share x"),
    (".hidden", "hidden"),
    ("...and then", "and then"),
    ("  trailing dots...  ", "trailing dots"),
    ("tab\there\nnewline\r\x0bvt\x7fdel\x85nel", "tab here newline vt del nel"),
    ("a\x00b", "a b"),
    ("no\u00a0break\u2003em space", "no break em space"),
    ("100%% sure", "100% sure"),
    ("Idea.md", "Idea"),
    ("Idea.MD  ", "Idea"),
    ("🍞 Bread 🥖", "🍞 Bread 🥖"),
    ("שלום עולם", "שלום עולם"),  # right-to-left text needs no control characters
    ("Invoice\u202egpj.exe", "Invoicegpj.exe"),  # U+202E would show "Invoiceexe.jpg"
    ("\u2066isolate\u2069 \u200emark\u200f", "isolate mark"),
    ("\ufeffBOM title", "BOM title"),
    ("lone \ud800 surrogate", "lone surrogate"),
    ("e\u0301te\u0301", "été"),  # NFC
])
def test_hostile_titles_become_safe_names(title, expected):
    assert safe_file_name(title) == expected
    assert_safe(expected)


@pytest.mark.parametrize("title", ["", "   ", ".", "..", "...", ". . .", "\x00", "\x00\x01\x1f", "???", "[[]]",
                                   "#^|", "\u202e", "/", "\\", "...  ...", ":*?<>"])
def test_a_title_that_leaves_nothing_is_refused_clearly(title):
    with pytest.raises(InboxError, match="leaves nothing for a file name"):
        safe_file_name(title)


# Titles that show as nothing: format characters, fillers, joiners, selectors, the braille
# blank, and tag characters (U+E0041 is a tag "A"), alone, repeated and mixed with spaces.
INVISIBLE_TITLES = ["\u200c", "\u3164", "\u034f", "\u180e", "\u2800", "\ufe0f", "\U000e0041\U000e0042",
                    "\U000e0001", "\u115f\u1160", "\uffa0", "\u200b\u200d\u2060", "\u00ad", "\U000e0100",
                    "\u3164 \u2800 \u200c", "\u2800" * 50, ". \u3164 ."]


@pytest.mark.parametrize("title", INVISIBLE_TITLES)
def test_a_title_of_invisible_characters_is_refused(tmp_path, title):
    with pytest.raises(InboxError, match="show nothing"):
        create_note(make_vault(tmp_path / "vault", {}), "Inbox", title, "text")
    assert inbox_entries(tmp_path / "vault") == []


@pytest.mark.parametrize("title,expected", [
    ("Idea\u200d", "Idea"), ("I\u200bdea", "Idea"), ("\u3164Idea\u2800", "Idea"),
    ("Idea\U000e0041", "Idea"), ("Id\u034fea\ufe0f", "Idea"), ("braille\u2800blank", "braille blank"),
    ("\u2764\ufe0f Bread", "\u2764 Bread"), ("\U0001f469\u200d\U0001f373 Cook", "\U0001f469\U0001f373 Cook"),
])
def test_invisible_characters_are_removed_from_a_title(title, expected):
    assert safe_file_name(title) == expected
    assert_safe(expected)


def test_an_invisible_character_does_not_make_a_second_note_of_one_name(tmp_path):
    root = tmp_path / "vault"
    vault = make_vault(root, {"Inbox/Idea.md": "the original"})
    for title in ("Idea\u200d", "\u200cIDEA", "Idea\u3164", "Idea\U000e0020", "I\u00addea"):
        with pytest.raises(NoteExists, match="Inbox/Idea.md"):
            create_note(vault, "Inbox", title, "new text")
    assert inbox_entries(root) == ["Idea.md"]


@pytest.mark.parametrize("title", [None, 42, ["a"], b"bytes"])
def test_a_title_that_is_not_text_is_refused(title):
    with pytest.raises(InboxError, match="must be a string"):
        safe_file_name(title)


@pytest.mark.parametrize("unit", ["é", "日", "😀", "a", "👍🏽", "🇫🇷", "e\u0301\u0323"])
def test_a_1000_character_title_is_cut_to_the_byte_limit_between_characters(unit):
    title = unit * (1000 // len(unit))
    name = safe_file_name(title)
    assert_safe(name)
    assert len(name.encode("utf-8")) > inbox.MAX_NAME_BYTES - 12  # as much as fits, not much less
    whole = unicodedata.normalize("NFC", unit)
    assert name == whole * (len(name) // len(whole)), "cut inside a character or a cluster"


def test_a_cut_never_leaves_a_joiner_or_an_accent_without_its_character():
    for filler in range(0, 12):
        title = "x" * (195 + filler) + "👩‍🍳" + "e\u0301\u0323" * 3
        name = safe_file_name(title)
        assert_safe(name)
        assert not name.endswith("\u200d") and unicodedata.category(name[-1]) not in ("Mn", "Mc", "Me")


@pytest.mark.parametrize("title", ["Q&A: what? #tag [[x]] | y", "Crème fraîche (day 2)", "🍞 Bread",
                                   "a^b#c|d", "Re: [draft] notes", "50% hydration"])
def test_a_safe_name_works_as_a_wikilink_target(title):
    name = safe_file_name(title)
    links = find_links(f"See [[{name}]].")
    assert [link.target for link in links] == [name]


TITLE_ALPHABET = (
    list("abcXYZ019 .-_'(),!&%~`$@+={}")
    + list('\\/:*?"<>|#^[]')
    + [chr(n) for n in range(32)] + ["\x7f", "\x85", "\xa0", "\u2028", "\u3000"]
    + ["é", "ß", "ǅ", "İ", "日本", "😀", "👩‍🍳", "\u200d", "\ufe0f", "\u0301", "\U0001f3fd", "ﬁ",
       "\u3164", "\u2800", "\u034f", "\u180e", "\U000e0041", "\u200c", "\u00ad"]
    + sorted(BIDI_CONTROLS) + ["\ud800", "\udfff"]
    + ["CON", "nul", "Com1", "lpt²", "..", "...", ".md", ".txt", "%%"]
)


def random_title(rng: random.Random) -> str:
    size = rng.choice([0, 1, 2, 3, 5, 10, 40, 120, 400])
    return "".join(rng.choice(TITLE_ALPHABET) for _ in range(size))


@pytest.mark.parametrize("seed", range(5))
def test_random_titles_give_a_safe_name_or_a_clear_error(seed):
    rng = random.Random(seed)
    for _ in range(3000):
        title = random_title(rng)
        try:
            name = safe_file_name(title)
        except InboxError as error:
            assert "leaves nothing" in str(error), (seed, title)
            continue
        assert_safe(name)


@pytest.mark.parametrize("seed", range(3))
def test_random_titles_never_write_outside_the_inbox(tmp_path, seed):
    rng = random.Random(seed)
    root = tmp_path / "vault"
    vault = make_vault(root, {"Home.md": ""})
    inbox_dir = root / "Inbox"
    for n in range(150):
        title = random_title(rng)
        try:
            path = create_note(vault, "Inbox", title, f"note {n}", today=TODAY)
        except InboxError:  # nothing left of the title, or a name already taken
            continue
        file = (root / path).resolve()
        assert file.parent == inbox_dir.resolve() and file.read_text(encoding="utf-8").endswith(f"note {n}")
        assert_safe(file.name.removesuffix(".md"))
    # Nothing but notes in the inbox, nothing anywhere else.
    assert all(name.endswith(".md") for name in inbox_entries(root))
    assert sorted(p.name for p in root.iterdir()) == ["Home.md", "Inbox"]


# ---------------------------------------------------------------------------
# inbox.py: creating the note.

def inbox_entries(root: Path) -> list[str]:
    """What the inbox holds, but for the lock file every creation shares (which stays)."""
    folder = root / "Inbox"
    return sorted(name for name in os.listdir(folder) if name != inbox.LOCK_NAME) if folder.exists() else []


def read_back(root: Path, path: str):
    return parse_note(Path(path).stem, (root / path).read_text(encoding="utf-8"))


def test_a_note_is_created_in_the_inbox_with_our_properties_and_the_content_as_body(tmp_path):
    root = tmp_path / "vault"
    vault = make_vault(root, {})
    path = create_note(vault, "Inbox", "Try tangzhong", "Cook 5% of the flour.\n", tags=["bread", "#idea"], today=TODAY)
    assert path == "Inbox/Try tangzhong.md"
    note = read_back(root, path)
    assert note.frontmatter == {"created": "2026-04-05", "tags": ["bread", "idea"]}
    assert note.body.strip() == "Cook 5% of the flour."
    assert vault.read_note(path)[0] == path  # the path reads back through the vault


def test_the_vault_may_be_given_as_a_folder(tmp_path):
    (tmp_path / "vault").mkdir()
    assert create_note(tmp_path / "vault", "Inbox", "x", "y") == "Inbox/x.md"
    assert create_note(str(tmp_path / "vault"), "Inbox/Deep/er", "x", "y") == "Inbox/Deep/er/x.md"


@pytest.mark.parametrize("step", distinct_copies("inbox.py", since=8))
def test_a_title_that_only_looks_like_a_note_in_the_inbox_is_refused_naming_it(tmp_path, step):
    with step_modules(find_step(step).path):
        from inbox import NoteExists as Exists, create_note as create
        from vault import Vault as StepVault
    root = tmp_path / "vault"
    write(root, "Inbox/Idea.md", "the original")
    write(root, "Inbox/Paypal.md", "another")
    lookalikes = ["Id\u0435a",  # a Cyrillic е
                  "\u0406dea",  # a Cyrillic І
                  "ldea",  # a Latin l for the capital I
                  "ID\u0415A",  # a Cyrillic Е, in a name that differs in case too
                  "Ide\u0251",  # a Latin alpha
                  "P\u0430yp\u0430l"]  # two Cyrillic а
    for title in lookalikes:
        with pytest.raises(Exists, match=r'looks just like the note "Inbox/(Idea|Paypal).md"'):
            create(StepVault(root), "Inbox", title, "new text")
    for title in ("Ideas", "Id\u00e9e", "Idea 2", "Paypa"):  # they read differently: made
        create(StepVault(root), "Inbox", title, "new text")
    assert inbox_entries(root) == sorted(["Idea.md", "Paypal.md", "Ideas.md", "Id\u00e9e.md", "Idea 2.md", "Paypa.md"])
    assert (root / "Inbox/Idea.md").read_text(encoding="utf-8") == "the original"


def test_an_existing_note_is_never_overwritten(tmp_path):
    root = tmp_path / "vault"
    vault = make_vault(root, {"Inbox/Idea.md": "the original"})
    for title in ("Idea", "idea", "IDEA", "Idea.md", " Idea. "):
        with pytest.raises(NoteExists, match="Choose another title"):
            create_note(vault, "Inbox", title, "new text")
    assert (root / "Inbox/Idea.md").read_text(encoding="utf-8") == "the original"
    assert inbox_entries(root) == ["Idea.md"]  # and no temporary file left


def test_a_name_taken_in_another_unicode_spelling_or_case_is_taken(tmp_path):
    root = tmp_path / "vault"
    decomposed = unicodedata.normalize("NFD", "Crème.md")
    vault = make_vault(root, {"Inbox/" + decomposed: "x", "Inbox/STRASSE.md": "y"})
    for title in ("Crème", "CRÈME", "Straße"):
        with pytest.raises(NoteExists):
            create_note(vault, "Inbox", title, "z")


def test_a_name_created_between_the_check_and_the_write_is_not_overwritten(tmp_path, monkeypatch):
    """The check for a taken name can lose a race with another writer; the creation itself
    must still refuse. Make the check see nothing, as if the other writer came just after."""
    root = tmp_path / "vault"
    vault = make_vault(root, {"Inbox/Idea.md": "the original"})
    monkeypatch.setattr(inbox, "existing_name", lambda folder, name: None)
    monkeypatch.setattr(inbox, "lookalike", lambda name, others: None)
    with pytest.raises(NoteExists, match="Choose another title"):
        create_note(vault, "Inbox", "Idea", "new text")
    assert (root / "Inbox/Idea.md").read_text(encoding="utf-8") == "the original"
    assert inbox_entries(root) == ["Idea.md"]


def test_without_hard_links_the_fallback_still_never_overwrites(tmp_path, monkeypatch):
    root = tmp_path / "vault"
    vault = make_vault(root, {"Inbox/Idea.md": "the original"})

    def no_hard_links(source, destination):
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(inbox.os, "link", no_hard_links)
    assert create_note(vault, "Inbox", "Other", "text", today=TODAY) == "Inbox/Other.md"
    assert read_back(root, "Inbox/Other.md").body.strip() == "text"
    monkeypatch.setattr(inbox, "existing_name", lambda folder, name: None)
    with pytest.raises(NoteExists):
        create_note(vault, "Inbox", "Idea", "new text")
    assert (root / "Inbox/Idea.md").read_text(encoding="utf-8") == "the original"
    assert inbox_entries(root) == ["Idea.md", "Other.md"]


def test_a_failed_write_leaves_no_note_and_says_why(tmp_path, monkeypatch):
    root = tmp_path / "vault"
    vault = make_vault(root, {})

    def disk_full(source, destination):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(inbox.os, "link", disk_full)
    with pytest.raises(InboxError, match="cannot be written: No space left"):
        create_note(vault, "Inbox", "Idea", "text")
    assert inbox_entries(root) == []


def test_two_threads_creating_one_title_at_once(tmp_path):
    root = tmp_path / "vault"
    vault = make_vault(root, {})
    start, results = threading.Barrier(8), {}

    def writer(n: int) -> None:
        start.wait()
        try:
            results[n] = create_note(vault, "Inbox", "Same title", f"writer {n}\n" + "x" * 20000)
        except NoteExists as error:
            results[n] = error

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert_one_winner(root, results)


# A writer process: waits for a common start time, then creates the note.
WRITER = textwrap.dedent("""
    import sys, time
    sys.path[:0] = [sys.argv[1], sys.argv[2]]
    from inbox import create_note, NoteExists
    root, n, start = sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
    while time.time() < start:
        pass
    try:
        print(create_note(root, "Inbox", "Same title", f"writer {n}\\n" + "x" * 90000))
    except NoteExists as error:
        print("EXISTS", error)
""")


@pytest.mark.parametrize("round_", range(3))
def test_two_processes_creating_one_title_at_once(tmp_path, round_):
    root = tmp_path / "vault"
    make_vault(root, {})
    start = time.time() + 1.0  # every process is up by then
    processes = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(STEP8), str(STEP7), str(root), str(n), str(start)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for n in range(6)
    ]
    results = {}
    for n, process in enumerate(processes):
        out, err = process.communicate(timeout=60)
        assert process.returncode == 0, err
        results[n] = NoteExists(out) if out.startswith("EXISTS") else out.strip()
    assert_one_winner(root, results)


# Holds the inbox's lock from another process until killed.
HOLDER = textwrap.dedent("""
    import fcntl, os, sys
    fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    print("held", flush=True)
    sys.stdin.read()
""")


@pytest.mark.skipif(sys.platform == "win32", reason="the holder locks with fcntl")
def test_a_lock_held_by_another_process_is_waited_for_and_released_when_it_dies(tmp_path, monkeypatch):
    root = tmp_path / "vault"
    vault = make_vault(root, {"Inbox/Old.md": ""})
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(root / "Inbox" / inbox.LOCK_NAME)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        monkeypatch.setattr(inbox, "LOCK_WAIT_SECONDS", 0.3)
        with pytest.raises(InboxError, match="Another process has been creating a note"):
            create_note(vault, "Inbox", "Blocked", "x")
        assert inbox_entries(root) == ["Old.md"]
    finally:
        holder.kill()  # a crash: the system lets go of its lock
        holder.wait(timeout=10)
        holder.stdin.close()
        holder.stdout.close()
    assert create_note(vault, "Inbox", "Blocked", "x") == "Inbox/Blocked.md"


def test_a_lock_file_that_is_a_symlink_is_not_followed(tmp_path):
    root, outside = tmp_path / "vault", tmp_path / "outside.txt"
    vault = make_vault(root, {"Inbox/Old.md": ""})
    (root / "Inbox" / inbox.LOCK_NAME).symlink_to(outside)
    with pytest.raises(InboxError, match="lock file cannot be opened"):
        create_note(vault, "Inbox", "New", "x")
    assert not outside.exists() and inbox_entries(root) == ["Old.md"]


def assert_one_winner(root: Path, results: dict) -> None:
    """Exactly one writer got the path; the others were told to choose another title;
    the file holds the winner's content, whole."""
    winners = [n for n, result in results.items() if result == "Inbox/Same title.md"]
    assert len(winners) == 1, results
    losers = [result for n, result in results.items() if n not in winners]
    assert all(isinstance(r, NoteExists) and "Choose another title" in str(r) for r in losers), results
    body = read_back(root, "Inbox/Same title.md").body.removeprefix("\n")  # the blank line after the properties
    assert body.startswith(f"writer {winners[0]}\n") and body.count("x") in (20000, 90000)
    assert body.strip().endswith("x") and len(body.split("\n")[1]) in (20000, 90000)
    assert inbox_entries(root) == ["Same title.md"]  # no temporary file left behind


# ---------------------------------------------------------------------------
# inbox.py: nothing the content or the tags hold becomes a property.

@pytest.mark.parametrize("content", [
    "---\ntags: [evil]\naliases: [Home]\n---\nbody",
    "\ufeff---\ncssclasses: [x]\n---\n",
    "---\n",
    "---",
    "...\n---\nevil: true\n---\n",
    "text\n---\nevil: true\n---\n",
    "---js\n{evil: true}\n---\n",
])
def test_content_never_becomes_properties(tmp_path, content):
    root = tmp_path / "vault"
    path = create_note(make_vault(root, {}), "Inbox", "Note", content, tags=["safe"], today=TODAY)
    note = read_back(root, path)
    assert note.frontmatter == {"created": "2026-04-05", "tags": ["safe"]}
    assert [tag.name for tag in note.tags if tag.in_frontmatter] == ["safe"]
    assert note.aliases == [] and note.cssclasses == []
    assert (root / path).read_text(encoding="utf-8").endswith(content)  # the content is kept as sent


@pytest.mark.parametrize("tag", [
    'a"\nevil: true', "a\nb", "a, b", "a b", "x]", "[x]", "tag: x", "#", "", "123", "a\x00b", "a\x01",
    "a\u202eb", "{a}", "a'b", "a\\b", "x" * 101, "- a", "a#b", 7, None, ["a"],
])
def test_bad_tags_are_refused_and_nothing_is_written(tmp_path, tag):
    root = tmp_path / "vault"
    with pytest.raises(InboxError, match="is not a tag"):
        create_note(make_vault(root, {}), "Inbox", "Note", "text", tags=[tag])
    assert not (root / "Inbox/Note.md").exists()


@pytest.mark.parametrize("tags", ["bread", {"a": 1}, ["t"] * 21])
def test_tags_must_be_a_short_list(tmp_path, tags):
    with pytest.raises(InboxError, match="must be a list"):
        create_note(make_vault(tmp_path / "vault", {}), "Inbox", "Note", "text", tags=tags)


def test_tags_that_yaml_would_read_as_other_types_stay_text(tmp_path):
    root = tmp_path / "vault"
    tags = ["true", "null", "1e5", "0x1F", "yes", "-a", "bread/sourdough", "🍞", "Über_Brot", "#hash"]
    path = create_note(make_vault(root, {}), "Inbox", "Note", "text", tags=tags + ["TRUE"], today=TODAY)
    note = read_back(root, path)
    expected = [tag.removeprefix("#") for tag in tags]  # "TRUE" is "true" again: tags ignore case
    assert note.frontmatter["tags"] == expected and [t.name for t in note.tags if t.in_frontmatter] == expected


def test_content_is_capped_in_bytes(tmp_path):
    vault = make_vault(tmp_path / "vault", {})
    create_note(vault, "Inbox", "Exactly", "x" * inbox.MAX_CONTENT_BYTES)
    with pytest.raises(InboxError, match=r"102401 bytes.*at most 102400"):
        create_note(vault, "Inbox", "One more", "x" * (inbox.MAX_CONTENT_BYTES + 1))
    with pytest.raises(InboxError, match="bytes"):  # 51,201 characters, 102,402 bytes
        create_note(vault, "Inbox", "Accents", "é" * (inbox.MAX_CONTENT_BYTES // 2 + 1))


@pytest.mark.parametrize("content,message", [
    ("a\x00b", "NUL"), ("half \ud83d emoji", "lone surrogate"), (None, "must be a string"), (42, "must be a string"),
])
def test_content_that_is_not_text_is_refused(tmp_path, content, message):
    with pytest.raises(InboxError, match=message):
        create_note(make_vault(tmp_path / "vault", {}), "Inbox", "Note", content)


# ---------------------------------------------------------------------------
# inbox.py: the inbox folder.

def test_an_inbox_that_is_a_symlink_out_of_the_vault_is_refused(tmp_path):
    root, outside = tmp_path / "vault", tmp_path / "outside"
    outside.mkdir()
    vault = make_vault(root, {})
    (root / "Inbox").symlink_to(outside, target_is_directory=True)
    with pytest.raises(InboxError, match="leads outside the vault"):
        create_note(vault, "Inbox", "Escape", "text")
    with pytest.raises(InboxError, match="leads outside the vault"):
        create_note(vault, "Inbox/Ideas", "Escape", "text")
    assert list(outside.iterdir()) == []  # not even the Ideas folder was made out there


def test_an_inbox_symlinked_to_a_folder_inside_the_vault_gives_the_real_path(tmp_path):
    root = tmp_path / "vault"
    vault = make_vault(root, {"Notes/Captured/Old.md": ""})
    (root / "Inbox").symlink_to(root / "Notes/Captured", target_is_directory=True)
    path = create_note(vault, "Inbox", "New", "text")
    assert path == "Notes/Captured/New.md" and path in vault.list_notes()


@pytest.mark.parametrize("folder", ["../outside", "/tmp", "C:/Inbox", ".trash", "Inbox/../..", ""])
def test_an_inbox_path_that_leaves_the_vault_or_is_hidden_is_refused(tmp_path, folder):
    with pytest.raises(VaultError):
        create_note(make_vault(tmp_path / "vault", {}), folder, "Note", "text")
    assert sorted(os.listdir(tmp_path)) == ["vault"]


def test_an_inbox_that_is_a_file_is_refused(tmp_path):
    vault = make_vault(tmp_path / "vault", {})
    (tmp_path / "vault" / "Inbox").write_text("not a folder")
    with pytest.raises(InboxError, match="not a folder"):
        create_note(vault, "Inbox", "Note", "text")


# ---------------------------------------------------------------------------
# related.py

def test_related_notes_by_links_one_and_two_steps_away(tmp_path):
    graph = graph_of(tmp_path, {
        "A.md": "[[B]] [[Mutual]]", "B.md": "[[C]] [[D]]", "C.md": "", "D.md": "[[A]]",
        "Mutual.md": "[[A]]", "E.md": "",
    })  # D is next to A, and also two links away through B: a direct link counts once
    found = {r.path: (r.score, r.reasons) for r in related_notes(graph, None, "A.md", 10)}
    assert found == {
        "Mutual.md": (2.0, ["links to it", "linked from it"]),
        "B.md": (1.0, ["linked from it"]),
        "D.md": (1.0, ["links to it"]),
        "C.md": (0.5, ["two links away, through B.md"]),
    }
    assert [r.path for r in related_notes(graph, None, "A.md", 2)] == ["Mutual.md", "B.md"]


def test_a_hub_is_not_walked_through(tmp_path):
    notes = {f"Topic {n}.md": "" for n in range(20)}
    notes["Home.md"] = " ".join(f"[[Topic {n}]]" for n in range(20))
    graph = graph_of(tmp_path, notes)
    found = related_notes(graph, None, "Topic 1.md", 10)
    assert [(r.path, r.reasons) for r in found] == [("Home.md", ["links to it"])]


@pytest.fixture(scope="module")
def sample_index(tmp_path_factory):
    vault = Vault(SAMPLE_VAULT)
    vault_index = VaultIndex(vault, HashEmbedder(), tmp_path_factory.mktemp("index"))
    vault_index.rebuild()
    return vault_index


def test_related_notes_merge_links_and_similar_content(sample, sample_index):
    found = related_notes(sample, sample_index, "Ferments/Koji.md", 12)
    paths = [r.path for r in found]
    assert "Ferments/Koji.md" not in paths and len(paths) == len(set(paths)) == 12
    assert [r.score for r in found] == sorted((r.score for r in found), reverse=True)
    miso = next(r for r in found if r.path == "Ferments/Miso.md")
    assert miso.reasons[:2] == ["links to it", "linked from it"]
    for related in found:
        for reason in related.reasons:
            assert re.fullmatch(r"links to it|linked from it|two links away, through .+\.md|"
                                r"similar content \(0\.\d\d\)|similar content \(1\.00\)", reason), reason
        assert related.score == pytest.approx(sum(
            1.0 if r in ("links to it", "linked from it") else 0.5 if r.startswith("two") else float(r[-5:-1])
            for r in related.reasons), abs=0.01)
    assert not any("through Home.md" in reason for r in found for reason in r.reasons)


def test_the_most_similar_note_is_found_by_its_content(tmp_path):
    text = "Rye sourdough with caraway, a dense crumb, long cold retard, and a dark crust.\n"
    root = tmp_path / "vault"
    vault = make_vault(root, {"A/Twin one.md": text, "B/Twin two.md": "# Rye\n\n" + text,
                              "C/Cars.md": "Changing the oil of an engine and checking tyre pressure.\n"})
    vault_index = VaultIndex(vault, HashEmbedder(), tmp_path / "index")
    vault_index.rebuild()
    found = related_notes(LinkGraph.build(vault), vault_index, "A/Twin one.md", 5)
    assert found[0].path == "B/Twin two.md" and found[0].reasons[0].startswith("similar content (0.9")
    assert "C/Cars.md" not in [r.path for r in found]  # below the floor: noise, not a reason


def test_a_notes_similarity_is_that_of_its_best_section(tmp_path):
    text = "Rye sourdough with caraway, a dense crumb, long cold retard, and a dark crust.\n"
    vault = make_vault(tmp_path / "vault", {
        "A/Twin one.md": text,
        "B/Twin two.md": f"## Rye\n\n{text}\n## Seeds\n\nCaraway and rye, toasted for the crust.\n",
    })
    vault_index = VaultIndex(vault, HashEmbedder(), tmp_path / "index")
    vault_index.rebuild()
    found = related_notes(LinkGraph.build(vault), vault_index, "A/Twin one.md", 5)
    assert [r.path for r in found] == ["B/Twin two.md"]
    assert found[0].reasons[0].startswith("similar content (0.9"), found[0].reasons


def test_without_an_index_the_links_alone_answer(sample):
    class NotBuiltYet:
        index = None

    found = related_notes(sample, NotBuiltYet(), "Ferments/Koji.md", 5)
    assert found and all("similar" not in reason for r in found for reason in r.reasons)


@pytest.mark.parametrize("title,name", [
    ("\u200bHome", "Home"), ("Ho\u00adme", "Home"), ("Home\u2060", "Home"),
    ("conin$", "conin$_"), ("CONOUT$.txt", "CONOUT$_.txt"),
    ("\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645", "\u0645\u06cc\u062e\u0648\u0627\u0647\u0645"),
])
def test_a_title_cannot_pass_for_another_note_or_a_console_device(title, name):
    # A zero-width non-joiner goes too, though Persian spells with it: "I\u200cdea" would pass for "Idea".
    assert safe_file_name(title) == name
