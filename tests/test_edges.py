"""The edges where bugs hide, each tested in every distinct copy of the file that holds it:
a prefix that must end at a path's separator; a value that is valid and falsy (the id 0,
"", a progress token 0, an alias "0"); a path whose parent is a file; headings as
Obsidian reads them at their edges; and every size limit at exactly its size and one
over. Each test names the mistake it catches; each was planted and seen to fail."""
import json
import logging
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from helpers import McpClient, StdioServer, distinct_copies, note_chunks, rpc, step_modules, tool_call
from launch import quiet_environment
from manifest import find_step
from test_http_door_limits import stdio_exchange
from test_index_in_every_copy import WordEmbedder, opened
from test_streams_every_copy import STATELESS_META, stdio_server, wait_for_the_watcher

TIMEOUT = 30.0


def modules(step: int, *names: str):
    """The named modules of one step's folder, fresh."""
    with step_modules(find_step(step).path):
        return [__import__(name) for name in names]


def make_vault(root: Path, notes: dict[str, str]) -> Path:
    for path, text in notes.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    return root


# ---- prefixes end at a separator ---------------------------------------------------

@pytest.mark.parametrize("step", distinct_copies("vault.py", since=4))
def test_a_folder_lists_its_own_notes_not_those_of_a_folder_or_note_named_like_its_start(step, tmp_path):
    (vault_module,) = modules(step, "vault")
    root = make_vault(tmp_path, {"Bread/Focaccia.md": "", "Bread/Deep/Levain.md": "", "Breadcrumbs/Trail.md": "",
                                 "Bread.md": "", "Bread copy.md": ""})
    vault = vault_module.Vault(root)
    assert vault.list_notes("Bread") == ["Bread/Deep/Levain.md", "Bread/Focaccia.md"]
    assert vault.list_notes("Breadcrumbs") == ["Breadcrumbs/Trail.md"]


@pytest.mark.parametrize("step", distinct_copies("links.py", since=8))
def test_a_partial_link_path_matches_whole_segments_only(step, tmp_path):
    vault_module, links = modules(step, "vault", "links")
    root = make_vault(tmp_path, {"ab/Note.md": "", "Archive/b/Old.md": "", "Home.md": "[[b/Note]] [[b/Old]]"})
    graph = links.LinkGraph.build(vault_module.Vault(root))
    targets = {link.link.target: link.target for link in graph.outgoing("Home.md")}
    assert targets == {"b/Note": None, "b/Old": "Archive/b/Old.md"}


@pytest.mark.parametrize("step", distinct_copies("embeds.py", since=8))
def test_a_section_is_not_taken_for_one_whose_name_starts_like_it(step, tmp_path):
    """"#Sec" is not shown just because "#Section", around it, starts the same way."""
    root = make_vault(tmp_path / "vault", {"Prefix.md": "## Section\nsee ![[#Sec]]\n\n## Sec\nsec text\n"})
    server = StdioServer(find_step(step).server, "--vault", str(root), env=quiet_environment(str(tmp_path / "i")))
    try:
        server.handshake()
        deadline = time.monotonic() + TIMEOUT
        while True:
            answer = server.ask(rpc("tools/call", id=2, name="get_note",
                                    arguments={"path": "Prefix", "heading": "Section"}))["result"]
            if "being built" not in json.dumps(answer) or time.monotonic() > deadline:
                break
            time.sleep(0.1)
    finally:
        server.stop()
    note = answer["structuredContent"]
    assert "sec text" in note["text"] and not note.get("embedsNotShown"), note


# ---- falsy values that are values ----------------------------------------------------

@pytest.mark.parametrize("request_id", [0, ""], ids=["zero", "empty"])
def test_an_error_answers_the_id_0_or_empty_string_it_was_asked_with(core, request_id):
    session_id = core.open_session()
    reply = core.send(session_id, {"jsonrpc": "2.0", "id": request_id, "method": "no/such/method"}).json()
    assert reply["id"] == request_id and reply["error"]["code"] == -32601


PROGRESS_STEPS = sorted(set(distinct_copies("protocol.py", since=7) + distinct_copies("http_transport.py", since=7)))


@pytest.mark.parametrize("token", [0, ""], ids=["zero", "empty"])
@pytest.mark.parametrize("step", PROGRESS_STEPS)
def test_a_progress_token_of_0_or_empty_string_gets_a_stream_of_progress(step_servers, step, token):
    client = step_servers(step)
    session_id = client.open_session()
    call = rpc("tools/call", id=5, name="reindex", arguments={}, _meta={"progressToken": token})
    deadline = time.monotonic() + TIMEOUT
    while True:  # a first build under way answers "already being rebuilt"
        reply = client.send(session_id, call)
        messages = [json.loads(line[6:]) for line in reply.body.decode().splitlines() if line.startswith("data: ")]
        if messages and not messages[-1]["result"]["isError"] or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert reply.headers["Content-Type"] == "text/event-stream"
    progress = [message["params"] for message in messages[:-1]]
    assert progress and all(params["progressToken"] == token for params in progress), messages


SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"


@pytest.mark.parametrize("listen_id", [0, ""], ids=["zero", "empty"])
@pytest.mark.parametrize("step", [find_step(n) for n in sorted(set(distinct_copies("subscriptions.py", since=9)
                                                                   + distinct_copies("stdio_transport.py", since=9)))],
                         ids=lambda step: step.folder)
def test_a_listen_with_id_0_or_empty_string_is_named_in_every_notification_and_can_be_cancelled(
        step, tmp_path, listen_id):
    with stdio_server(step, tmp_path) as (server, vault):
        wait_for_the_watcher(server)
        listen = {"jsonrpc": "2.0", "id": listen_id, "method": "subscriptions/listen",
                  "params": {"_meta": STATELESS_META, "notifications": {"resourcesListChanged": True}}}
        server.send(listen)
        acknowledged = server.read()
        assert acknowledged["method"] == "notifications/subscriptions/acknowledged"
        assert acknowledged["params"]["_meta"][SUBSCRIPTION_ID] == listen_id
        (vault / "New.md").write_text("New.\n")
        changed = server.read(TIMEOUT)
        assert changed["method"] == "notifications/resources/list_changed"
        assert changed["params"]["_meta"][SUBSCRIPTION_ID] == listen_id
        server.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": listen_id}})
        # Lines are read in order: once this is answered, the cancel has been read.
        assert server.ask({"jsonrpc": "2.0", "id": "read", "method": "server/discover",
                           "params": {"_meta": STATELESS_META}})["id"] == "read"
        (vault / "After the cancel.md").write_text("New.\n")
        time.sleep(1)  # the watcher has seen it
        server.send({"jsonrpc": "2.0", "id": "last", "method": "server/discover", "params": {"_meta": STATELESS_META}})
        heard = server.read()
        assert heard.get("id") == "last", f"a cancelled subscription was still told of a change: {heard}"
        server.send(listen)  # its id is free again
        assert server.read()["method"] == "notifications/subscriptions/acknowledged"


@pytest.mark.parametrize("step", distinct_copies("notes.py", since=5))
def test_an_alias_or_tag_written_as_0_is_kept(step):
    (notes,) = modules(step, "notes")
    note = notes.parse_note("N", "---\naliases: [0, 1]\ntags: [0a, b]\n---\nbody\n")
    assert note.aliases == ["0", "1"]
    assert [tag.name for tag in note.tags] == ["0a", "b"]
    alone = notes.parse_note("N", "---\naliases: 0\ncssclasses: 0\n---\nbody\n")  # one value, not a list
    assert (alone.aliases, alone.cssclasses) == (["0"], ["0"])


# ---- a path whose parent is a file ----------------------------------------------------

@pytest.mark.parametrize("step", distinct_copies("vault.py", since=4))
@pytest.mark.parametrize("path", ["Home.md/x", "Home.md/x.md", "Home/x", "Home.md/Deep/x"])
def test_a_path_under_a_note_is_a_note_that_does_not_exist(step, tmp_path, path):
    (vault_module,) = modules(step, "vault")
    vault = vault_module.Vault(make_vault(tmp_path, {"Home.md": "# Home\n"}))
    with pytest.raises(vault_module.NoteNotFound, match="No note"):
        vault.read_note(path)
    with pytest.raises(vault_module.NoteNotFound, match="No folder"):
        vault.list_notes(path)


def test_step_10_answers_a_path_under_a_note_as_not_found_everywhere(tmp_path):
    root = make_vault(tmp_path / "vault", {"Home.md": "# Home\n"})
    server = StdioServer(find_step(10).server, "--vault", str(root), env=quiet_environment(str(tmp_path / "i")))
    try:
        server.handshake()
        note = server.ask(rpc("tools/call", id=2, name="get_note", arguments={"path": "Home.md/x"}))["result"]
        folder = server.ask(rpc("tools/call", id=3, name="list_notes", arguments={"folder": "Home.md/x"}))["result"]
        resource = server.ask(rpc("resources/read", id=4, uri="vault:///Home.md/x"))
    finally:
        server.stop()
    assert note["isError"] and note["content"][0]["text"].startswith('No note "Home.md/x"')
    assert folder["isError"] and folder["content"][0]["text"].startswith('No folder "Home.md/x"')
    assert resource["error"]["code"] == -32002


