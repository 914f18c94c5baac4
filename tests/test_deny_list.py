"""Step 10's deny list (--exclude, VAULT_MCP_EXCLUDE) over real HTTP, on a temporary
vault: a note in a denied folder is as absent as a note that never existed, to every
tool, every resource, the index, the link graph and the watcher, however its path is
spelled, and whatever symbolic link leads to it."""
import os
import subprocess
import sys
import time
import unicodedata

import pytest

from helpers import McpClient, StdioServer, index_folder, rpc, step_modules
from launch import quiet_environment, running_server
from manifest import find_step
from test_step09_watcher import get_stream

STEP = 10  # the step where the deny list lands (vault.py, inbox.py, server.py)
SECRETS = ["zanzibarquux", "hushhush", "quokkaword", "santeword"]  # words only denied notes hold
MISSING = "No note"
OPEN_NOTES = {"Home.md", "Open/Target.md", "Open/Fresh.md", "privateer/Log.md"}
NFC_SANTE = unicodedata.normalize("NFC", "Santé")
NFD_SANTE = unicodedata.normalize("NFD", "Santé")

NOTES = {
    "Home.md": "# Home\n\n[[private/secret]] and [[secret]], ![[secret]], [[Other]], [[day]] and [[Target]].\n#open\n",
    "Open/Target.md": "# Target\n\nA plain note that the secret links to. #open\n",
    "private/secret.md": "# Secret\n\nzanzibarquux only here. #hushhush\n\n[[Home]] [[Target]]\n",
    "Private/Other.md": "# Other\n\nquokkaword in a folder whose name differs only in case. #hushhush/deep\n[[Home]]\n",
    f"Journal/{NFC_SANTE}/day.md": "# Day\n\nsanteword in a folder with an accent. [[Home]]\n",
    "privateer/Log.md": "# Log\n\nA folder whose name only begins like a denied one: it stays.\n",
}


def make_vault(folder):
    for path, text in NOTES.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text, encoding="utf-8")
    (folder / "Open" / "link-to-secret.md").symlink_to(folder / "private" / "secret.md")
    (folder / "Open" / "into-private").symlink_to(folder / "private", target_is_directory=True)
    # Links out of the vault inside a denied folder: refused as absent, not as "outside".
    outside = folder.parent / "outside"
    (outside / "folder").mkdir(parents=True, exist_ok=True)
    (outside / "note.md").write_text("outside\n", encoding="utf-8")
    (folder / "private" / "escape.md").symlink_to(outside / "note.md")
    (folder / "private" / "out").symlink_to(outside / "folder", target_is_directory=True)
    return folder


def start(vault, *args, index_dir=None):
    more = ["--index-dir", str(index_dir)] if index_dir else []
    return running_server(find_step(STEP).server, "--vault", str(vault), *more, *args, timeout=30)


def connect(url) -> McpClient:
    client = McpClient(url)
    client.url = url
    client.session_id = client.open_session()
    return client


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    return make_vault(tmp_path_factory.mktemp("deny") / "vault")


@pytest.fixture(scope="module")
def server(vault):
    # The accented folder is denied in its decomposed spelling; the disk has it composed.
    with start(vault, "--exclude", "private", "--exclude", f"journal/{NFD_SANTE}") as (url, log):
        client = connect(url)
        client.log = log
        ask(client, "search_vault", query="warm up", limit=1)  # waits for the first index
        yield client


def ask(server, method_or_tool, **arguments) -> dict:
    if "/" in method_or_tool:
        return server.send(server.session_id, rpc(method_or_tool, **arguments)).json()
    return server.send(server.session_id, rpc("tools/call", name=method_or_tool, arguments=arguments)).json()["result"]


def data(server, tool, **arguments) -> dict:
    result = ask(server, tool, **arguments)
    assert result["isError"] is False, result
    return result["structuredContent"]


def refusal(server, tool, **arguments) -> str:
    result = ask(server, tool, **arguments)
    assert result["isError"] is True, result
    return result["content"][0]["text"]


def assert_no_secret(answer) -> None:
    """No word of a denied note's text in an answer (a refusal may repeat the path asked)."""
    text = str(answer).casefold()
    leaked = [word for word in SECRETS if word in text]
    assert not leaked, f"{leaked} in {answer}"


