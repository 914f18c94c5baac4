"""link_rewrite.plan_move: the links a move must rewrite, and how, checked on real vaults.

Each case builds a vault in tmp_path, plans a move, applies the plan the way move_note
does (each `after` written over its note, then the note renamed), builds the link graph
again and checks what a reader of the vault relies on:
(a) no link that reached a note before dangles after the move;
(b) the backlinks follow the note: the new path has the old path's backlinks;
(c) every link reaches the note it reached before (the moved one at its new path);
(d) every byte outside the links' spans is unchanged.
Exact texts pin the form of each rewritten link (display text, heading, encoding...).
"""
import difflib
import json
import random
import re
from pathlib import Path
from urllib.parse import quote

import pytest

from helpers import distinct_copies, step_modules
from manifest import find_step

# The module, and the steps whose graph (links.py) differs under it.
STEPS = sorted(set(distinct_copies("link_rewrite.py", since=8)) | set(distinct_copies("links.py", since=8)))
BOM = "\ufeff".encode()


MODULES = {}
for number in STEPS:
    with step_modules(find_step(number).path):
        import link_rewrite
        import links
        import vault
    MODULES[number] = link_rewrite, links, vault


@pytest.fixture(params=STEPS, ids=lambda step: f"step{step}")
def step(request):
    return MODULES[request.param]


def make_vault(step, root: Path, notes: dict[str, str | bytes], settings: dict | None = None):
    for path, text in notes.items():
        file = root / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(text if isinstance(text, bytes) else text.encode())
    if settings is not None:
        (root / ".obsidian").mkdir(parents=True, exist_ok=True)
        (root / ".obsidian" / "app.json").write_text(json.dumps(settings))
    return step[2].Vault(root)


def apply(root: Path, plan, old: str, new: str) -> None:
    """What move_note does with the plan, without its checks: write each text, then move."""
    for rewrite in plan:
        file = root / rewrite.path
        data = file.read_bytes()
        assert text_of(data) == rewrite.before, f"{rewrite.path}: `before` is not the text on disk"
        file.write_bytes((BOM if data.startswith(BOM) else b"") + rewrite.after.encode())
    (root / new).parent.mkdir(parents=True, exist_ok=True)
    (root / old).rename(root / new)


def text_of(data: bytes) -> str:
    return data.removeprefix(BOM).decode()


def resolutions(graph) -> dict[str, list]:
    """For each note, where each of its links goes, in order (None: nowhere)."""
    return {path: [link.target for link in graph.outgoing(path)] for path in graph.note_paths()}


def sources(backlinks, old: str = "", new: str = "") -> list[tuple]:
    """Each backlink as (source, line, heading or block, display text, embed); the note
    at `old` named by `new`."""
    return sorted((new if backlink.source == old else backlink.source, backlink.line, backlink.link.subpath,
                   backlink.link.display, backlink.link.embed) for backlink in backlinks)


LINK_SPAN = re.compile(r"!?\[\[[^\]\n]*\]\]|!?\[[^\]\n]*\]\((?:<[^>\n]*>|[^)\n]*)\)")


def changed_outside_links(before: str, after: str) -> list[str]:
    """The pieces of `before` changed in `after` that lie outside every link."""
    spans = [match.span() for match in LINK_SPAN.finditer(before)]
    changes = difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes()
    return [before[start:end] or f"(inserted at {start})" for kind, start, end, _, _ in changes
            if kind != "equal" and not any(low <= start and end <= high for low, high in spans)]


def move(step, root: Path, notes: dict, old: str, new: str, settings: dict | None = None) -> dict[str, str]:
    """Plan the move, apply it, check (a)-(d); the texts of the notes the plan changed."""
    link_rewrite, links, _ = step
    vault = make_vault(step, root, notes, settings)
    graph = links.LinkGraph.build(vault)
    before, backlinks = resolutions(graph), sources(graph.backlinks(old), old, new)
    plan = link_rewrite.plan_move(vault, graph, old, new)
    apply(root, plan, old, new)
    graph = links.LinkGraph.build(step[2].Vault(root))
    after = resolutions(graph)
    for source, targets in before.items():
        expected = [new if target == old else target for target in targets]
        moved_to = new if source == old else source
        assert after[moved_to] == expected, f"(a, c) the links of {source} go elsewhere"
    assert sources(graph.backlinks(new)) == backlinks, "(b) the backlinks did not follow the note"
    for rewrite in plan:
        assert changed_outside_links(rewrite.before, rewrite.after) == [], f"(d) {rewrite.path}"
    return {rewrite.path: rewrite.after for rewrite in plan}