def test_obsidian_settings_that_are_a_file_not_a_folder_are_no_settings(tmp_path):
    (vault_module,) = modules(10, "vault")
    root = make_vault(tmp_path, {"Home.md": "# Home\n", ".obsidian": "not a folder"})
    assert vault_module.Vault(root).list_notes() == ["Home.md"]


# ---- headings at their edges, as Obsidian reads them --------------------------------

@pytest.mark.parametrize("step", distinct_copies("markdown.py", since=5))
@pytest.mark.parametrize("text,headings", [
    ("para\n    # indented four", []),  # four spaces: code, or the paragraph going on
    ("   # three spaces", ["three spaces"]),
    ("#\tTabbed", ["Tabbed"]),  # a tab separates as a space does
    ("# C#", ["C#"]),  # a closing # needs a space before it
    ("# Title ##", ["Title"]),
    ("# Title #\t", ["Title"]),
    ("# Title\t##", ["Title"]),  # a tab before the closing #s counts as a space does
    ("# #", [""]),  # only a closing sequence: an empty heading
    ("####### seven", []),
])
def test_headings_at_their_edges(step, text, headings):
    (markdown,) = modules(step, "markdown")
    assert [heading.text for heading in markdown.find_headings(text)] == headings


@pytest.mark.parametrize("step", distinct_copies("markdown.py", since=5))
def test_a_section_is_found_whatever_runs_of_spaces_its_heading_has(step):
    (markdown,) = modules(step, "markdown")
    assert markdown.section_text("# Day  2\ntext\n", "Day 2") == "# Day  2\ntext"
    assert markdown.section_text("# Day 2\ntext\n", "Day   2") == "# Day 2\ntext"


# ---- size limits at their size, and one over ----------------------------------------

@pytest.mark.parametrize("step", distinct_copies("vault.py", since=4))
def test_a_note_of_exactly_the_largest_size_is_read_and_one_byte_more_is_not(step, tmp_path):
    (vault_module,) = modules(step, "vault")
    root = make_vault(tmp_path, {})
    (root / "Edge.md").write_bytes(b"x" * vault_module.MAX_NOTE_BYTES)
    (root / "Over.md").write_bytes(b"x" * (vault_module.MAX_NOTE_BYTES + 1))
    vault = vault_module.Vault(root)
    assert len(vault.read_note("Edge")[1]) == vault_module.MAX_NOTE_BYTES
    with pytest.raises(vault_module.VaultError, match="larger than 1 MiB"):
        vault.read_note("Over")


@pytest.mark.parametrize("step", distinct_copies("inbox.py", since=8))
def test_create_note_takes_exactly_as_many_tags_and_as_long_a_tag_as_it_says(step, tmp_path):
    (inbox,) = modules(step, "inbox")
    most = [f"t{number}" for number in range(inbox.MAX_TAGS)]
    assert inbox.create_note(tmp_path, "Inbox", "Most tags", "x", most) == "Inbox/Most tags.md"
    with pytest.raises(inbox.InboxError, match=f"at most {inbox.MAX_TAGS}"):
        inbox.create_note(tmp_path, "Inbox", "Too many", "x", most + ["one-more"])
    longest = "t" * inbox.MAX_TAG_CHARS
    assert inbox.create_note(tmp_path, "Inbox", "Longest tag", "x", [longest]) == "Inbox/Longest tag.md"
    with pytest.raises(inbox.InboxError, match="is not a tag"):
        inbox.create_note(tmp_path, "Inbox", "Too long", "x", [longest + "t"])


@pytest.mark.parametrize("step", distinct_copies("inbox.py", since=8))
@pytest.mark.parametrize("title", ["con." + "a" * 300, "a" * 300, "é" * 300, "nul" + " " + "b" * 300])
def test_a_long_title_makes_a_name_within_the_byte_limit_even_when_a_reserved_name_gets_its_mark(step, title):
    (inbox,) = modules(step, "inbox")
    name = inbox.safe_file_name(title)
    assert len(name.encode("utf-8")) <= inbox.MAX_NAME_BYTES, (len(name.encode()), name[:20])


def raw_post(port: int, length: int) -> bytes:
    """The head of a POST announcing `length` bytes and asking to be told to go on."""
    return (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\nContent-Length: {length}\r\n"
            "Expect: 100-continue\r\n\r\n").encode()


