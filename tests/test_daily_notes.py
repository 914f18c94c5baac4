"""daily_note over real HTTP, in every step that has it (step 8 on), on a temporary vault
whose Obsidian settings each test writes (the server reads them at every call): the note
is named as the Daily notes core plugin names it, or Periodic Notes when its daily notes
are enabled; a missing note is created from its template and appended to; an existing
one only grows. Refusals: a date that is no date, settings that are not JSON, a missing
template, a denied folder (step 10's deny list)."""
import datetime
import json
import time

import pytest

from helpers import distinct_copies, step_modules, tool_data, tool_refusal, tool_session
from launch import running_server
from manifest import find_step

# The tool is daily_notes.py, wired in tools.py: every step where either differs.
STEPS = sorted(set(distinct_copies("daily_notes.py", since=8)) | set(distinct_copies("tools.py", since=8)))
WATCHER_FROM = 9  # from here the watcher, not the tool, tells the link graph
DENY_LIST_FROM = 10  # --exclude
TEMPLATE = "---\ntags: [daily]\n---\n# {{title}}\n\n{{date:dddd, MMMM Do YYYY}}, week {{date:W}}. [[{{yesterday}}]]\n"
CORE = {"folder": "Journal", "format": "YYYY-MM-DD dddd", "template": "Templates/Daily"}


@pytest.fixture(scope="module", params=STEPS, ids=lambda number: f"step{number:02d}")
def step(request):
    return find_step(request.param)


