"""Step 10 reads Obsidian's excluded files (userIgnoreFilters in .obsidian/app.json), over
real HTTP on temporary vaults: the notes they match are left out of listings, search and
related notes, as Obsidian leaves them out of its search and graph, yet can be opened,
their links resolve and they show as backlinks. A broken or hostile app.json is a log
line, never a crash nor a hang."""
import json
import os
import subprocess
import sys
import time

import pytest

from helpers import McpClient, rpc, step_modules
from launch import running_server
from manifest import find_step

STEP = 10
FILTERS = ["Archive/", "/\\.draft\\.md$/"]
NOTES = {
    "Home.md": "# Home\n\n[[Old]] and [[Plan.draft]] and [[Kept]].\n",
    "Kept.md": "# Kept\n\nkeptword [[Home]]\n",
    "Archive/Old.md": "# Old\n\nwombatword, an archived note that links [[Home]].\n",
    "Notes/Plan.draft.md": "# Plan\n\ndraftword, a draft. [[Home]]\n",
    "Archived thoughts.md": "# Thoughts\n\nNot in the folder Archive/, but a prefix of letters: excluded too.\n",
}
EXCLUDED = {"Archive/Old.md", "Notes/Plan.draft.md", "Archived thoughts.md"}


def make_vault(folder, app_json):
    for path, text in NOTES.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text, encoding="utf-8")
    (folder / ".obsidian").mkdir()
    (folder / ".obsidian" / "app.json").write_text(app_json, encoding="utf-8")
    return folder


def connect(url) -> McpClient:
    client = McpClient(url)
    client.session_id = client.open_session()
    return client


def ask(server, tool, **arguments) -> dict:
    reply = server.send(server.session_id, rpc("tools/call", name=tool, arguments=arguments)).json()["result"]
    assert reply["isError"] is False, reply
    return reply["structuredContent"]


def paths(answer: dict, key: str) -> set[str]:
    return {item["path"] for item in answer[key]}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    settings = json.dumps({"newFileFolderPath": "Inbox", "userIgnoreFilters": ["Archive", FILTERS[1]]})
    vault = make_vault(tmp_path_factory.mktemp("excluded") / "vault", settings)
    with running_server(find_step(STEP).server, "--vault", str(vault), timeout=30) as (url, log):
        client = connect(url)
        client.log, client.vault = log, vault
        ask(client, "search_vault", query="warm up", limit=1)  # waits for the first index
        yield client


def test_listings_leave_excluded_files_out(server):
    assert ask(server, "list_notes")["notes"] == ["Home.md", "Kept.md"]
    assert ask(server, "list_notes", folder="Archive")["notes"] == []
    listed = server.send(server.session_id, rpc("resources/list")).json()["result"]["resources"]
    assert [resource["uri"] for resource in listed] == ["vault:///Home.md", "vault:///Kept.md"]


@pytest.mark.parametrize("word", ["wombatword", "draftword", "prefix"])
def test_search_finds_no_excluded_file(server, word):
    for mode in ["keyword", "hybrid"]:
        assert not paths(ask(server, "search_vault", query=word, limit=10, mode=mode), "results") & EXCLUDED


def test_related_notes_suggest_no_excluded_file(server):
    assert paths(ask(server, "related_notes", path="Home", limit=30), "related") == {"Kept.md"}


@pytest.mark.parametrize("asked,path", [("Archive/Old", "Archive/Old.md"), ("Old", "Archive/Old.md"),
                                        ("Notes/Plan.draft.md", "Notes/Plan.draft.md")])
def test_an_excluded_file_still_opens_as_in_obsidian(server, asked, path):
    assert ask(server, "get_note", path=asked)["path"] == path


def test_links_to_excluded_files_resolve_and_they_are_backlinks(server):
    answer = ask(server, "get_backlinks", path="Home")
    assert answer["unresolved"] == []
    assert paths(answer, "backlinks") == {"Kept.md", "Archive/Old.md", "Notes/Plan.draft.md"}


def test_an_excluded_file_that_changes_is_followed_by_links_not_by_search(server):
    note = server.vault / "Archive" / "Old.md"
    note.write_text("# Old\n\nnumbatword now, linking [[Kept]] and still [[Home]].\n", encoding="utf-8")
    deadline = time.monotonic() + 10
    while "Archive/Old.md" not in paths(ask(server, "get_backlinks", path="Kept"), "backlinks"):
        assert time.monotonic() < deadline, "the watcher never brought the excluded note's new link"
        time.sleep(0.1)
    assert not paths(ask(server, "search_vault", query="numbatword", limit=10, mode="keyword"), "results") & EXCLUDED


HOSTILE_SETTINGS = [
    ("not json", "{ userIgnoreFilters: [Archive/"),
    ("a list", json.dumps(FILTERS)),
    ("a string", json.dumps({"userIgnoreFilters": "Archive/"})),
    ("not utf-8", b"\xff\xfe{}".decode("latin-1")),
]