def test_a_body_of_exactly_the_largest_size_is_let_in_and_one_byte_more_is_refused(door):
    with step_modules(find_step(door.step).path):
        from limits import Limits
    largest = Limits().max_body
    for length, expected in ((largest, b"HTTP/1.1 100 Continue"), (largest + 1, b"HTTP/1.1 413")):
        with socket.create_connection((door.host, door.port), timeout=5) as sock:
            sock.sendall(raw_post(door.port, length))
            assert sock.recv(1024).startswith(expected), length


# ---- a fresh audit's survivors ----------------------------------------------------

@pytest.mark.parametrize("step", distinct_copies("links.py", since=8))
def test_a_bare_name_prefers_the_linking_notes_own_folder_not_one_named_like_its_start(step):
    (links,) = modules(step, "links")
    assert links.pick({"Breadmaking/Oven.md", "A/Oven.md"}, "Bread/Starter.md") == "A/Oven.md"
    assert links.pick({"Breadmaking/Oven.md", "Bread/Oven.md"}, "Bread/Starter.md") == "Bread/Oven.md"


def test_an_excluded_path_is_the_start_of_a_path_never_a_part_inside_it(tmp_path):
    """Obsidian's filter "Archive" is the start of a vault path ("Archived.md" too), not a
    word anywhere in it: "Notes/Archive plan.md" stays."""
    (vault_module,) = modules(10, "vault")
    root = make_vault(tmp_path, {".obsidian/app.json": '{"userIgnoreFilters": ["Archive"]}',
                                 "Archive/Old.md": "", "Notes/Archive plan.md": "", "Archived.md": ""})
    assert vault_module.Vault(root).list_notes() == ["Notes/Archive plan.md"]


@pytest.mark.parametrize("arguments", [[], "", 0, False], ids=["list", "string", "zero", "false"])
def test_arguments_that_are_no_object_are_refused_even_when_empty(step_servers, arguments):
    for step in distinct_copies("tools.py", since=4):
        client = step_servers(step)
        session_id = client.open_session()
        call = {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "list_notes", "arguments": arguments}}
        result = client.send(session_id, call).json()["result"]
        assert result["isError"] and "must be an object" in result["content"][0]["text"], (step, result)


@pytest.mark.parametrize("step", distinct_copies("schema.py", since=4))
def test_a_minimum_of_0_is_a_bound(step):
    (schema,) = modules(step, "schema")
    problems = schema.validate({"type": "integer", "minimum": 0, "maximum": 10}, -1)
    assert problems and "(0 to 10)" in problems[0], problems
    assert schema.validate({"type": "integer", "minimum": 0, "maximum": 10}, 0) == []


@pytest.mark.parametrize("step", distinct_copies("protocol.py", since=7))
def test_progress_says_a_total_of_0(step):
    (protocol,) = modules(step, "protocol")
    sent = []
    protocol.Progress({"_meta": {"progressToken": "t"}}, sent.append)(0, 0)
    params = sent[0]["params"] if "params" in sent[0] else sent[0]
    assert params["total"] == 0 and params["progress"] == 0, sent


def test_an_empty_session_id_is_a_session_that_does_not_exist(door):
    """Even on an initialize: an empty id was sent, and names no session; it is no absent one."""
    initialize = rpc("initialize", protocolVersion="2025-11-25", capabilities={},
                     clientInfo={"name": "pytest", "version": "1"})
    reply = door.post(initialize, {"Mcp-Session-Id": ""})
    assert reply.status == 404, reply.body
    assert "Mcp-Session-Id" not in reply.headers


@pytest.mark.parametrize("step", distinct_copies("vault_index.py", since=7))
def test_a_note_deep_in_folders_is_found_by_its_own_folder(step, tmp_path):
    vault_module, vault_index = modules(step, "vault", "vault_index")
    root = make_vault(tmp_path / "vault", {"Bread/Rye/Loaf.md": "# Loaf\nrye\n"})
    chunks = note_chunks(vault_index.VaultIndex(vault_module.Vault(root), None, tmp_path / "index"), "Bread/Rye/Loaf.md")
    assert {chunk.folder for chunk in chunks} == {"Bread/Rye"}


@pytest.mark.parametrize("step", distinct_copies("inbox.py", since=8))
@pytest.mark.parametrize("inbox_folder", [".", "./", ""], ids=["dot", "dot-slash", "empty"])
def test_an_inbox_at_the_vault_root_writes_there(step, tmp_path, inbox_folder):
    (inbox,) = modules(step, "inbox")
    if not inbox_folder:
        with pytest.raises(Exception, match="The path is empty"):  # a folder must be named
            inbox.create_note(tmp_path, inbox_folder, "Idea", "x")
        return
    assert inbox.create_note(tmp_path, inbox_folder, "Idea", "x") == "Idea.md"
    assert (tmp_path / "Idea.md").is_file()