@pytest.fixture(scope="module")
def vault(step, tmp_path_factory):
    root = tmp_path_factory.mktemp(f"daily{step.number}") / "vault"
    (root / ".obsidian" / "plugins" / "periodic-notes").mkdir(parents=True)
    (root / "Templates").mkdir()
    (root / "Templates" / "Daily.md").write_text(TEMPLATE, encoding="utf-8")
    (root / "Journal").mkdir()
    (root / "Journal" / "2026-04-04 Saturday.md").write_text("# Saturday\n\nBaked focaccia.", encoding="utf-8")
    (root / "Journal" / "2026-04-03 Friday.md").write_text("# Friday\n\nFed the starter.\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def server(step, vault):
    deny = ["--exclude", "Private"] if step.number >= DENY_LIST_FROM else []
    with running_server(step.server, "--vault", str(vault), *deny, timeout=30) as (url, _log):
        yield tool_session(url, step.path)


@pytest.fixture
def settings(vault):
    """Write the core plugin's settings (and, if given, Periodic Notes'); gone after the test."""
    core, periodic = vault / ".obsidian" / "daily-notes.json", vault / ".obsidian" / "plugins" / "periodic-notes" / "data.json"

    def write(core_settings=CORE, periodic_settings=None):
        core.write_text(core_settings if isinstance(core_settings, str) else json.dumps(core_settings))
        if periodic_settings is not None:
            periodic.write_text(json.dumps(periodic_settings))

    yield write
    core.unlink(missing_ok=True)
    periodic.unlink(missing_ok=True)


def test_the_note_is_found_where_obsidians_settings_name_it(server, settings):
    settings()
    note = tool_data(server, "daily_note", date="2026-04-03")  # a note no other test changes
    assert note["path"] == "Journal/2026-04-03 Friday.md" and note["exists"] is True
    assert note["text"] == "# Friday\n\nFed the starter.\n" and note["uri"] == "vault:///Journal/2026-04-03%20Friday.md"


def test_a_missing_note_is_created_from_its_template_then_appended_to(server, settings, vault):
    settings()
    assert tool_data(server, "daily_note", date="2026-04-05") | {"uri": ""} == {
        "date": "2026-04-05", "path": "Journal/2026-04-05 Sunday.md", "uri": "", "exists": False}
    note = tool_data(server, "daily_note", date="2026-04-05", append="- Fed the starter at 8.")
    expected = ("---\ntags: [daily]\n---\n# 2026-04-05 Sunday\n\nSunday, April 5th 2026, week 14. "
                "[[2026-04-04 Saturday]]\n- Fed the starter at 8.\n")
    assert note["created"] is True and note["text"] == expected
    assert (vault / "Journal" / "2026-04-05 Sunday.md").read_text(encoding="utf-8") == expected
    again = tool_data(server, "daily_note", date="2026-04-05", append="- Mixed at 10.\n")
    assert again["created"] is False and again["text"] == expected + "- Mixed at 10.\n"


def test_an_append_starts_on_a_line_of_its_own_and_leaves_the_rest_alone(server, settings, vault):
    settings()
    note = tool_data(server, "daily_note", date="2026-04-04", append="Shared it.")
    assert note["text"] == "# Saturday\n\nBaked focaccia.\nShared it.\n"
    assert (vault / "Journal" / "2026-04-04 Saturday.md").read_bytes() == note["text"].encode()


def test_without_a_date_it_is_todays_note_in_the_servers_time_zone(server, settings):
    settings({"format": "YYYY-MM-DD"})  # no folder: the vault's root, as in Obsidian
    note = tool_data(server, "daily_note")
    today = datetime.date.today().isoformat()  # the test runs beside the server, in its zone
    assert note["date"] == today and note["path"] == f"{today}.md"


def test_without_settings_obsidians_defaults_name_it(server):
    assert tool_data(server, "daily_note", date="2026-04-06")["path"] == "2026-04-06.md"


def test_periodic_notes_settings_win_when_its_daily_notes_are_enabled(server, settings):
    periodic = {"daily": {"enabled": True, "folder": "Days/", "format": "YYYY/MM/DD", "template": ""}}
    settings(CORE, periodic)
    assert tool_data(server, "daily_note", date="2026-04-07")["path"] == "Days/2026/04/07.md"
    settings(CORE, {"daily": dict(periodic["daily"], enabled=False)})
    assert tool_data(server, "daily_note", date="2026-04-07")["path"] == "Journal/2026-04-07 Tuesday.md"


def test_a_format_makes_folders_and_keeps_bracketed_text(server, settings, vault):
    settings({"folder": "Log", "format": "YYYY/[Week] ww/YYYY-MM-DD"})
    note = tool_data(server, "daily_note", date="2026-01-01", append="New year.")
    assert note["path"] == "Log/2026/Week 01/2026-01-01.md" and note["created"] is True
    assert (vault / "Log" / "2026" / "Week 01" / "2026-01-01.md").read_text() == "New year.\n"


@pytest.mark.parametrize("arguments, words", [
    ({"date": "tomorrow"}, 'date: "tomorrow" is not an ISO 8601 date'),
    ({"date": "2026-02-30"}, 'date: "2026-02-30" is not an ISO 8601 date'),
    ({"date": "0001-01-01"}, 'date: "0001-01-01" is outside the days a daily note may have'),
    ({"date": "9999-12-31", "append": "x"}, 'date: "9999-12-31" is outside the days'),
    ({"append": ""}, "append: must be a string (length 1 to 100000)"),
    ({"append": "a\u0000b"}, "NUL character"),
])
def test_what_a_model_gets_wrong_is_refused(server, settings, arguments, words):
    settings()
    assert words in tool_refusal(server, "daily_note", **arguments)


def test_settings_that_are_not_json_are_refused_and_nothing_is_written(server, settings, vault):
    settings('{"folder": "Journal", "format": ')
    before = sorted(vault.rglob("*.md"))
    words = tool_refusal(server, "daily_note", date="2026-04-08", append="x")
    assert ".obsidian/daily-notes.json is not JSON" in words
    settings({"folder": 7})
    assert "folder is 7, not text" in tool_refusal(server, "daily_note", date="2026-04-08")
    assert sorted(vault.rglob("*.md")) == before


def test_a_missing_template_is_refused_and_nothing_is_written(server, settings, vault):
    settings(dict(CORE, template="Templates/Gone"))
    words = tool_refusal(server, "daily_note", date="2026-04-09", append="x")
    assert 'template "Templates/Gone" is not a note of the vault; nothing was written' in words
    assert not (vault / "Journal" / "2026-04-09 Thursday.md").exists()


def test_a_daily_note_in_a_denied_folder_is_neither_read_nor_written(step, server, settings, vault):
    if step.number < DENY_LIST_FROM:
        pytest.skip(f"the deny list comes in step {DENY_LIST_FROM}")
    (vault / "Private").mkdir(exist_ok=True)
    (vault / "Private" / "2026-04-10.md").write_text("secret", encoding="utf-8")
    settings({"folder": "private"})
    for arguments in ({}, {"append": "x"}):
        assert "deny list" in tool_refusal(server, "daily_note", date="2026-04-10", **arguments)
    assert (vault / "Private" / "2026-04-10.md").read_text() == "secret"


def backlink_paths(server, path):
    return [backlink["path"] for backlink in tool_data(server, "get_backlinks", path=path)["backlinks"]]


def test_a_link_an_append_adds_is_a_backlink(step, server, settings):
    """Step 8 has no watcher: the tool itself tells the link graph, so the backlink is
    there at once. From step 9 the watcher tells it, a moment later."""
    settings()
    target, daily = "Journal/2026-04-03 Friday.md", "Journal/2026-04-12 Sunday.md"
    assert daily not in backlink_paths(server, target)  # the graph is built before the append
    tool_data(server, "daily_note", date="2026-04-12", append="Baked again, fed as on [[2026-04-03 Friday]].")
    deadline = time.monotonic() + (0 if step.number < WATCHER_FROM else 10)
    while daily not in backlink_paths(server, target) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert daily in backlink_paths(server, target)


@pytest.mark.parametrize("when, format, written", [
    ("2026-01-01T15:04:05", "YYYY-MM-DD dddd", "2026-01-01 Thursday"),
    ("2026-01-01T15:04:05", "ddd D MMM YY, h:mm a", "Thu 1 Jan 26, 3:04 pm"),
    ("2026-03-22T09:00:00", "Do MMMM, [day] DDDD, Q", "22nd March, day 081, 1"),
    ("2025-12-28T00:00:00", "gggg-[W]ww GGGG-[W]WW e E", "2026-W01 2025-W52 0 7"),
    ("2027-01-01T00:00:00", "GGGG-[W]WW-E", "2026-W53-5"),
    ("2026-04-11T12:00:00", "[YYYY] YYYY/MM/DD HH:mm:ss A", "YYYY 2026/04/11 12:00:00 PM"),
])
def test_moment_formats_are_written_as_moment_writes_them(step, when, format, written):
    with step_modules(step.path):
        from daily_notes import moment_format
    assert moment_format(datetime.datetime.fromisoformat(when), format) == written


def test_it_is_announced_as_a_write(step):
    with step_modules(step.path):
        from tools import TOOLS
    hints = TOOLS["daily_note"].annotations
    assert hints["readOnlyHint"] is False and hints["destructiveHint"] is False and hints["idempotentHint"] is False


# An append is a write like any other: the write policy holds it, and the journal takes it back.

def policy_server(step, vault, *flags):
    return running_server(step.server, "--vault", str(vault), *flags, timeout=30)


def test_a_read_only_server_reads_the_daily_note_and_refuses_to_append(step, tmp_path):
    vault = tmp_path / "vault"
    (vault / "Journal").mkdir(parents=True)
    (vault / ".obsidian").mkdir()
    (vault / ".obsidian" / "daily-notes.json").write_text(json.dumps({"folder": "Journal"}))
    (vault / "Journal" / "2026-04-03.md").write_text("Fed the starter.\n")
    with policy_server(step, vault, "--read-only") as (url, _log):
        client = tool_session(url, step.path)
        assert tool_data(client, "daily_note", date="2026-04-03")["text"] == "Fed the starter.\n"
        assert "read-only" in tool_refusal(client, "daily_note", date="2026-04-03", append="More.")
        assert "read-only" in tool_refusal(client, "daily_note", date="2026-04-04", append="New.")
    assert (vault / "Journal" / "2026-04-03.md").read_text() == "Fed the starter.\n"
    assert not (vault / "Journal" / "2026-04-04.md").exists()


def test_an_append_outside_the_write_folders_is_refused(step, tmp_path):
    vault = tmp_path / "vault"
    (vault / "Journal").mkdir(parents=True)
    (vault / ".obsidian").mkdir()
    (vault / ".obsidian" / "daily-notes.json").write_text(json.dumps({"folder": "Journal"}))
    with policy_server(step, vault, "--write-folder", "Inbox") as (url, _log):
        client = tool_session(url, step.path)
        assert "outside the folders" in tool_refusal(client, "daily_note", date="2026-04-04", append="New.")
    assert not (vault / "Journal" / "2026-04-04.md").exists()


def test_undo_takes_back_an_append_to_the_byte_and_a_created_note_to_the_trash(step, tmp_path):
    vault = tmp_path / "vault"
    (vault / "Journal").mkdir(parents=True)
    (vault / ".obsidian").mkdir()
    (vault / ".obsidian" / "daily-notes.json").write_text(json.dumps({"folder": "Journal"}))
    existing = vault / "Journal" / "2026-04-03.md"
    existing.write_bytes(b"Fed the starter.")  # no line end: the append adds one
    with policy_server(step, vault, "--index-dir", str(tmp_path / "index")) as (url, _log):
        client = tool_session(url, step.path)
        appended = tool_data(client, "daily_note", date="2026-04-03", append="Mixed at 10.")
        assert existing.read_bytes() == b"Fed the starter.\nMixed at 10.\n"
        tool_data(client, "undo_edit", editId=appended["editId"])
        assert existing.read_bytes() == b"Fed the starter."
        created = tool_data(client, "daily_note", date="2026-04-04", append="New.")
        assert created["created"] is True and (vault / "Journal" / "2026-04-04.md").exists()
        tool_data(client, "undo_edit", editId=created["editId"])
    assert not (vault / "Journal" / "2026-04-04.md").exists()
    assert [path.name for path in (vault / ".trash").rglob("*.md")] == ["2026-04-04.md"]


@pytest.mark.parametrize("core_settings, words", [
    ({"folder": "../Outside", "format": "YYYY-MM-DD"}, "contains '..'"),
    ({"folder": "Journal", "format": "[../../]YYYY-MM-DD"}, "contains '..'"),
    ({"folder": ".obsidian", "format": "YYYY-MM-DD"}, 'goes into ".obsidian"'),
])
def test_settings_that_lead_out_of_the_vault_or_into_its_hidden_folders_are_refused(
        server, settings, vault, core_settings, words):
    """The settings file is the user's, but a synced or shared vault may carry any: the
    name it makes is judged like a path from a model, before anything is written."""
    settings(core_settings)
    before = sorted(path for path in vault.parent.rglob("*"))
    assert words in tool_refusal(server, "daily_note", date="2026-05-01", append="x")
    assert sorted(path for path in vault.parent.rglob("*")) == before