def assert_no_denied_path(answer) -> None:
    """Nor a denied note's text, nor a path that is not one of the open notes."""
    assert_no_secret(answer)
    assert set(paths_in(answer)) <= OPEN_NOTES, answer


def without_fresh(listing: list[str]) -> list[str]:
    """A listing without the note the watcher's test writes, whichever test runs first."""
    return [item for item in listing if not item.endswith("Open/Fresh.md")]


def paths_in(answer):
    if isinstance(answer, dict):
        for key, value in answer.items():
            yield from [value] if key in ("path", "uri") else paths_in(value)
    elif isinstance(answer, list):
        for value in answer:
            yield from paths_in(value)


HOSTILE = [
    "private/secret", "private/secret.md", "Private/secret", "PRIVATE/SECRET.md", "./private/secret",
    "private//secret", "private/./secret", "private/secret/", "private\\secret", ".\\private\\secret.md",
    "/private/secret", "a/../private/secret", "private/../private/secret", "Private/Other", "private/other.md",
    "PRIVATE/OTHER", f"Journal/{NFC_SANTE}/day", f"Journal/{NFD_SANTE}/day", f"journal/{NFC_SANTE.upper()}/DAY.md",
    "Open/link-to-secret", "Open/link-to-secret.md", "Open/into-private/secret", "open/Into-Private/secret.md",
    "secret", "Secret", "Other", "day", "private", "Private/", "private%2Fsecret", "private/escape", "PRIVATE/escape.md",
]


@pytest.mark.parametrize("spelling", HOSTILE)
def test_get_note_answers_as_if_a_denied_note_did_not_exist(server, spelling):
    text = refusal(server, "get_note", path=spelling)
    assert_no_secret(text)
    assert text.startswith(MISSING) or "'..'" in text or "absolute" in text, text


@pytest.mark.parametrize("tool", ["get_backlinks", "related_notes"])
@pytest.mark.parametrize("spelling", ["private/secret", "Private/Other", f"Journal/{NFD_SANTE}/day", "Open/link-to-secret"])
def test_other_tools_that_take_a_path_refuse_it_the_same_way(server, tool, spelling):
    text = refusal(server, tool, path=spelling)
    assert text.startswith(MISSING), text
    assert_no_secret(text)


@pytest.mark.parametrize("tool", ["get_note", "get_backlinks", "related_notes"])
def test_the_refusal_of_a_denied_note_is_word_for_word_that_of_a_missing_one(server, tool):
    assert refusal(server, tool, path="private/secret") == \
        refusal(server, tool, path="private/absent").replace("absent", "secret")


def test_list_notes_shows_no_denied_note_whatever_the_folder(server):
    assert without_fresh(data(server, "list_notes")["notes"]) == ["Home.md", "Open/Target.md", "privateer/Log.md"]
    assert without_fresh(data(server, "list_notes", folder="Open")["notes"]) == ["Open/Target.md"]
    for folder in ["private", "Private", "./private/", "private\\", f"Journal/{NFD_SANTE}", "Open/into-private",
                   "private/out", "Private/Out/"]:
        text = refusal(server, "list_notes", folder=folder)
        assert text.startswith("No folder"), text


def test_search_finds_no_word_that_only_a_denied_note_holds(server):
    for word in ["zanzibarquux", "quokkaword", "santeword", "secret"]:
        for mode in ["hybrid", "keyword", "semantic"]:
            answer = data(server, "search_vault", query=word, limit=10, mode=mode)
            assert_no_denied_path(answer)
            assert {hit["path"] for hit in answer["results"]} <= OPEN_NOTES


def test_links_to_a_denied_note_resolve_as_to_no_note(server):
    answer = data(server, "get_backlinks", path="Home")
    assert answer["backlinks"] == []  # every note that links to Home is denied
    assert {"private/secret", "secret", "Other", "day"} <= set(answer["unresolved"])
    assert "Target" not in answer["unresolved"]


def test_a_denied_note_is_never_a_backlink_source(server):
    answer = data(server, "get_backlinks", path="Open/Target.md")
    assert [link["path"] for link in answer["backlinks"]] == ["Home.md"]
    assert_no_denied_path(answer)