@pytest.mark.parametrize("step", distinct_copies("markdown.py", since=5))
def test_a_section_is_found_by_its_whole_chain_of_headings(step):
    (markdown,) = modules(step, "markdown")
    assert markdown.section_text("# A\n## B\n### C\ntext\n", "A#B#C") == "### C\ntext"
    assert markdown.section_text("# A\n## B\n### C\ntext\n", "B#C") == "### C\ntext"
    assert markdown.section_text("# A\n## B\n### C\ntext\n", "A#C#B") is None


@pytest.mark.parametrize("step", distinct_copies("markdown.py", since=5))
def test_a_heading_of_the_same_level_ends_a_section_and_is_not_nested_in_it(step):
    (markdown,) = modules(step, "markdown")
    sections = markdown.split_sections("# A\n## B\n## C\nc text\n")
    assert [section.path for section in sections] == [["A"], ["A", "B"], ["A", "C"]]


@pytest.mark.parametrize("step", distinct_copies("frontmatter.py", since=5))
def test_frontmatter_of_exactly_the_largest_size_and_depth_is_read(step):
    (frontmatter,) = modules(step, "frontmatter")
    longest = "k: " + "x" * (frontmatter.MAX_CHARS - 3)
    assert frontmatter.parse_yaml(longest)["k"] == "x" * (frontmatter.MAX_CHARS - 3)
    with pytest.raises(frontmatter.YamlError if hasattr(frontmatter, "YamlError") else Exception):
        frontmatter.parse_yaml(longest + "x")

    def nested(levels: int) -> str:
        return "".join("  " * level + "a:\n" for level in range(levels - 1)) + "  " * (levels - 1) + "a: 1\n"

    assert frontmatter.parse_yaml(nested(frontmatter.MAX_DEPTH))
    with pytest.raises(Exception):
        frontmatter.parse_yaml(nested(frontmatter.MAX_DEPTH + 1))


@pytest.mark.parametrize("step", distinct_copies("vault_index.py", since=7))
def test_names_that_fill_the_context_exactly_are_all_kept(step):
    (vault_index,) = modules(step, "vault_index")
    half = vault_index.CONTEXT_CHARS // 2
    assert vault_index.within(["a" * half, "b" * half]) == ["a" * half, "b" * half]
    assert vault_index.within(["a" * half, "b" * (half + 1)]) == ["a" * half]


# ---- a third audit's survivors: limits at exactly their size --------------------------

@pytest.mark.parametrize("step", distinct_copies("embeds.py", since=8))
def test_exactly_as_many_waiting_embeds_as_the_limit_are_all_listed_and_one_more_is_named(step):
    """Before the link graph is built, a note's embeds are listed as waiting: all of them
    up to the limit, then the first of the rest, saying why the list stops."""
    (embeds,) = modules(step, "embeds")
    most = embeds.MAX_EMBEDS
    text = "".join(f"![[Note {n}]]\n" for n in range(most))
    listed = embeds.waiting_embeds(text, "Home.md", "building")
    assert [item["embed"] for item in listed] == [f"![[Note {n}]]" for n in range(most)]
    assert {item["reason"] for item in listed} == {"building"}
    over = embeds.waiting_embeds(text + "![[One more]]\n", "Home.md", "building")
    assert len(over) == most + 1 and over[-1]["embed"] == "![[One more]]" and str(most) in over[-1]["reason"]


@pytest.mark.parametrize("step", distinct_copies("frontmatter.py", since=5))
def test_flow_lists_nested_to_exactly_the_largest_depth_are_read(step):
    """A property is one level; its [[...]] flow lists count on from there."""
    (frontmatter,) = modules(step, "frontmatter")

    def flow(levels: int) -> str:
        return "k: " + "[" * levels + "]" * levels

    value, levels = frontmatter.parse_yaml(flow(frontmatter.MAX_DEPTH - 1))["k"], 1
    while value:
        value, levels = value[0], levels + 1
    assert levels == frontmatter.MAX_DEPTH - 1
    with pytest.raises(frontmatter.YamlError, match="deeper"):
        frontmatter.parse_yaml(flow(frontmatter.MAX_DEPTH))


