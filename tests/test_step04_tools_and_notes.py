"""Step 4 over real HTTP and stdio, against a temporary copy of the sample vault:
declared tools, arguments checked against their schemas, hostile paths refused as
tool errors while the server goes on, and notes as resources in both eras.

Every later step keeps these promises, so each test runs against every step whose
copy of the modules behind them (protocol.py, tools.py, resources.py, vault.py,
schema.py) differs from the ones already tested: steps 4, 5, 7, 8, 9 and 10. Each
step's server starts once, when a test first needs it."""
import json
import os
import shutil
import subprocess
import sys

from contextlib import ExitStack

import pytest

from helpers import CLIENT_INFO, McpClient, distinct_copies, rpc
from launch import quiet_environment, running_server
from manifest import SAMPLE_VAULT, find_step

MODULES = ["protocol.py", "tools.py", "resources.py", "vault.py", "schema.py"]
STEPS = [find_step(number) for number in sorted({n for name in MODULES for n in distinct_copies(name, since=4)})]
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
}


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    """The sample vault, plus what a hostile model might aim for: a secret next to
    the vault, a symlink out to it, a folder beside the vault whose name begins with
    the vault's, a note too large to serve, a note in a dot-folder."""
    root = tmp_path_factory.mktemp("step4")
    vault = root / "vault"
    shutil.copytree(SAMPLE_VAULT, vault)
    (root / "secret.md").write_text("the password is swordfish")
    (root / "vault-evil").mkdir()
    (root / "vault-evil" / "secret.md").write_text("the password is swordfish")
    (vault / ".trash").mkdir()
    (vault / ".trash" / "Old.md").write_text("deleted")
    (vault / "Big.md").write_text("x" * (1024 * 1024 + 1))
    (vault / "Infinite.md").write_text("---\nratio: .inf\nfloor: -.inf\nunknown: .nan\n---\nBeyond JSON.\n")
    try:
        os.symlink(root / "secret.md", vault / "Escape.md")
        os.symlink(root / "vault-evil" / "secret.md", vault / "Beside.md")
        os.symlink(vault / "Home.md", vault / "Inbox" / "Home link.md")
    except OSError:
        pass  # the symlink cases skip themselves
    return vault


@pytest.fixture(scope="module")
def running(vault):
    """Each step's server on the vault, started when a test first asks for it."""
    with ExitStack() as stack:
        clients = {}

        def start(step):
            if step.number not in clients:
                url, _log = stack.enter_context(running_server(step.server, "--vault", str(vault)))
                clients[step.number] = McpClient(url)
                clients[step.number].session_id = clients[step.number].open_session()
            return clients[step.number]

        yield start


@pytest.fixture(params=STEPS, ids=lambda step: step.folder)
def step(request):
    return request.param


@pytest.fixture
def server(running, step):
    return running(step)


def call(server, name, arguments=None, id=1):
    params = {"name": name} if arguments is None else {"name": name, "arguments": arguments}
    return server.send(server.session_id, rpc("tools/call", id=id, **params)).json()["result"]


def error_text(result) -> str:
    assert result["isError"] is True, result
    return result["content"][0]["text"]


# The tools as declared

def test_tools_are_declared_with_title_schemas_and_read_only_hints(server):
    tools = server.send(server.session_id, rpc("tools/list")).json()["result"]["tools"]
    assert [tool["name"] for tool in tools][:2] == ["list_notes", "get_note"]
    for tool in tools[:2]:  # the read-only two; step 8's create_note writes
        assert tool["title"] and len(tool["description"]) > 80  # written for a model to read
        assert tool["inputSchema"]["type"] == "object" and tool["outputSchema"]["type"] == "object"
        assert tool["inputSchema"]["additionalProperties"] is False
        assert tool["annotations"]["readOnlyHint"] is True
        assert tool["annotations"]["destructiveHint"] is False
    get_note = tools[1]
    assert get_note["inputSchema"]["required"] == ["path"]


def test_structured_content_fits_the_output_schema_and_has_a_text_twin(server):
    result = call(server, "get_note", {"path": "Inbox/Try tangzhong.md"})
    assert result["isError"] is False
    data = result["structuredContent"]
    assert {"path", "text"} <= set(data) and data["path"] == "Inbox/Try tangzhong.md"
    assert "tangzhong" in data["text"].lower()
    assert json.loads(result["content"][0]["text"]) == data


# Arguments are checked before a tool runs

@pytest.mark.parametrize(
    "name,arguments,expected",
    [
        ("list_notes", {"limit": "ten"}, 'limit: must be an integer (1 to 200), got "ten"'),
        ("list_notes", {"limit": 0}, "limit: must be an integer (1 to 200), got 0"),
        ("list_notes", {"limit": True}, "limit: must be an integer"),
        ("list_notes", {"colour": "blue"}, '"colour": unknown field'),
        ("get_note", {}, "path: missing"),
        ("get_note", {"path": 7}, "path: must be a string"),
        ("get_note", {"path": ""}, "path: must be a string (length 1 to 1024)"),
    ],
)
def test_a_bad_argument_is_a_tool_error_naming_the_field(server, name, arguments, expected):
    text = error_text(call(server, name, arguments))
    assert text.startswith(f"Invalid arguments for {name}: ")
    assert expected in text


