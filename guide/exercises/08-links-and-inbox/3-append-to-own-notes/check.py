"""A second write, `append_to_inbox_note`: only to notes the server itself created in the inbox."""
import shutil
import tempfile
from pathlib import Path

from launch import running_server
from manifest import SAMPLE_VAULT
from probe import Server, expect, ok, shown

MARK = "created_by"  # the property create_note writes, with the value "vault-mcp"


def call(server, name: str, **arguments) -> dict:
    answer = server.call("tools/call", {"name": name, "arguments": arguments})
    expect("result" in answer, f"{name} {shown(arguments)} got a JSON-RPC error: {shown(answer.get('error'))}")
    return answer["result"]


def refused(server, vault: Path, path: str, why: str) -> None:
    file = vault / path
    before = file.read_bytes() if file.exists() else None
    result = call(server, "append_to_inbox_note", path=path, content="Appended by the check.")
    expect(result.get("isError") is True,
           f"append_to_inbox_note to {path!r} ({why}) should be refused with isError: true; it answered {shown(result)}")
    after = file.read_bytes() if file.exists() else None
    expect(after == before, f"append_to_inbox_note was refused for {path!r}, but the file changed anyway")


def check(server):
    server.handshake()
    tools = {tool.get("name"): tool for tool in server.result("tools/list")["tools"]}
    expect("append_to_inbox_note" in tools,
           "tools/list offers no tool named 'append_to_inbox_note': declare a Tool beside CREATE_NOTE and add it "
           "to TOOLS in tools.py")
    hints = tools["append_to_inbox_note"].get("annotations", {})
    expect(hints.get("readOnlyHint") is False and hints.get("idempotentHint") is False,
           f"append_to_inbox_note writes, and appending twice adds the text twice: its annotations should say "
           f"readOnlyHint: false and idempotentHint: false; they say {shown(hints)}")
    ok("tools/list offers append_to_inbox_note, with annotations that say it writes")

    # The writing is done on a copy of the sample vault of the check's own, never on the sample vault.
    with tempfile.TemporaryDirectory() as folder:
        vault = Path(folder) / "vault"
        shutil.copytree(SAMPLE_VAULT, vault)
        with running_server(server.folder / "server.py", "--vault", str(vault)) as (url, _log):
            check_writes(Server(url, server.folder), vault)


def check_writes(server, vault: Path) -> None:
    server.handshake()
    made = call(server, "create_note", title="Questions for the mill", content="Which rye do they grow?",
                tags=["bread"])
    expect(made.get("isError") is False, f"create_note should still work; it answered {shown(made)}")
    path = made["structuredContent"]["path"]
    note = call(server, "get_note", path=path).get("structuredContent", {})
    expect(note.get("frontmatter", {}).get(MARK) == "vault-mcp",
           f"a note create_note writes should carry the property {MARK}: vault-mcp (note_text in inbox.py), so "
           f"that the server can tell its own notes from the user's; {path} has {shown(note.get('frontmatter'))}")
    ok(f"create_note marks its note with {MARK}: vault-mcp")

    appended = call(server, "append_to_inbox_note", path=path, content="And do they sell it by the sack?")
    expect(appended.get("isError") is False, f"append_to_inbox_note to {path!r}, a note the server created, "
                                             f"should work; it answered {shown(appended)}")
    text = (vault / path).read_text(encoding="utf-8")
    expect(text.rstrip().endswith("And do they sell it by the sack?") and "Which rye do they grow?" in text,
           f"the note should keep what it had and end with the appended text; it reads {text!r}")
    call(server, "append_to_inbox_note", path=path, content="---\ntags: [evil]\n---")
    note = call(server, "get_note", path=path).get("structuredContent", {})
    expect(note.get("tags") == ["bread"] and note.get("frontmatter", {}).get(MARK) == "vault-mcp",
           f"appended text is body, after the properties: a '---' block in it must not change them; the note "
           f"now has tags {shown(note.get('tags'))} and properties {shown(note.get('frontmatter'))}")
    leftovers = [p.name for p in (vault / "Inbox").iterdir() if p.suffix == ".tmp"]  # .create.lock stays
    expect(not leftovers, f"an append should leave no temporary file behind; the inbox holds {shown(leftovers)}")
    ok("append_to_inbox_note adds to the end of the server's own note, and the properties stay as they were")

    refused(server, vault, "Inbox/Try tangzhong.md", "a note the user wrote in the inbox")
    refused(server, vault, "Home.md", "a note outside the inbox")
    refused(server, vault, "Inbox/No such note.md", "a note that does not exist")
    refused(server, vault, "../Home.md", "a path out of the vault")
    ok("the user's own notes, notes outside the inbox and missing notes are refused, and left as they were")