def test_an_embed_of_a_denied_note_shows_nothing_of_it(server):
    answer = data(server, "get_note", path="Home")
    assert_no_secret(answer)
    assert "![[secret]]" in answer["text"]  # left as written, as an embed of a missing note
    assert not answer["text"].count("Embedded from")


def test_related_notes_name_no_denied_note(server):
    for path in ["Home.md", "Open/Target.md"]:
        answer = data(server, "related_notes", path=path, limit=30)
        assert_no_denied_path(answer)
        assert {note["path"] for note in answer["related"]} <= OPEN_NOTES


def test_list_tags_counts_no_tag_of_a_denied_note(server):
    answer = data(server, "list_tags")
    assert_no_denied_path(answer)
    assert "open" in str(answer)


def test_a_reindex_leaves_denied_notes_out(server):
    ask(server, "reindex")
    assert data(server, "search_vault", query="zanzibarquux", limit=10, mode="keyword")["results"] == []


def test_resources_list_and_read_know_no_denied_note(server):
    listed = ask(server, "resources/list")["result"]["resources"]
    assert without_fresh([resource["uri"] for resource in listed]) == [
        "vault:///Home.md", "vault:///Open/Target.md", "vault:///privateer/Log.md"]


@pytest.mark.parametrize("uri", [
    "vault:///private/secret.md", "vault:///%70rivate/secret.md", "vault:///private%2Fsecret.md",
    "vault:///Private/Secret.md", "VAULT:///private/secret.md", "vault:///./private/secret.md",
    "vault:///Open/link-to-secret.md", "vault:///Open/into-private/secret.md", "vault:///private%5Csecret.md",
    "vault:///Journal/Sante%CC%81/day.md", "vault:///Journal/Sant%C3%A9/day.md", "vault:///Private/Other.md",
])
def test_resources_read_and_subscribe_answer_not_found(server, uri):
    for method in ["resources/read", "resources/subscribe"]:
        answer = ask(server, method, uri=uri)
        assert "result" not in answer and answer["error"]["message"].startswith(MISSING), answer
        assert_no_secret(answer["error"])


def test_the_watcher_says_nothing_of_a_change_in_a_denied_folder(server, vault):
    stream = get_stream(server)
    try:
        (vault / "private" / "secret.md").write_text("zanzibarquux changed\n", encoding="utf-8")
        (vault / "private" / "new.md").write_text("zanzibarquux new\n", encoding="utf-8")
        (vault / "Open" / "Fresh.md").write_text("a marker note\n", encoding="utf-8")  # a change it must tell
        first = stream.next("notifications/resources/list_changed")
        time.sleep(0.5)  # the denied changes, seen in the same polls, had their chance to be told
        told = [first]
        while not stream.messages.empty():
            told.append(stream.messages.get())
        assert_no_denied_path(told)
    finally:
        stream.close()
    assert data(server, "search_vault", query="zanzibarquux", limit=10, mode="keyword")["results"] == []
    assert "Open/Fresh.md" in data(server, "list_notes")["notes"]


def test_over_stdio_with_the_variable_a_denied_note_is_as_absent(tmp_path):
    vault = make_vault(tmp_path / "vault")
    env = quiet_environment(str(tmp_path / "index")) | {"VAULT_MCP_EXCLUDE": os.pathsep.join(["PRIVATE", "journal"])}
    server = StdioServer(find_step(STEP).server, "--vault", str(vault), env=env)
    try:
        server.handshake()
        listed = server.ask(rpc("tools/call", id=2, name="list_notes", arguments={}))["result"]
        read = server.ask(rpc("resources/read", id=3, uri="vault:///private/secret.md"))
        opened = server.ask(rpc("tools/call", id=4, name="get_note", arguments={"path": "Open/link-to-secret"}))
    finally:
        server.stop()
    assert listed["structuredContent"]["notes"] == ["Home.md", "Open/Target.md", "privateer/Log.md"]
    assert read["error"]["message"].startswith(MISSING)
    assert opened["result"]["isError"] is True and opened["result"]["content"][0]["text"].startswith(MISSING)


