"""list_notes answers questions about time (step 4 on) and properties (step 5 on), over
real HTTP on a temporary vault whose notes have modification times set with os.utime:
sorted by modification or creation, filtered by time and by properties, a page at a
time, with the deny list and Obsidian's excluded files kept out (step 10); refusals for
what a model gets wrong (a date that is no date, a `where` that is no condition, a cursor
of another sort). Each distinct copy of note_queries.py is run, and step 10, which wires
in the deny list."""
import datetime
import json
import os

import pytest

from helpers import distinct_copies, tool_call, tool_data, tool_refusal, tool_session
from launch import running_server
from manifest import find_step

STEPS = sorted(set(distinct_copies("note_queries.py", since=4)) | {10})
PROPERTIES_SINCE = 5  # where, and the created property
UTC = datetime.timezone.utc


def at(text: str) -> int:
    """An ISO time in UTC as nanoseconds, for os.utime."""
    return int(datetime.datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()) * 10**9


# path -> (text, modified at, in UTC)
NOTES = {
    "Home.md": ("# Home\n", "2026-03-01T08:00:00"),
    "Drafts/Essay.md": ("---\nstatus: draft\n---\n# Essay\n", "2026-04-02T09:00:00"),
    "Drafts/Poem.md": ("---\nStatus: Draft\ntags: [verse]\n---\n", "2026-04-03T10:00:00"),
    "Done/Report.md": ("---\nstatus: done\ncreated: 2025-12-24\n---\n", "2026-04-04T11:00:00"),
    "Done/Plan.md": ("---\nstatus: [done, draft]\n---\n", "2026-03-20T12:00:00"),
    "Tagged.md": ("---\ntags: [draft, idea]\nrating: 3\nflag: true\n---\n", "2026-04-05T13:00:00"),
    "Private/Secret.md": ("---\nstatus: draft\n---\n", "2026-04-06T14:00:00"),  # denied
    "Archive/Old.md": ("---\nstatus: draft\n---\n", "2026-04-07T15:00:00"),  # excluded by Obsidian
}
DENIED = ("Private/", "Archive/")  # the deny list and Obsidian's excluded files: step 10
LISTED = sorted(path for path in NOTES if not path.startswith(DENIED))


def make_vault(folder, step):
    for path, (text, modified) in NOTES.items():
        if step < 10 and path.startswith(DENIED):
            continue  # no deny list yet: the step would list them
        file = folder / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text, encoding="utf-8")
        os.utime(file, ns=(at(modified), at(modified)))
    (folder / ".obsidian").mkdir()
    (folder / ".obsidian" / "app.json").write_text(json.dumps({"userIgnoreFilters": ["Archive/"]}))
    return folder


@pytest.fixture(scope="module", params=STEPS, ids=lambda number: f"step{number}")
def step(request):
    return request.param


@pytest.fixture(scope="module")
def vault(tmp_path_factory, step):
    return make_vault(tmp_path_factory.mktemp("time") / "vault", step)


@pytest.fixture(scope="module")
def server(vault, step):
    found = find_step(step)
    deny = ["--exclude", "Private"] if step >= 10 else []
    with running_server(found.server, "--vault", str(vault), *deny, timeout=30) as (url, _log):
        yield tool_session(url, found.path)


@pytest.fixture
def properties(step):
    if step < PROPERTIES_SINCE:
        pytest.skip(f"step {step} reads no properties")


def listed(server, **arguments) -> list[str]:
    return tool_data(server, "list_notes", limit=200, **arguments)["notes"]


def test_every_entry_carries_its_title_and_modification_time(server, vault):
    answer = tool_data(server, "list_notes", limit=200)
    assert answer["notes"] == LISTED == [entry["path"] for entry in answer["entries"]]
    for entry in answer["entries"]:
        modified = datetime.datetime.fromtimestamp(os.stat(vault / entry["path"]).st_mtime, UTC)
        assert entry["modified"] == modified.isoformat(timespec="seconds").replace("+00:00", "Z")
        assert entry["title"] == entry["path"].rsplit("/", 1)[-1].removesuffix(".md")


def test_sorted_by_modification_the_note_touched_last_comes_first(server, vault):
    newest_first = sorted(LISTED, key=lambda path: NOTES[path][1], reverse=True)
    assert listed(server, sort="modified") == newest_first
    os.utime(vault / "Home.md", ns=(at("2026-05-01T00:00:00"),) * 2)  # touched last
    try:
        assert listed(server, sort="modified")[0] == "Home.md"
    finally:
        os.utime(vault / "Home.md", ns=(at(NOTES["Home.md"][1]),) * 2)


def test_modified_after_gives_exactly_the_notes_changed_since(server):
    assert listed(server, modifiedAfter="2026-04-03T10:00:00Z") == ["Done/Report.md", "Drafts/Poem.md", "Tagged.md"]
    assert listed(server, modifiedAfter="2026-04-03T10:00:01Z") == ["Done/Report.md", "Tagged.md"]
    # Before is strict, after is not: two calls that share a boundary never list a note twice.
    assert listed(server, modifiedBefore="2026-04-03T10:00:00Z") == ["Done/Plan.md", "Drafts/Essay.md", "Home.md"]
    assert listed(server, modifiedAfter="2026-04-02T10:00:00+01:00", modifiedBefore="2026-04-04T00:00:00Z") == [
        "Drafts/Essay.md", "Drafts/Poem.md"]