HOME = """---
# was "[[Plan]]": a comment, no property, though the property below says the same
unquoted: [[Plan]]
listed:
  - [[Plan]]
up: "[[Plan]]"
flow: ["[[Plan]]", "[[Other]]"]
text: see [[Plan]] first
related:
  - "[[Plan#Goals|goals]]"
  - "[[Other]]"
# "[[Plan]]" in a comment is no property
---
# Home
See [[Plan]], [[Plan#Goals]], [[Plan#^b1]], [[plan|the plan]] and ![[Plan#Goals]].
| a | [[Plan\\|in a table]] |
Not links: `[[Plan]]` and %% [[Plan]] %% and

```
[[Plan]]
```
"""


def test_wikilinks_in_body_and_properties_keep_heading_block_and_display(step, tmp_path):
    notes = {"Home.md": HOME, "A/Plan.md": "# Goals\nText ^b1\n", "C/Plan.md": "", "Other.md": ""}
    changed = move(step, tmp_path, notes, "A/Plan.md", "B/Plan.md")
    # [[Plan]] from the root meant A/Plan.md (as short as C/Plan.md, first by name); after the
    # move it would mean B/Plan.md, the moved note, so it is left as written.
    assert changed == {}
    changed = move(step, tmp_path / "2", notes, "A/Plan.md", "Projects/Plan.md")
    assert changed["Home.md"] == HOME.replace('"[[Plan', '"[[Projects/Plan').replace(
        "See [[Plan]], [[Plan#Goals]], [[Plan#^b1]], [[plan|the plan]] and ![[Plan#Goals]].",
        "See [[Projects/Plan]], [[Projects/Plan#Goals]], [[Projects/Plan#^b1]], "
        "[[Projects/Plan|the plan]] and ![[Projects/Plan#Goals]].",
    ).replace("[[Plan\\|in a table]]", "[[Projects/Plan\\|in a table]]").replace(
        '# "[[Projects/Plan]]" in a comment', '# "[[Plan]]" in a comment').replace(
        '# was "[[Projects/Plan]]"', '# was "[[Plan]]"').replace(
        "text: see [[Plan]]", "text: see [[Projects/Plan]]")


def test_a_rename_writes_the_new_name_when_no_other_note_has_it(step, tmp_path):
    notes = {"Home.md": "[[Plan|my plan]] ![[Plan]] [[A/Plan#Goals]] [[ Plan.md |spaced]]\n", "A/Plan.md": "# Goals\n"}
    changed = move(step, tmp_path, notes, "A/Plan.md", "A/Roadmap.md")
    # a bare name stays bare (unique), a path stays a path
    assert changed == {"Home.md": "[[Roadmap|my plan]] ![[Roadmap]] [[A/Roadmap#Goals]] [[ Roadmap.md |spaced]]\n"}


def test_a_name_another_note_has_is_written_as_its_full_path(step, tmp_path):
    notes = {"Home.md": "[[Plan]]\n", "A/Plan.md": "", "Archive/Old/Report.md": ""}
    changed = move(step, tmp_path, notes, "A/Plan.md", "B/Report.md")
    assert changed == {"Home.md": "[[B/Report]]\n"}


def test_markdown_links_keep_encoding_brackets_titles_and_their_form(step, tmp_path):
    notes = {
        "Notes/Home.md": (
            "[a](../Bread/Bulk%20fermentation.md#Timing) [b](Bread/Bulk%20fermentation.md)\n"
            "[c](</Bread/Bulk fermentation.md>) ![d](Bulk%20fermentation.md \"a title\")\n"
            "[e](https://example.com/Bulk%20fermentation.md) [f](../Bread/crumb.png)\n"
        ),
        "Bread/Bulk fermentation.md": "# Timing\n",
    }
    changed = move(step, tmp_path, notes, "Bread/Bulk fermentation.md", "Ferments/Dough (first rise).md")
    assert changed == {"Notes/Home.md": (
        "[a](../Ferments/Dough%20%28first%20rise%29.md#Timing) [b](Ferments/Dough%20%28first%20rise%29.md)\n"
        "[c](</Ferments/Dough (first rise).md>) ![d](Dough%20%28first%20rise%29.md \"a title\")\n"
        "[e](https://example.com/Bulk%20fermentation.md) [f](../Bread/crumb.png)\n"
    )}


def test_the_moved_notes_relative_links_and_self_links_follow_it(step, tmp_path):
    notes = {
        "A/Plan.md": "[h](../Home.md) ![](../img/p.png) [[../Home]] [[#Goals]] [[Plan#Goals]] [s](./Plan.md)\n# Goals\n",
        "Home.md": "", "C/Plan.md": "",
    }
    changed = move(step, tmp_path, notes, "A/Plan.md", "X/Y/Plan.md")
    assert changed == {"A/Plan.md": (
        "[h](../../Home.md) ![](../../img/p.png) [[../../Home]] [[#Goals]] [[Plan#Goals]] [s](./Plan.md)\n# Goals\n"
    )}
    changed = move(step, tmp_path / "2", notes, "A/Plan.md", "X/Roadmap.md")
    assert changed == {"A/Plan.md": (
        "[h](../Home.md) ![](../img/p.png) [[../Home]] [[#Goals]] [[Roadmap#Goals]] [s](./Roadmap.md)\n# Goals\n"
    )}