@pytest.mark.parametrize("entry", ["private/secret", "Private/Secret.md"])
def test_an_entry_that_names_a_note_hides_that_note_alone(tmp_path, entry):
    """Named as a link names it, without .md, or with it: the note is denied, not its neighbours."""
    vault = make_vault(tmp_path / "vault")
    (vault / "private" / "secretive.md").write_text("# Secretive\n\nA pelicanword neighbour the entry does not name.\n")
    server = StdioServer(find_step(STEP).server, "--vault", str(vault), "--exclude", entry,
                         env=quiet_environment(str(tmp_path / "index")))
    try:
        server.handshake()
        listed = server.ask(rpc("tools/call", id=2, name="list_notes", arguments={}))["result"]
        opened = server.ask(rpc("tools/call", id=3, name="get_note", arguments={"path": "private/secret.md"}))
        searches = [server.ask(rpc("tools/call", id=4 + number, name="search_vault",
                                   arguments={"query": word, "mode": "keyword"}))["result"]
                    for number, word in enumerate(["zanzibarquux", "pelicanword"])]
    finally:
        server.stop()
    found, neighbour = (search["structuredContent"] for search in searches)
    assert "indexed" not in found and [hit["path"] for hit in neighbour["results"]] == ["private/secretive.md"]
    notes = listed["structuredContent"]["notes"]
    assert "private/secretive.md" in notes and "private/secret.md" not in notes
    assert "Open/link-to-secret.md" not in notes  # a link to it is judged by where it leads
    assert opened["result"]["isError"] is True and opened["result"]["content"][0]["text"].startswith(MISSING)
    assert found["results"] == []


def test_an_entry_with_a_slash_at_its_end_names_a_folder_alone(tmp_path):
    with step_modules(find_step(STEP).path):
        from vault import Vault
    assert Vault(tmp_path, deny=["Journal"]).denied("journal.md")  # the note beside the folder, as a link names it
    for entry in ["Journal/", "Journal\\"]:
        vault = Vault(tmp_path, deny=[entry])
        assert vault.denied("Journal/day.md") and not vault.denied("Journal.md"), entry


@pytest.mark.parametrize("exists", [True, False])
def test_create_note_answers_the_same_for_a_denied_note_that_exists_or_not(tmp_path, exists):
    """It must neither reveal that a denied note exists nor write a note it would then hide."""
    vault = make_vault(tmp_path / "vault")
    if exists:
        (vault / "Inbox").mkdir()
        (vault / "Inbox" / "Secret.md").write_text("hushhush\n", encoding="utf-8")
    before = sorted(vault.rglob("*"))
    with start(vault, "--exclude", "Inbox/secret", "--inbox", "Inbox") as (url, _log):
        text = refusal(connect(url), "create_note", title="Secret", content="x")
    assert text == 'The note "Inbox/Secret.md" is on the server\'s deny list (--exclude); choose another title'
    assert sorted(vault.rglob("*")) == sorted(before + ([] if exists else [vault / "Inbox"]))  # an empty inbox at most


def test_a_note_indexed_before_its_folder_was_denied_is_forgotten(tmp_path):
    vault, index_dir = make_vault(tmp_path / "vault"), tmp_path / "index"
    with start(vault, index_dir=index_dir) as (url, _log):
        client = connect(url)
        found = data(client, "search_vault", query="zanzibarquux", limit=3, mode="keyword")["results"]
        assert found and found[0]["path"] == "private/secret.md"  # the index held it
    with start(vault, "--exclude", "private", index_dir=index_dir) as (url, log):
        client = connect(url)
        assert data(client, "search_vault", query="zanzibarquux", limit=3, mode="keyword")["results"] == []
    stored = [path for path in index_dir.rglob("*") if path.is_file()]
    assert stored and not [path for path in stored if b"zanzibarquux" in path.read_bytes()]  # gone from disk too


def test_create_note_never_writes_into_a_denied_folder(tmp_path):
    vault = make_vault(tmp_path / "vault")
    before = sorted(vault.rglob("*"))
    for inbox in ["private/Drop", "PRIVATE", "Private/Drop", "Open/into-private", "Open/into-private/Drop"]:
        with start(vault, "--exclude", "private", "--inbox", inbox) as (url, _log):
            text = refusal(connect(url), "create_note", title="Leak", content="x")
            assert "deny" in text or "denied" in text, text
    assert sorted(vault.rglob("*")) == before  # not even a folder was made


