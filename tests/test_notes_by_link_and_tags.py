"""Steps 8 to 10 over real HTTP, on a temporary vault made for it: get_note opens a note
by the name its links use, a bare alias is no link (as in Obsidian) but is named as a
hint, and list_tags counts every tag, nested tags for their parents."""
import time

import pytest

from helpers import tool_call as call
from helpers import tool_data as data
from helpers import tool_refusal as refusal
from helpers import tool_session
from launch import running_server
from manifest import find_step

LINK_STEPS = [8, 9, 10]  # the steps whose links.py and tools.py carry this
WATCHER_FROM = 9
TIMEOUT = 10.0  # only ever reached when a test fails

NOTES = {
    "Home.md": "[[Table view]] and [[Bases/Views|Table view]]\n\n#work\n",
    "Help/Internal links.md": "# Internal links\n\n### [[Properties]]\nprops here\n",
    "Bases/Views.md": "---\naliases: [Table view]\ntags: [work/tasks]\n---\n#work #Work/Tasks\n",
    "Bread/Troubleshooting.md": "#bake/crumb。after a full stop\n",
    "Ferments/Troubleshooting.md": "#ferment，next #cook👩\u200d🍳\n",
    # Two notes whose paths differ only in case (a case-sensitive disk): a path names one exactly.
    "Kitchen/notes.md": "lower\n",
    "Kitchen/Notes.md": "upper\n",
    "Code.md": "```\n#not-a-tag\n```\n`#nor-this` #work/meetings\n",
}


def start_server(number, vault):
    for path, text in NOTES.items():
        (vault / path).parent.mkdir(parents=True, exist_ok=True)
        (vault / path).write_text(text, encoding="utf-8")
    step = find_step(number)
    with running_server(step.server, "--vault", str(vault), timeout=30) as (url, _log):
        client = tool_session(url, step.path)
        client.vault, client.step = vault, number
        yield client


@pytest.fixture(scope="module", params=LINK_STEPS, ids=lambda number: f"step{number}")
def server(request, tmp_path_factory):
    yield from start_server(request.param, tmp_path_factory.mktemp(f"links{request.param}") / "vault")


# get_note by link name

@pytest.mark.parametrize("asked", ["Internal links", "internal LINKS", "Internal links.md", "help/internal links"])
def test_get_note_opens_a_note_the_way_a_link_names_it_and_says_which(server, asked):
    note = data(server, "get_note", path=asked)
    assert note["path"] == "Help/Internal links.md" and note["resolvedFrom"] == asked
    assert "candidates" not in note


def test_an_exact_path_opens_as_before_and_says_nothing_more(server):
    note = data(server, "get_note", path="Help/Internal links")
    assert note["path"] == "Help/Internal links.md" and "resolvedFrom" not in note


@pytest.mark.parametrize("asked,text", [("Kitchen/notes", "lower"), ("Kitchen/Notes", "upper")])
def test_an_exact_path_comes_before_a_link_that_would_pick_another_note(server, asked, text):
    # As a link, both spellings mean one note (the folder and shortest-path rule picks it);
    # as paths each names its own file, as it did before links were read.
    note = data(server, "get_note", path=asked)
    assert note["path"] == asked + ".md" and note["text"].strip() == text and "resolvedFrom" not in note


def test_a_name_two_notes_share_opens_the_one_a_link_would_and_lists_both(server):
    note = data(server, "get_note", path="troubleshooting")
    assert note["path"] == "Bread/Troubleshooting.md"  # no note at the root: the shortest path
    assert note["candidates"] == ["Bread/Troubleshooting.md", "Ferments/Troubleshooting.md"]


def test_every_link_target_get_note_returns_opens(server):
    links = data(server, "get_note", path="Home")["links"]
    assert data(server, "get_note", path=links[1]["target"])["path"] == "Bases/Views.md"


@pytest.mark.parametrize("asked,said", [
    ("Nowhere", "No note"),
    ("./Internal links", "No note"),  # a relative link names one path exactly, here from the root
    ("../Home", "'..'"),
    ("../../etc/passwd", "'..'"),
    ("/Internal links", "is absolute"),  # the vault's checks come first: a link may start with "/", a path not
    ("Help", "is a folder"),
    ("Table view", 'but "Table view" is an alias of Bases/Views.md: open that path'),
])
def test_what_names_no_note_is_still_refused(server, asked, said):
    assert said in refusal(server, "get_note", path=asked)


def test_a_heading_that_holds_a_link_is_found_by_its_text(server):
    note = data(server, "get_note", path="Internal links", heading="Properties")
    assert note["text"] == "### [[Properties]]\nprops here"


# A bare alias is no link

def test_a_link_to_an_alias_alone_is_unresolved_and_names_the_note_as_a_hint(server):
    home = data(server, "get_backlinks", path="Home")
    assert home["unresolved"] == ["Table view"] and home["aliasOf"] == {"Table view": "Bases/Views.md"}
    views = data(server, "get_backlinks", path="Bases/Views")
    assert [(b["path"], b["line"]) for b in views["backlinks"]] == [("Home.md", 1)]  # one link, not two
    assert "aliasOf" not in views


# list_tags

def test_list_tags_counts_notes_per_tag_and_children_count_for_their_parents(server):
    tags = {tag["tag"]: tag["notes"] for tag in data(server, "list_tags")["tags"]}
    assert tags == {
        "work": 3,  # Home, Views (tagged twice over, counted once) and Code (by work/meetings)
        "work/tasks": 1,
        "work/meetings": 1,
        "bake": 1,
        "bake/crumb": 1,  # "。" ends it
        "ferment": 1,  # "，" ends it
        "cook👩\u200d🍳": 1,  # the joiner stays inside
    }
    assert [tag["tag"] for tag in data(server, "list_tags")["tags"]] == sorted(tags)


def test_list_tags_takes_no_arguments(server):
    assert "Invalid arguments" in refusal(server, "list_tags", prefix="work")


# A server of its own, since it adds a note: from step 9 the watcher keeps the graph,
# and with it link names and tags, current.

@pytest.fixture(params=[n for n in LINK_STEPS if n >= WATCHER_FROM], ids=lambda number: f"step{number}")
def own_server(request, tmp_path):
    yield from start_server(request.param, tmp_path / "vault")


def test_a_note_written_while_the_server_runs_opens_by_name_and_brings_its_tags(own_server):
    server = own_server
    (server.vault / "Later").mkdir()
    (server.vault / "Later" / "Arrived late.md").write_text("#late/arrival\n", encoding="utf-8")
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        tags = {tag["tag"]: tag["notes"] for tag in data(server, "list_tags")["tags"]}
        if "late/arrival" in tags:
            break
        time.sleep(0.05)
    assert tags.get("late") == 1 and tags.get("late/arrival") == 1, tags
    assert data(server, "get_note", path="arrived LATE")["path"] == "Later/Arrived late.md"