@pytest.mark.parametrize("step", distinct_copies("inbox.py", since=8))
def test_a_title_that_fills_the_name_exactly_is_kept_whole(step):
    (inbox,) = modules(step, "inbox")
    room = inbox.MAX_NAME_BYTES - 1  # a byte is kept for the "_" a reserved name gets
    for title in ("a" * room, "é" * (room // 2) + "a"):
        assert len(title.encode("utf-8")) == room
        assert inbox.safe_file_name(title) == title
        assert inbox.safe_file_name(title + "b") == title
    reserved = inbox.safe_file_name("con." + "a" * (room - 4))
    assert reserved == "con_." + "a" * (room - 4) and len(reserved.encode("utf-8")) == inbox.MAX_NAME_BYTES


class FixedAnswer(BaseHTTPRequestHandler):
    """A stand-in for Ollama that answers every GET with the server's `body`."""
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.server.body)))
        self.end_headers()
        self.wfile.write(self.server.body)

    def log_message(self, *args):
        pass


@pytest.fixture
def fixed_answer():
    server = ThreadingHTTPServer(("127.0.0.1", 0), FixedAnswer)
    server.daemon_threads = True
    server.handle_error = lambda request, address: None  # a client that stopped reading
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


@pytest.mark.parametrize("step", distinct_copies("ollama_client.py", since=6))
def test_an_ollama_answer_of_exactly_the_largest_size_is_read_and_one_byte_more_is_not(step, fixed_answer):
    (ollama_client,) = modules(step, "ollama_client")
    tags = json.dumps({"models": [{"name": "nomic-embed-text:latest"}]}).encode()
    fixed_answer.body = tags + b" " * (ollama_client.MAX_ANSWER_BYTES - len(tags))  # white space is JSON too
    ollama = ollama_client.OllamaEmbedder(f"http://127.0.0.1:{fixed_answer.server_address[1]}")
    ollama.check()  # no error: Ollama is there and has the model
    fixed_answer.body += b" "
    with pytest.raises(ollama_client.OllamaError, match="larger"):
        ollama.check()


def test_a_batch_of_exactly_the_most_messages_is_answered_and_one_more_is_refused(core):
    with step_modules(find_step(core.step).path):
        from protocol import MAX_BATCH
    session_id = core.initialize("2025-03-26").headers["Mcp-Session-Id"]  # the one revision with batches
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert core.post(initialized, {"Mcp-Session-Id": session_id}).status == 202
    pings = [rpc("ping", id=number) for number in range(MAX_BATCH + 1)]
    reply = core.post(pings[:MAX_BATCH], {"Mcp-Session-Id": session_id})
    assert reply.status == 200 and [answer["id"] for answer in reply.json()] == list(range(MAX_BATCH))
    reply = core.post(pings, {"Mcp-Session-Id": session_id})
    assert reply.status == 400 and reply.json()["error"]["code"] == -32600


@pytest.mark.parametrize("step", distinct_copies("request_log.py", since=2))
def test_a_logged_path_of_exactly_the_longest_length_is_shown_whole(step, caplog):
    (request_log,) = modules(step, "request_log")
    caplog.set_level(logging.INFO, logger="request")
    longest = "n" * request_log.LONGEST
    for path in (longest, longest + "o"):
        call = rpc("tools/call", name="get_note", arguments={"path": path})
        request_log.log_request(call, {"jsonrpc": "2.0", "id": 1, "result": {}}, 0.001)
    first, second = [record.getMessage() for record in caplog.records]
    assert json.dumps(longest) in first and "..." not in first
    assert longest in second and longest + "o" not in second  # cut, and marked as cut


@pytest.mark.parametrize("step", distinct_copies("stdio_transport.py", since=3))
def test_a_last_line_of_exactly_the_longest_size_is_answered_and_one_byte_more_is_refused(step):
    """The last line may end without a line break: stdin closes there."""
    (stdio_transport,) = modules(step, "stdio_transport")
    ping = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
    exact = ping + b" " * (stdio_transport.MAX_LINE - len(ping))
    assert stdio_exchange(find_step(step), [exact]) == [{"jsonrpc": "2.0", "id": 1, "result": {}}]
    [refused] = stdio_exchange(find_step(step), [exact + b" "])
    assert refused["error"]["code"] == -32600 and "over" in refused["error"]["message"]


@pytest.mark.parametrize("step", distinct_copies("wordpiece.py", since=6))
def test_a_word_of_exactly_the_longest_length_is_cut_into_pieces_and_one_longer_is_unknown(step):
    (wordpiece,) = modules(step, "wordpiece")
    tokenizer = wordpiece.WordPiece(["[UNK]", "a", "##a"])
    longest = wordpiece.LONGEST_WORD
    assert tokenizer.encode("a" * longest) == [1] + [2] * (longest - 1)
    assert tokenizer.encode("a" * (longest + 1)) == [0]