def test_a_date_without_a_zone_is_the_servers_local_time(server):
    # A whole day of margin each side: whatever the zone, Tagged (5 April) is after 4 April's start, and
    # Report (4 April, 11:00 UTC) is before 6 April's.
    assert "Tagged.md" in listed(server, modifiedAfter="2026-04-05")
    assert "Tagged.md" not in listed(server, modifiedAfter="2026-04-07")
    assert "Done/Report.md" in listed(server, modifiedBefore="2026-04-06")


def test_where_gives_exactly_the_notes_with_that_property(server, properties):
    # Text ignores case (Status: Draft), a list property matches by one of its items.
    assert listed(server, where={"status": "draft"}) == ["Done/Plan.md", "Drafts/Essay.md", "Drafts/Poem.md"]
    assert listed(server, where={"tags": "draft"}) == ["Tagged.md"]
    assert listed(server, where={"status": {"exists": True}}) == [
        "Done/Plan.md", "Done/Report.md", "Drafts/Essay.md", "Drafts/Poem.md"]
    assert listed(server, where={"status": {"exists": False}}) == ["Home.md", "Tagged.md"]
    assert listed(server, where={"rating": 3, "flag": True}) == ["Tagged.md"]
    assert listed(server, where={"rating": "3"}) == []  # the text "3" is not the number 3
    assert listed(server, where={"flag": 1}) == []  # nor is true the number 1
    assert listed(server, where={"status": "draft"}, folder="Drafts", sort="modified") == [
        "Drafts/Poem.md", "Drafts/Essay.md"]


def test_denied_and_excluded_notes_stay_out_of_every_question(server, step):
    if step < 10:
        pytest.skip("the deny list and Obsidian's excluded files come with step 10")
    for arguments in ({"where": {"status": "draft"}}, {"sort": "modified"}, {"sort": "created"},
                      {"modifiedAfter": "2026-04-06T00:00:00Z"}):
        assert not {"Private/Secret.md", "Archive/Old.md"} & set(listed(server, **arguments)), arguments


def test_pages_sorted_by_modification_give_every_note_once_in_order(server):
    seen, cursor = [], None
    while True:
        page = tool_data(server, "list_notes", sort="modified", limit=2, **({"cursor": cursor} if cursor else {}))
        seen += page["notes"]
        cursor = page.get("nextCursor")
        if not cursor:
            break
    assert seen == sorted(LISTED, key=lambda path: NOTES[path][1], reverse=True)


def test_created_is_the_birth_time_else_the_created_property_else_the_modification(server, vault, properties):
    entries = {entry["path"]: entry for entry in tool_data(server, "list_notes", sort="created", limit=200)["entries"]}
    if hasattr(os.stat(vault / "Home.md"), "st_birthtime"):
        pytest.skip("this file system records birth times, which come first")
    local_midnight = datetime.datetime.fromisoformat("2025-12-24").astimezone().astimezone(UTC)
    assert entries["Done/Report.md"]["created"] == local_midnight.isoformat().replace("+00:00", "Z")
    assert entries["Home.md"]["created"] == entries["Home.md"]["modified"]
    assert list(entries)[-1] == "Done/Report.md"  # created first, so listed last


@pytest.mark.parametrize("arguments, words", [
    ({"modifiedAfter": "last week"}, "modifiedAfter: \"last week\" is not an ISO 8601 date"),
    ({"modifiedBefore": "2026-13-01"}, "modifiedBefore: \"2026-13-01\" is not an ISO 8601 date"),
    ({"modifiedAfter": "0001-01-01T00:00:00+14:00"}, None),  # the first moment there is: every note
    ({"modifiedBefore": "9999-12-31"}, None),
    ({"where": "status=draft"}, "where: must be an object"),
    ({"where": {"status": {"equals": "draft"}}}, "where.status: {\"equals\": \"draft\"} is not a condition"),
    ({"where": {"status": ["draft", "done"]}}, "where.status: give one value, not a list"),
    ({"sort": "size"}, "sort: must be one of \"path\", \"modified\", \"created\""),
])
def test_what_a_model_gets_wrong_is_refused_in_words_it_can_act_on(server, step, arguments, words):
    if step < PROPERTIES_SINCE and "where" in arguments:
        words = '"where": unknown field'  # refused all the same, before the step reads properties
    if words is None:  # the edges of the calendar are dates like any other
        assert listed(server, **arguments) == LISTED
        return
    assert words in tool_refusal(server, "list_notes", **arguments)


def test_a_cursor_of_one_sort_is_refused_by_another(server):
    by_time = tool_data(server, "list_notes", sort="modified", limit=2)["nextCursor"]
    by_path = tool_data(server, "list_notes", limit=2)["nextCursor"]
    assert "was given for another sort" in tool_refusal(server, "list_notes", cursor=by_time)
    assert "was not given for sort" in tool_refusal(server, "list_notes", sort="modified", cursor=by_path)
    assert tool_call(server, "list_notes", sort="modified", limit=2, cursor=by_time)["isError"] is False


def test_a_property_changed_since_the_last_question_counts(server, vault, properties):
    """The properties read for one question are kept for the next, while the note's stat
    stays the same: an edit changes it, and the note is read again."""
    assert "Home.md" not in listed(server, where={"status": "draft"})
    home, (text, modified) = vault / "Home.md", NOTES["Home.md"]
    home.write_text("---\nstatus: draft\n---\n" + text, encoding="utf-8")
    try:
        assert "Home.md" in listed(server, where={"status": "draft"})
    finally:
        home.write_text(text, encoding="utf-8")
        os.utime(home, ns=(at(modified), at(modified)))
    assert "Home.md" not in listed(server, where={"status": "draft"})
