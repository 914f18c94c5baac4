"""Step 8 over real HTTP, on a temporary copy of the sample vault: backlinks resolved
as Obsidian does, related notes with their reasons, and the one write, which stays
in the inbox and never overwrites, even when two clients race for one title."""
import json
import os
import shutil
import threading

import pytest

from helpers import McpClient, StdioServer, rpc
from launch import quiet_environment, running_server
from manifest import SAMPLE_VAULT, find_step

STEP = find_step(8)


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    vault = tmp_path_factory.mktemp("step8") / "vault"
    shutil.copytree(SAMPLE_VAULT, vault)
    return vault


@pytest.fixture(scope="module")
def server(vault):
    with running_server(STEP.server, "--vault", str(vault)) as (url, _log):
        client = McpClient(url)
        client.session_id = client.open_session()
        yield client


def call(server, name, **arguments) -> dict:
    return server.send(server.session_id, rpc("tools/call", name=name, arguments=arguments)).json()["result"]


def data(server, name, **arguments) -> dict:
    result = call(server, name, **arguments)
    assert result["isError"] is False, result
    return result["structuredContent"]


def test_a_bare_link_means_the_note_in_the_linking_notes_own_folder(server):
    bread = {b["path"] for b in data(server, "get_backlinks", path="Bread/Troubleshooting")["backlinks"]}
    ferments = {b["path"] for b in data(server, "get_backlinks", path="Ferments/Troubleshooting")["backlinks"]}
    assert "Bread/Bulk fermentation.md" in bread and "Bread/Bulk fermentation.md" not in ferments
    assert not {p for p in ferments if p.startswith("Bread/")}


def test_a_backlink_carries_its_line_and_that_lines_text(server):
    backlinks = data(server, "get_backlinks", path="Bread/Troubleshooting")["backlinks"]
    bulk = next(b for b in backlinks if b["path"] == "Bread/Bulk fermentation.md")
    assert bulk["line"] > 1 and "[[Troubleshooting]]" in bulk["context"]


def test_backlinks_refuse_a_hostile_path(server):
    result = call(server, "get_backlinks", path="../../etc/passwd")
    assert result["isError"] and "'..'" in result["content"][0]["text"]


def test_related_notes_say_why(server):
    related = data(server, "related_notes", path="Ferments/Kimchi", limit=10)["related"]
    assert related and all(note["reasons"] for note in related)
    reasons = " ".join(reason for note in related for reason in note["reasons"])
    assert "links to it" in reasons and "similar content" in reasons
    assert [n["score"] for n in related] == sorted((n["score"] for n in related), reverse=True)


def test_create_note_writes_into_the_inbox_only_and_never_overwrites(server, vault):
    made = data(server, "create_note", title="../../Home", content="not over Home.md")
    assert made["path"] == "Inbox/Home.md"
    assert (vault / "Inbox" / "Home.md").read_text().endswith("not over Home.md")
    assert (vault / "Home.md").read_bytes() == (SAMPLE_VAULT / "Home.md").read_bytes()
    again = call(server, "create_note", title="home", content="second")
    assert again["isError"] and "Choose another title" in again["content"][0]["text"]
    assert "second" not in (vault / "Inbox" / "Home.md").read_text()


@pytest.mark.parametrize("title", ["CON", "nul.txt", "...", "a/b", "C:\\x", "\x00x", " . "])
def test_a_hostile_title_is_made_safe_or_refused(server, vault, title):
    result = call(server, "create_note", title=title, content="x")
    if result["isError"]:
        assert "title" in result["content"][0]["text"]
        return
    path = result["structuredContent"]["path"]
    assert path.startswith("Inbox/") and path.count("/") == 1
    name = path.split("/")[1]
    assert name.split(".")[0].upper() not in {"CON", "NUL"} and not name.startswith(".")
    assert (vault / path).is_file()


def test_two_clients_racing_for_one_title_make_one_note(server, vault):
    results = []

    def create(text):
        results.append(call(server, "create_note", title="Race", content=text))

    threads = [threading.Thread(target=create, args=(f"writer {i}",)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=20)
    winners = [r for r in results if not r["isError"]]
    assert len(results) == 8 and len(winners) == 1
    body = (vault / "Inbox" / "Race.md").read_text()
    assert sum(f"writer {i}" in body for i in range(8)) == 1


def test_content_cannot_inject_properties(server, vault):
    made = data(server, "create_note", title="Injected", content="---\ntags: [evil]\n---\nbody", tags=["fine"])
    note = data(server, "get_note", path=made["path"])
    assert note["tags"] == ["fine"] and "evil" not in note["frontmatter"].get("tags", [])


def test_a_related_notes_score_does_not_depend_on_the_limit(server):
    few = data(server, "related_notes", path="Ferments/Kimchi", limit=4)["related"]
    many = data(server, "related_notes", path="Ferments/Kimchi", limit=20)["related"]
    assert few == many[:4]


RACE_ROUNDS = 10


@pytest.mark.parametrize("number", [8, 9, 10])
def test_two_servers_on_one_vault_make_one_note_of_two_titles_that_differ_in_case(tmp_path, number):
    """Each client that starts its own stdio server makes one more process on the vault.
    Both servers wait on stdin; the two requests are written one right after the other,
    so both servers check for the name at the same moment."""
    vault = tmp_path / "vault"
    (vault / "Inbox").mkdir(parents=True)
    servers = [StdioServer(find_step(number).server, "--vault", str(vault),
                           env=quiet_environment(str(tmp_path / f"index-{n}"))) for n in range(2)]
    try:
        for server in servers:
            server.handshake()
        for round_ in range(RACE_ROUNDS):
            titles = [f"Xrace{round_}", f"XRACE{round_}"]
            lines = [json.dumps(rpc("tools/call", id=round_ + 2, name="create_note",
                                    arguments={"title": title, "content": "x"})).encode() for title in titles]
            for server, line in zip(servers, lines):
                server.send_line(line)
            answers = [server.answer(round_ + 2, timeout=20)["result"] for server in servers]
            made = [name for name in os.listdir(vault / "Inbox") if name.lower() == f"xrace{round_}.md"]
            assert len(made) == 1, f"round {round_}: {made}"
            assert sorted(answer["isError"] for answer in answers) == [False, True], answers
            assert "Choose another title" in next(a for a in answers if a["isError"])["content"][0]["text"]
    finally:
        for server in servers:
            server.stop()