@pytest.mark.parametrize("step", distinct_copies("related.py", since=8))
def test_a_note_linked_with_exactly_hub_size_others_is_walked_through_and_one_more_is_a_hub(step, tmp_path):
    vault_module, links, related = modules(step, "vault", "links", "related")
    for size in (related.HUB_SIZE, related.HUB_SIZE + 1):
        notes = {f"Topic {n}.md": "" for n in range(size)}
        notes["Home.md"] = " ".join(f"[[Topic {n}]]" for n in range(size))
        graph = links.LinkGraph.build(vault_module.Vault(make_vault(tmp_path / str(size), notes)))
        found = {found.path: found.reasons for found in related.related_notes(graph, None, "Topic 0.md", 50)}
        if size == related.HUB_SIZE:
            assert set(found) == {"Home.md"} | {f"Topic {n}.md" for n in range(1, size)}
            assert all("Home.md" in found[f"Topic {n}.md"][0] for n in range(1, size))
        else:
            assert list(found) == ["Home.md"], found


# ---- a third audit's survivors: falsy and empty values ---------------------------------

class ZeroEmbedder:
    """An embedder that finds nothing in any text: every vector is all zeros."""
    name = "zeros"
    dimension = 4

    def embed_documents(self, texts):
        return [[0.0] * self.dimension for _ in texts]

    def embed_query(self, text):
        return [0.0] * self.dimension


@pytest.mark.parametrize("step", sorted(set(distinct_copies("vector_search.py", since=7)
                                            + distinct_copies("index.py", since=7))))
def test_a_vector_of_zeros_is_stored_and_read_back(step, tmp_path):
    """Its step is 0: the index on disk is whole, not damaged."""
    (index,) = modules(step, "index")
    chunk = index.Chunk(id="Empty.md#0", path="Empty.md", heading_path=["Empty"], text="", title="Empty")
    index.ChunkIndex.build(tmp_path, ZeroEmbedder(), [chunk])
    loaded = index.ChunkIndex.load(tmp_path, ZeroEmbedder.name, ZeroEmbedder.dimension)
    assert loaded.note_paths() == ["Empty.md"]


@pytest.mark.parametrize("cursor", [0, False, [], {}], ids=["zero", "false", "list", "object"])
@pytest.mark.parametrize("step", distinct_copies("protocol.py", since=4))
def test_a_cursor_that_is_no_string_is_refused_as_such_even_when_empty(step_servers, step, cursor):
    client = step_servers(step)
    session_id = client.open_session()
    reply = client.send(session_id, rpc("resources/list", id=3, cursor=cursor)).json()
    assert reply["error"]["code"] == -32602 and "string" in reply["error"]["message"], reply


def test_an_empty_version_header_is_a_version_not_supported(stateless_door):
    """An empty MCP-Protocol-Version names a version, "", that no server speaks; it is no absent header."""
    message = rpc("tools/list", id=6, _meta=STATELESS_META)
    reply = stateless_door.post(message, {"MCP-Protocol-Version": "", "Mcp-Method": "tools/list"})
    assert reply.status == 400
    error = reply.json()["error"]
    assert error["code"] == -32022 and error["data"]["requested"] == "", error


@pytest.mark.parametrize("step", distinct_copies("index.py", since=7))
def test_a_folder_with_nothing_in_it_and_a_tag_finds_nothing(step, tmp_path):
    """The folder's empty set of chunks is a filter, not the absence of one."""
    _, vault_index = opened(step, tmp_path)
    found = vault_index.search("cabbage", 5, folder="Ferments", tag="ferment")
    assert [hit.path for hit in found] == ["Ferments/Kimchi.md"]
    assert vault_index.search("cabbage", 5, folder="Nowhere", tag="ferment") == []
    assert vault_index.search("cabbage", 5, folder="Bread", tag="ferment") == []


@pytest.mark.parametrize("step", distinct_copies("index.py", since=7))
def test_nearest_among_no_rows_finds_nothing(step, tmp_path):
    _, vault_index = opened(step, tmp_path)
    index, query = vault_index.chunk_index, WordEmbedder().embed_query("cabbage")
    for exact in (False, True):
        assert index.nearest(query, 5, rows=set(), exact=exact) == []
        assert [row for _, row in index.nearest(query, 5, rows={0}, exact=exact)] == [0]


# ---- a third audit's survivors: names with several dots -------------------------------

@pytest.mark.parametrize("step", distinct_copies("markdown.py", since=5))
def test_a_link_ending_in_md_in_any_case_names_the_note(step):
    (markdown,) = modules(step, "markdown")
    links = markdown.find_links("[[Rye.MD]] [[Rye.Md#Crumb]] [crumb](Rye.MD) [[Rye.mdx]]")
    assert [(link.target, link.subpath) for link in links] == [("Rye", ""), ("Rye", "Crumb"), ("Rye", ""),
                                                                ("Rye.mdx", "")]