def test_a_tool_that_needs_no_arguments_may_be_called_without_them(server):
    result = call(server, "list_notes")
    assert result["isError"] is False
    assert len(result["structuredContent"]["notes"]) == 35  # all of them: the default limit is 50


def test_arguments_that_are_not_an_object_are_a_tool_error(server):
    assert "arguments: must be an object" in error_text(call(server, "list_notes", ["Inbox"]))


# Every path is untrusted

@pytest.mark.parametrize(
    "path,expected",
    [
        ("../../etc/passwd", "contains '..'"),
        ("Bread/../../secret.md", "contains '..'"),
        ("..\\secret.md", "contains '..'"),
        ("/etc/passwd", "is absolute"),
        ("C:\\Windows\\win.ini", "is absolute"),
        ("C:secret.md", "is absolute"),
        ("\\\\server\\share\\x.md", "is absolute"),
        ("Home.md\x00.txt", "NUL"),
        ("%2e%2e/secret.md", "No note"),
        (".obsidian/app.json", "names starting with '.'"),
        (".trash/Old.md", "names starting with '.'"),
        ("Attachments/hydration-table.csv", "only Markdown files"),
        ("Bread", "is a folder"),
        ("Bread/Pretzels.md", "No note"),
        ("Big.md", "notes larger than 1 MiB"),
        ("a/" * 3000 + "x.md", ""),
    ],
)
def test_a_hostile_or_wrong_path_is_refused_and_the_server_goes_on(server, path, expected):
    text = error_text(call(server, "get_note", {"path": path} if len(path) < 1024 else {"path": path[:1024]}))
    assert expected in text
    assert "swordfish" not in text
    assert call(server, "get_note", {"path": "Home"})["isError"] is False  # still serving


def test_a_symlink_out_of_the_vault_is_refused_and_one_inside_is_followed(server, vault):
    if not (vault / "Escape.md").is_symlink():
        pytest.skip("this system does not allow symlinks")
    assert "leads outside the vault" in error_text(call(server, "get_note", {"path": "Escape.md"}))
    # /tmp/.../vault-evil begins with /tmp/.../vault as a string, and is still outside
    assert "leads outside the vault" in error_text(call(server, "get_note", {"path": "Beside.md"}))
    inside = call(server, "get_note", {"path": "Inbox/Home link.md"})
    home = call(server, "get_note", {"path": "Home.md"})
    assert inside["isError"] is False and inside["structuredContent"]["text"] == home["structuredContent"]["text"]


def test_list_notes_skips_hidden_folders_attachments_and_links_out(server):
    notes = call(server, "list_notes", {"limit": 200})["structuredContent"]["notes"]
    assert "Home.md" in notes and "Ferments/Crème fraîche.md" in notes
    assert not [n for n in notes if n.startswith(".") or "/." in n or not n.endswith(".md")]
    assert "Escape.md" not in notes and "Beside.md" not in notes


def test_list_notes_pages_with_a_cursor_and_refuses_a_forged_one(server):
    first = call(server, "list_notes", {"folder": "Bread", "limit": 3})["structuredContent"]
    second = call(server, "list_notes", {"folder": "Bread", "limit": 3, "cursor": first["nextCursor"]})
    rest = call(server, "list_notes", {"folder": "Bread", "limit": 3,
                                       "cursor": second["structuredContent"]["nextCursor"]})
    names = first["notes"] + second["structuredContent"]["notes"] + rest["structuredContent"]["notes"]
    assert len(names) == 8 and names == sorted(set(names))
    assert "nextCursor" not in rest["structuredContent"]
    assert "not one this server gave" in error_text(call(server, "list_notes", {"cursor": "bm9wZQ=="}))


def test_infinity_in_a_note_never_reaches_the_wire_as_bare_json(server):
    """YAML has .inf and .nan, JSON has no spelling for them: Python's json.dumps would
    write Infinity and NaN, which strict parsers (JavaScript's among them) refuse."""
    def refuse(constant):
        raise AssertionError(f"{constant} on the wire")

    reply = server.send(server.session_id, rpc("tools/call", name="get_note", arguments={"path": "Infinite.md"}))
    result = json.loads(reply.body, parse_constant=refuse)["result"]
    assert result["isError"] is False and "Beyond JSON." in result["structuredContent"]["text"]
    json.loads(result["content"][0]["text"], parse_constant=refuse)


@pytest.mark.parametrize("folder", ["../", "/etc", ".obsidian", "Nowhere", "Home.md"])
def test_list_notes_judges_its_folder_like_any_path(server, folder):
    error_text(call(server, "list_notes", {"folder": folder}))