@pytest.mark.parametrize("why,app_json", HOSTILE_SETTINGS, ids=[why for why, _ in HOSTILE_SETTINGS])
def test_a_broken_app_json_is_one_log_line_and_excludes_nothing(tmp_path, why, app_json):
    vault = make_vault(tmp_path / "vault", app_json)
    if why == "not utf-8":
        (vault / ".obsidian" / "app.json").write_bytes(b"\xff\xfe\x00{")
    with running_server(find_step(STEP).server, "--vault", str(vault), timeout=30) as (url, log):
        assert len(ask(connect(url), "list_notes")["notes"]) == len(NOTES)
        log_text = log.read_text()
    said = [line for line in log_text.splitlines() if "excluded files:" in line]
    assert len(said) == 1 and "no note is excluded" in said[0], said
    assert "Traceback" not in log_text


def test_bad_filters_are_skipped_one_by_one_and_a_catastrophic_pattern_hangs_nothing(tmp_path):
    filters = ["Archive/", 42, "", "/(/", "/(a+)+$/", "/((a|b)*c)+x/", FILTERS[1]]
    vault = make_vault(tmp_path / "vault", json.dumps({"userIgnoreFilters": filters}))
    (vault / ("a" * 60 + "!.md")).write_text("a long name that (a+)+$ would take ages on\n", encoding="utf-8")
    started = time.monotonic()
    with running_server(find_step(STEP).server, "--vault", str(vault), timeout=30) as (url, log):
        listed = ask(connect(url), "list_notes")["notes"]
        said = [line for line in log.read_text().splitlines() if "excluded files: skipping" in line]
    assert time.monotonic() - started < 20
    # the good filters still hold; "Archive/" is the folder only
    assert set(listed) == {"Home.md", "Kept.md", "Archived thoughts.md", "a" * 60 + "!.md"}
    assert len(said) == 5, said  # 42, "", the broken one, the two that repeat a repeat


def test_a_filter_of_one_character_is_a_prefix_and_an_empty_one_matches_nothing(tmp_path):
    """"_" leaves out "_templates/" and every path that starts with "_", as in Obsidian; ""
    would match every path, so it is skipped, and "B.md" stays in."""
    with step_modules(find_step(STEP).path):
        from excluded_files import ExcludedFiles
    (tmp_path / ".obsidian").mkdir()
    (tmp_path / ".obsidian" / "app.json").write_text(json.dumps({"userIgnoreFilters": ["_", "", "x"]}))
    excluded = ExcludedFiles.read(tmp_path)
    assert [excluded(path) for path in ("_templates/Day.md", "_Draft.md", "x.md", "B.md", "B/_x.md")] == [
        True, True, True, False, False]


def test_help_says_that_app_json_is_read_and_how_to_deny_folders():
    said = subprocess.run([sys.executable, str(find_step(STEP).server), "--help"], capture_output=True, text=True,
                          timeout=30).stdout
    assert ".obsidian/app.json" in said and "userIgnoreFilters" in said
    assert "--exclude FOLDER" in said and "VAULT_MCP_EXCLUDE" in said


def test_a_change_of_settings_while_stopped_moves_notes_into_search_and_out_of_it(tmp_path):
    vault, index_dir = make_vault(tmp_path / "vault", json.dumps({"userIgnoreFilters": ["Archive/"]})), tmp_path / "index"
    flags = ("--vault", str(vault), "--index-dir", str(index_dir))
    a_minute_ago = time.time_ns() - 60 * 10**9
    for note in vault.rglob("*.md"):  # old enough for reconcile to trust their stamps and not read them
        os.utime(note, ns=(a_minute_ago, a_minute_ago))

    def found(client, word):
        return paths(ask(client, "search_vault", query=word, limit=10, mode="keyword"), "results")

    with running_server(find_step(STEP).server, *flags, timeout=30) as (url, _log):
        client = connect(url)
        assert found(client, "wombatword") == set() and found(client, "keptword") == {"Kept.md"}
    # Obsidian now hides Kept.md and shows the archive again; no note has changed.
    (vault / ".obsidian" / "app.json").write_text(json.dumps({"userIgnoreFilters": ["Kept.md"]}), encoding="utf-8")
    with running_server(find_step(STEP).server, *flags, timeout=30) as (url, _log):
        client = connect(url)
        deadline = time.monotonic() + 20
        while "stale" in ask(client, "search_vault", query="keptword", limit=1, mode="keyword"):
            assert time.monotonic() < deadline, "reconcile never finished"
            time.sleep(0.1)
        assert found(client, "keptword") == set()
        assert found(client, "wombatword") == {"Archive/Old.md"}
        assert "Kept.md" in paths(ask(client, "get_backlinks", path="Home"), "backlinks")  # still linked