@pytest.mark.parametrize("step", distinct_copies("links.py", since=8))
def test_an_attachment_is_known_by_what_follows_the_last_dot_of_its_name(step, tmp_path):
    vault_module, links = modules(step, "vault", "links")
    root = make_vault(tmp_path, {"Home.md": "[[chart.v2.svg]] [[scan 2024.01.pdf]] [[Plans.v2]]"})
    graph = links.LinkGraph.build(vault_module.Vault(root))
    kinds = {link.link.target: link.kind for link in graph.outgoing("Home.md")}
    assert kinds == {"chart.v2.svg": links.ATTACHMENT, "scan 2024.01.pdf": links.ATTACHMENT,
                     "Plans.v2": links.UNRESOLVED}


# ---- a third audit's survivors: paths with several separators --------------------------

@pytest.mark.parametrize("step", distinct_copies("resources.py", since=4))
def test_a_resource_deep_in_folders_is_titled_by_its_file_name(step, tmp_path):
    vault_module, resources = modules(step, "vault", "resources")
    root = make_vault(tmp_path, {"Bread/Rye/Loaf.md": "", "Top.md": ""})
    listed = resources.list_resources(vault_module.Vault(root), None)["resources"]
    titles = {resource["name"]: resource["title"] for resource in listed}
    assert titles == {"Bread/Rye/Loaf.md": "Loaf", "Top.md": "Top"}


# ---- a fifth audit's survivors -----------------------------------------------------------

@pytest.mark.parametrize("step", distinct_copies("markdown.py", since=5))
def test_a_block_id_needs_a_space_before_its_caret(step):
    """Obsidian reads "^id" as a block's id only alone on a line or after a space or a tab:
    "x^2" and "word^id" are text, and name no block."""
    (markdown,) = modules(step, "markdown")
    assert markdown.find_blocks("The square is x^2\n\nSee word^peak\n") == []
    found = markdown.find_blocks("Spaced ^peak\n\nTabbed\t^tab\n")
    assert [(block.id, block.text) for block in found] == [("peak", "Spaced"), ("tab", "Tabbed")]


@pytest.mark.parametrize("step", distinct_copies("markdown.py", since=5))
def test_a_list_marker_needs_a_space_after_it(step):
    """"-item" and "2.5kg" are paragraphs, not list items, so an indented line after a blank
    line below them is code, and its #tag no tag; below "- item" it is the item's text."""
    (markdown,) = modules(step, "markdown")
    for first in ("-item", "2.5kg", "+1"):
        assert markdown.find_tags(f"{first}\n\n    #code\n") == [], first
    for first in ("- item", "2. kg", "+\tone"):
        assert [tag.name for tag in markdown.find_tags(f"{first}\n\n    #text\n")] == ["text"], first


@pytest.mark.parametrize("step", distinct_copies("index.py", since=7))
def test_a_folder_filter_may_start_or_end_with_a_slash(step, tmp_path):
    """"/Ferments", "Ferments/" and "\\\\Ferments" name the folder "Ferments", as a path from
    the vault root does: slashes at either end are dropped, not only the last."""
    _, vault_index = opened(step, tmp_path)
    found = [hit.path for hit in vault_index.search("cabbage", 5, folder="Ferments")]
    assert "Ferments/Kimchi.md" in found and all(path.startswith("Ferments/") for path in found)
    for folder in ("/Ferments", "Ferments/", "/Ferments/", "\\Ferments", " /ferments "):
        assert [hit.path for hit in vault_index.search("cabbage", 5, folder=folder)] == found, folder


@pytest.mark.parametrize("step", distinct_copies("vault_index.py", since=7))
def test_a_note_too_large_to_read_gives_the_index_no_chunks_and_the_others_are_indexed(step, tmp_path):
    """A note of one byte over the limit is skipped, with a log line, not an error that
    stops the build: the notes beside it are searched as before."""
    vault_module, vault_index = modules(step, "vault", "vault_index")
    root = make_vault(tmp_path / "vault", {"Small.md": "# Small\nwombat\n"})
    (root / "Big.md").write_bytes(b"wombat " + b"x" * (vault_module.MAX_NOTE_BYTES - 6))
    index = vault_index.VaultIndex(vault_module.Vault(root), None, tmp_path / "index")
    assert note_chunks(index, "Big.md") == []
    assert [chunk.path for chunk in note_chunks(index, "Small.md")] == ["Small.md"]