# Notes as resources

def test_resources_list_reads_and_templates(server):
    listed = server.send(server.session_id, rpc("resources/list")).json()["result"]
    uris = [resource["uri"] for resource in listed["resources"]]
    assert "vault:///Ferments/Cr%C3%A8me%20fra%C3%AEche.md" in uris
    assert all(resource["mimeType"] == "text/markdown" for resource in listed["resources"])
    uri = "vault:///Ferments/Cr%C3%A8me%20fra%C3%AEche.md"
    read = server.send(server.session_id, rpc("resources/read", uri=uri)).json()["result"]
    assert read["contents"][0]["uri"] == uri and "crème" in read["contents"][0]["text"].lower()
    templates = server.send(server.session_id, rpc("resources/templates/list")).json()["result"]
    assert templates["resourceTemplates"][0]["uriTemplate"] == "vault:///{+path}"


@pytest.mark.parametrize(
    "uri,code",
    [
        ("vault:///Bread/Pretzels.md", -32002),
        ("vault:///..%2Fsecret.md", -32602),
        ("file:///etc/passwd", -32002),
        ("vault:///Big.md", -32602),
    ],
)
def test_an_unreadable_resource_is_a_protocol_error_in_the_handshake_era(server, uri, code):
    error = server.send(server.session_id, rpc("resources/read", uri=uri)).json()["error"]
    assert error["code"] == code and error["data"] == {"uri": uri}
    assert "swordfish" not in error["message"]


def test_a_missing_resource_in_2026_07_28_is_invalid_params_with_400(server):
    message = rpc("resources/read", uri="vault:///Bread/Pretzels.md", _meta=MODERN_META)
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "resources/read",
               "Mcp-Name": "vault:///Bread/Pretzels.md"}
    reply = server.post(message, headers)
    assert reply.status == 400
    assert reply.json()["error"]["code"] == -32602


def test_resource_results_in_2026_07_28_are_private_and_never_cached(server):
    message = rpc("resources/list", _meta=MODERN_META)
    reply = server.post(message, {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "resources/list"})
    result = reply.json()["result"]
    assert (result["ttlMs"], result["cacheScope"]) == (0, "private")
    tools = server.post(rpc("tools/list", _meta=MODERN_META),
                        {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}).json()["result"]
    assert tools["cacheScope"] == "public"


def test_a_forged_resources_cursor_is_invalid_params(server):
    error = server.send(server.session_id, rpc("resources/list", cursor="garbage")).json()["error"]
    assert error["code"] == -32602


# The vault at startup

@pytest.mark.parametrize("opened_by", [find_step(n) for n in distinct_copies("server.py", since=4)],
                         ids=lambda step: step.folder)
def test_a_missing_vault_stops_the_server_with_one_clear_line(tmp_path, opened_by):
    done = subprocess.run([sys.executable, str(opened_by.server), "--vault", str(tmp_path / "nope"), "--port", "0"],
                          capture_output=True, text=True, timeout=10, env=quiet_environment(str(tmp_path)))
    assert done.returncode != 0
    assert done.stderr.strip().splitlines()[-1].startswith("Cannot open the vault")
    assert "Traceback" not in done.stderr


def test_stdio_serves_the_same_tools(step, vault, tmp_path):
    lines = [
        rpc("initialize", id=1, protocolVersion="2025-11-25", capabilities={}, clientInfo=CLIENT_INFO),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        rpc("tools/call", id=2, name="get_note", arguments={"path": "../secret.md"}),
        rpc("tools/call", id=3, name="get_note", arguments={"path": "Glossary"}),
    ]
    done = subprocess.run([sys.executable, str(step.server), "--stdio", "--vault", str(vault)],
                          input="".join(json.dumps(line) + "\n" for line in lines),
                          capture_output=True, text=True, timeout=20, env=quiet_environment(str(tmp_path)))
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [answer["id"] for answer in answers] == [1, 2, 3]
    assert answers[1]["result"]["isError"] is True
    assert answers[2]["result"]["structuredContent"]["path"] == "Glossary.md"


def test_a_resource_read_answers_with_the_uri_it_was_asked_for(server):
    uri = "vault:///Bread/Focaccia"  # found as Bread/Focaccia.md
    read = server.send(server.session_id, rpc("resources/read", uri=uri)).json()["result"]
    assert read["contents"][0]["uri"] == uri


@pytest.mark.parametrize("name", ["vault:///Home.md", None])
def test_in_2026_07_28_mcp_name_must_repeat_the_uri_of_a_resources_read(server, name):
    message = rpc("resources/read", uri="vault:///Glossary.md", _meta=MODERN_META)
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "resources/read"}
    if name:
        headers["Mcp-Name"] = name
    reply = server.post(message, headers)
    assert reply.status == 400 and reply.json()["error"]["code"] == -32020
    headers["Mcp-Name"] = "vault:///Glossary.md"
    assert server.post(message, headers).status == 200