def test_the_deny_list_comes_from_its_variable_and_the_command_line_wins(monkeypatch):
    with step_modules(find_step(STEP).path):
        import server
        monkeypatch.setenv("VAULT_MCP_EXCLUDE", os.pathsep.join(["private", "", "Journal/Health"]))
        assert server.parse_args([]).exclude == ["private", "Journal/Health"]
        assert server.parse_args(["--exclude", "Work"]).exclude == ["Work"]
        monkeypatch.delenv("VAULT_MCP_EXCLUDE")
        assert server.parse_args([]).exclude == []


@pytest.mark.parametrize("folder", ["", ".", "../elsewhere", "/etc"])
def test_a_deny_list_entry_that_names_no_folder_of_the_vault_stops_the_server_in_one_line(tmp_path, folder):
    finished = subprocess.run([sys.executable, str(find_step(STEP).server), "--vault", str(tmp_path),
                               "--exclude", folder, "--port", "0"], capture_output=True, text=True, timeout=30)
    assert finished.returncode != 0 and finished.stderr.startswith("--exclude:"), finished.stderr


def test_a_stored_index_loaded_with_a_new_deny_list_holds_no_denied_note_before_reconcile(tmp_path):
    """Answers start as soon as the stored index is loaded, before reconcile lists the vault:
    what the deny list now hides must be gone from the index and the links by then."""
    vault, index_dir = make_vault(tmp_path / "vault"), tmp_path / "index"
    with start(vault, index_dir=index_dir) as (url, _log):
        data(connect(url), "search_vault", query="warm up", limit=1)  # the whole index, stored
    index_dir = index_folder(index_dir)  # the folder of the embedder's index
    with step_modules(find_step(STEP).path):
        from vault import Vault
        from vault_index import VaultIndex
        from embeddings import make_embedder

        embedder, _line = make_embedder("hash")
        stored = VaultIndex(Vault(vault, deny=["private"]), embedder, index_dir)
        index, links = stored.load_stored()
    assert not [path for path in index.note_paths() if path.lower().startswith("private/")]
    assert not [path for path in links.note_paths() if path.lower().startswith("private/")]
    assert "Home.md" in index.note_paths()


def test_a_stored_note_without_chunks_or_outside_the_vault_is_dropped_before_reconcile(tmp_path):
    """Notes with links and no chunks (only properties, or an Obsidian excluded file) are
    stored too; so may be any path, in an index folder edited by hand. Neither may reach
    the link graph that answers while reconcile runs."""
    vault, index_dir = make_vault(tmp_path / "vault"), tmp_path / "index"
    (vault / "private" / "up.md").write_text('---\nup: "[[Home]]"\ntags: [hushhush]\n---\n', encoding="utf-8")
    with start(vault, index_dir=index_dir) as (url, _log):
        data(connect(url), "search_vault", query="warm up", limit=1)  # the whole index, stored
    index_dir = index_folder(index_dir)  # the folder of the embedder's index
    with step_modules(find_step(STEP).path):
        from embeddings import make_embedder
        from index import encode_note, note_file_name, write_note_file
        from vault import Vault
        from vault_index import VaultIndex

        links = {"aliases": [], "tags": ["hushhush"], "links": [["Home", "", "", False, 1, False, ""]],
                 "contexts": ["[[Home]]"]}
        [notes] = index_dir.glob("notes-*")  # the folder of the one generation stored
        for path in ["../outside.md", ".trash/old.md", "/etc/x.md"]:
            write_note_file(notes / note_file_name(path), encode_note(path, [], [], {"links": links}))
        embedder, _line = make_embedder("hash")
        stored = VaultIndex(Vault(vault, deny=["private", "journal"]), embedder, index_dir)
        index, graph = stored.load_stored()
        assert [backlink.source for backlink in graph.backlinks("Home.md")] == []
        assert graph.tag_counts() == {"open": 2}
        found = {hit.path for hit in stored.search("zanzibarquux", 10)}
    assert found <= OPEN_NOTES and set(index.note_meta()) == set(graph.note_paths()) <= OPEN_NOTES
    assert not [path for path in graph.note_paths() if path.startswith("Open/link")]  # a link to private/