def test_links_the_move_would_capture_keep_their_note(step, tmp_path):
    notes = {
        "Archive/Plan.md": "", "C/Plan.md": "", "B/Note.md": "[[Plan]] [[Archive/Plan|old]]\n",
        "Home.md": "[[Plan#Goals|goals]] [p](Plan.md)\n",
    }
    changed = move(step, tmp_path, notes, "Archive/Plan.md", "B/Plan.md")
    # [[Plan]] meant C/Plan.md (shorter than Archive/Plan.md); B/Plan.md would take it, in B/
    # by the same-folder rule and at the root by name
    assert changed == {
        "B/Note.md": "[[C/Plan]] [[B/Plan|old]]\n",
        "Home.md": "[[C/Plan#Goals|goals]] [p](C/Plan.md)\n",
    }


def test_a_new_name_that_makes_a_bare_link_ambiguous(step, tmp_path):
    notes = {"Report.md": "", "Home.md": "[[Report]]\n", "Sub/Note.md": "[[Report]]\n", "Sub/Draft.md": ""}
    changed = move(step, tmp_path, notes, "Sub/Draft.md", "Sub/Report.md")
    # [[Report]] finds Report.md by its exact path from anywhere: only Sub/Note.md, whose own
    # folder would now hold a Report.md, needs the path
    assert changed == {}
    notes = {"Docs/Report.md": "", "Home.md": "[[Report]]\n", "Sub/Note.md": "[[Report]]\n", "Draft.md": ""}
    changed = move(step, tmp_path / "2", notes, "Draft.md", "Sub/Report.md")
    # Docs/Report.md was the only Report; now Sub/Report.md, a character shorter, would win
    assert changed == {"Home.md": "[[Docs/Report]]\n", "Sub/Note.md": "[[Docs/Report]]\n"}


@pytest.mark.parametrize("setting, expected", [
    ("relative", "[[../B/Plan]] [[../B/Plan|p]] [m](../B/Plan.md)\n"),
    ("absolute", "[[B/Plan]] [[B/Plan|p]] [m](B/Plan.md)\n"),
    ("shortest", "[[Plan]] [[Plan|p]] [m](Plan.md)\n"),
])
def test_the_vaults_new_link_format_is_followed(step, tmp_path, setting, expected):
    notes = {"Q/Home.md": "[[Old]] [[Old|p]] [m](Old.md)\n", "A/Old.md": ""}
    changed = move(step, tmp_path, notes, "A/Old.md", "B/Plan.md", {"newLinkFormat": setting})
    assert changed == {"Q/Home.md": expected}


def test_crlf_bom_and_unicode_names_are_kept(step, tmp_path):
    text = "---\r\nup: \"[[Crème]]\"\r\n---\r\nLine [[Crème|c]]\r\nand [x](Cr%C3%A8me.md) [y](Crème.md) end\r\n"
    notes = {"Home.md": BOM + text.encode(), "Crème.md": ""}
    changed = move(step, tmp_path, notes, "Crème.md", "Desserts/Crème brûlée.md")
    assert changed == {"Home.md": text.replace("[[Crème", "[[Crème brûlée").replace(
        "Cr%C3%A8me.md", "Cr%C3%A8me%20br%C3%BBl%C3%A9e.md").replace("(Crème.md)", "(Crème%20brûlée.md)")}
    assert (tmp_path / "Home.md").read_bytes().startswith(BOM)


def test_unresolved_links_attachments_and_other_notes_are_left_alone(step, tmp_path):
    notes = {"Home.md": "[[Plan]] [[Nowhere]] ![[crumb.png]] [[Other]]\n", "A/Plan.md": "[[Nowhere]]\n",
             "Other.md": "[[Home]]\n"}
    changed = move(step, tmp_path, notes, "A/Plan.md", "B/Plan.md")
    assert changed == {}
    changed = move(step, tmp_path / "2", notes, "A/Plan.md", "B/Roadmap.md")
    assert changed == {"Home.md": "[[Roadmap]] [[Nowhere]] ![[crumb.png]] [[Other]]\n"}


def test_planning_writes_nothing_and_refuses_impossible_moves(step, tmp_path):
    link_rewrite, links, vault_module = step
    notes = {"Home.md": "[[Plan]]\n", "A/Plan.md": "", "B/Plan.md": ""}
    vault = make_vault(step, tmp_path, notes)
    graph = links.LinkGraph.build(vault)
    on_disk = {path: (tmp_path / path).read_bytes() for path in notes}
    assert [rewrite.path for rewrite in link_rewrite.plan_move(vault, graph, "A/Plan.md", "C/Roadmap.md")] == ["Home.md"]
    assert {path: (tmp_path / path).read_bytes() for path in notes} == on_disk
    assert sorted(path.relative_to(tmp_path).as_posix() for path in tmp_path.rglob("*") if path.is_file()) == sorted(notes)
    with pytest.raises(vault_module.VaultError, match="already exists"):
        link_rewrite.plan_move(vault, graph, "A/Plan.md", "B/Plan.md")
    with pytest.raises(vault_module.VaultError, match="no link can write"):
        link_rewrite.plan_move(vault, graph, "A/Plan.md", "A/Plan #2.md")
    with pytest.raises(vault_module.VaultError, match="ends in .md"):
        link_rewrite.plan_move(vault, graph, "A/Plan.md", "A/Plan")
    with pytest.raises(vault_module.NoteNotFound):
        link_rewrite.plan_move(vault, graph, "A/Missing.md", "A/Other.md")
    assert link_rewrite.plan_move(vault, graph, "A/Plan.md", "A/Plan.md") == []


SAMPLE_VAULT = Path(__file__).resolve().parent.parent / "steps" / "sample-vault"
SAMPLE_NOTES = sorted(path.relative_to(SAMPLE_VAULT).as_posix() for path in SAMPLE_VAULT.rglob("*.md"))


def destinations(note: str) -> list[str]:
    """Deeper under a new folder; renamed in place; into the folder of other notes."""
    folder, _, name = note.rpartition("/")
    other = "Ferments" if folder == "Bread" else "Bread"
    return [f"Archive/{folder or 'Root'}/{name}", f"{folder + '/' if folder else ''}Moved {name}", f"{other}/{name}"]


# The shipped step's copy only: the cases above cover every copy, and each move here
# builds the graph of the whole vault twice (about 7 s for the lot).
@pytest.mark.parametrize("note", SAMPLE_NOTES)
def test_every_note_of_the_sample_vault_moves_without_breaking_a_link(tmp_path, note):
    step = MODULES[STEPS[-1]]
    notes = {path: (SAMPLE_VAULT / path).read_bytes() for path in SAMPLE_NOTES}
    settings = json.loads((SAMPLE_VAULT / ".obsidian" / "app.json").read_text())
    for number, new in enumerate(destinations(note)):
        if new in notes:
            continue  # Bread/Troubleshooting.md beside Ferments/Troubleshooting.md: refused, tested above
        move(step, tmp_path / str(number), notes, note, new, settings)


FOLDERS = ["", "A/", "B/", "A/Deep/", "C D/"]
NAMES = ["Plan", "plan", "Other", "Crème brûlée", "Plan B"]


def random_link(rng, notes: list[str], source: str) -> str:
    """A link to one of the notes (or to nothing), in one of the forms a vault holds."""
    path = rng.choice(notes + ["Nowhere.md"]).removesuffix(".md")
    folder = source.rpartition("/")[0]
    target = rng.choice([
        path.rpartition("/")[2],  # bare name
        path,  # from the root
        "/" + path,
        "/".join(path.split("/")[-2:]),  # partial path
        ("../" * len(folder.split("/")) if folder else "./") + path,  # relative
    ])
    tail = rng.choice(["", "#Goals", "#^b1", "|shown", "#Goals|shown"])
    if rng.random() < 0.3:
        destination = quote(target) + ".md" + tail.partition("|")[0].replace(" ", "%20")
        return f"[{tail.partition('|')[2] or 'text'}]({destination})"
    return rng.choice(["", "!"]) + f"[[{target}{tail}]]"


@pytest.mark.parametrize("seed", range(40))
def test_random_vaults_and_moves_keep_every_link_on_its_note(step, tmp_path, seed):
    rng = random.Random(seed)
    paths = sorted({rng.choice(FOLDERS) + rng.choice(NAMES) + ".md" for _ in range(9)})
    notes = {}
    for path in paths:
        links = [random_link(rng, paths, path) for _ in range(6)]
        front = f'---\nup: "{links[0]}"\n---\n' if "[[" in links[0] else ""
        notes[path] = front + "# Goals\ntext ^b1\n" + " and ".join(links[1:]) + "\n"
    old = rng.choice(paths)
    new = next(new for new in (rng.choice(FOLDERS) + rng.choice(NAMES + ["Fresh"]) + ".md" for _ in range(50))
               if new not in paths and new.lower() not in {path.lower() for path in paths})
    move(step, tmp_path, notes, old, new, {"newLinkFormat": rng.choice(["shortest", "relative", "absolute"])})
