"""Safe edits (issue 29) over real HTTP, on temporary vaults: get_note's version, the
compare-and-write core, edit_note's four operations byte for byte, and the write
policy. Each test runs against every step that serves the tools (8, 9 and 10), since
tools.py, protocol.py and server.py differ between them."""
import os
import shutil
import threading

import pytest

from helpers import McpClient, rpc, tool_call, tool_data, tool_refusal, tool_session
from launch import running_server
from manifest import SAMPLE_VAULT, find_step

STEPS = [8, 9, 10]


@pytest.fixture(params=STEPS)
def step(request):
    return find_step(request.param)


@pytest.fixture
def vault(tmp_path):
    root = tmp_path / "vault"
    root.mkdir()
    return root


def write(vault, path: str, data: bytes):
    file = vault / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_bytes(data)
    return file


def serve(step, vault, *args):
    return running_server(step.server, "--vault", str(vault), *args)


def session(url, step) -> McpClient:
    return tool_session(url, step.path)


NOTE = (b"---\n# kept: a comment\ntags: [bread]\n---\n"
        b"# Focaccia\nIntro line.\n\n## Dough\nFlour and water.\n- one item ^first\n\n"
        b"## Shaping\nDimple it.\n\n### Timing\nTwo hours.\n\n## Baking\nHot oven.\n")


def edited(step, vault, data: bytes, **arguments) -> bytes:
    """The note's bytes after one edit_note made with the version get_note gave."""
    file = write(vault, "Bread/Focaccia.md", data)
    with serve(step, vault) as (url, _):
        client = session(url, step)
        version = tool_data(client, "get_note", path="Bread/Focaccia.md")["version"]
        answer = tool_data(client, "edit_note", path="Bread/Focaccia.md", version=version, **arguments)
        assert answer["version"] != version and answer["changed"] is True
        assert tool_data(client, "get_note", path="Bread/Focaccia.md")["version"] == answer["version"]
    return file.read_bytes()


# region one server, many edits
@pytest.fixture(scope="module", params=STEPS)
def served(request, tmp_path_factory):
    step = find_step(request.param)
    vault = tmp_path_factory.mktemp(f"edits{request.param}") / "vault"
    shutil.copytree(SAMPLE_VAULT, vault)
    with serve(step, vault) as (url, _):
        yield session(url, step), vault


def test_the_version_changes_with_the_bytes_and_only_with_them(served):
    client, vault = served
    file = write(vault, "Scratch/Versioned.md", b"one\n")
    first = tool_data(client, "get_note", path="Scratch/Versioned.md")["version"]
    assert tool_data(client, "get_note", path="Scratch/Versioned.md")["version"] == first
    file.write_bytes(b"one\r\n")  # the same text to a reader, other bytes
    assert tool_data(client, "get_note", path="Scratch/Versioned.md")["version"] != first


def test_a_stale_version_is_refused_with_the_current_one_and_nothing_written(served):
    client, vault = served
    file = write(vault, "Scratch/Stale.md", b"# A\nmine\n")
    version = tool_data(client, "get_note", path="Scratch/Stale.md")["version"]
    file.write_bytes(b"# A\nthe user's own edit\n")
    current = tool_data(client, "get_note", path="Scratch/Stale.md")["version"]
    refusal = tool_refusal(client, "edit_note", path="Scratch/Stale.md", operation="replace_section",
                           heading="A", content="model", version=version)
    assert current in refusal and "nothing was written" in refusal
    assert file.read_bytes() == b"# A\nthe user's own edit\n"


@pytest.mark.parametrize("operation", ["replace_section", "find_replace"])
def test_replace_section_and_find_replace_need_a_version(served, operation):
    client, vault = served
    file = write(vault, "Scratch/Unversioned.md", b"# A\ntext\n")
    refusal = tool_refusal(client, "edit_note", path="Scratch/Unversioned.md", operation=operation, heading="A",
                           find="text", content="new")
    assert "needs `version`" in refusal and file.read_bytes() == b"# A\ntext\n"


@pytest.mark.parametrize("text, count", [(b"no match here\n", "does not occur"), (b"x x x\n", "occurs 3 times")])
def test_find_replace_refuses_zero_or_several_matches_and_says_how_many(served, text, count):
    client, vault = served
    file = write(vault, "Scratch/Find.md", text)
    version = tool_data(client, "get_note", path="Scratch/Find.md")["version"]
    refusal = tool_refusal(client, "edit_note", path="Scratch/Find.md", operation="find_replace", find="x",
                           content="y", version=version)
    assert count in refusal and file.read_bytes() == text


def test_a_missing_heading_is_refused_naming_the_headings(served):
    client, vault = served
    file = write(vault, "Scratch/Headings.md", b"# One\n# Two\n")
    refusal = tool_refusal(client, "edit_note", path="Scratch/Headings.md", operation="append", heading="Three",
                           content="x")
    assert '"One"' in refusal and '"Two"' in refusal and file.read_bytes() == b"# One\n# Two\n"


@pytest.mark.parametrize("path", ["../outside.md", ".obsidian/app.md", "/etc/passwd.md", ".trash/old.md"])
def test_an_escaping_or_hidden_target_is_refused(served, path):
    client, vault = served
    write(vault, ".trash/old.md", b"old\n")
    tool_refusal(client, "edit_note", path=path, operation="append", content="x")
    assert (vault / ".trash/old.md").read_bytes() == b"old\n"


def test_a_symbolic_link_out_of_the_vault_is_not_written_through(served, tmp_path):
    client, vault = served
    outside = tmp_path / "outside.md"
    outside.write_bytes(b"secret\n")
    (vault / "Scratch").mkdir(exist_ok=True)
    (vault / "Scratch/Link.md").symlink_to(outside)
    tool_refusal(client, "edit_note", path="Scratch/Link.md", operation="append", content="x")
    assert outside.read_bytes() == b"secret\n"


def test_twenty_racing_edits_with_one_version_apply_exactly_once(served):
    client, vault = served
    file = write(vault, "Scratch/Race.md", b"# Count\nnothing yet\n")
    version = tool_data(client, "get_note", path="Scratch/Race.md")["version"]
    answers = [None] * 20

    def edit(n):
        racer = McpClient(client.url)
        racer.session_id = client.session_id
        reply = racer.send(client.session_id, rpc("tools/call", name="edit_note", arguments={
            "path": "Scratch/Race.md", "operation": "replace_section", "heading": "Count",
            "content": f"writer {n}", "version": version}))
        answers[n] = reply.json()["result"]

    threads = [threading.Thread(target=edit, args=(n,)) for n in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    applied = [n for n, answer in enumerate(answers) if not answer["isError"]]
    assert len(applied) == 1, answers
    assert file.read_bytes() == f"# Count\nwriter {applied[0]}\n".encode()
    assert all("has changed since it was read" in a["content"][0]["text"] for a in answers if a["isError"])
# endregion


# region byte for byte
@pytest.mark.parametrize("arguments, expected", [
    ({"operation": "append", "content": "Rest it."},
     NOTE + b"Rest it.\n"),
    ({"operation": "prepend", "content": "Made twice."},
     NOTE.replace(b"---\n# Focaccia", b"---\nMade twice.\n# Focaccia")),
    ({"operation": "append", "heading": "Dough", "content": "- salt"},
     NOTE.replace(b"^first\n\n", b"^first\n- salt\n\n")),
    ({"operation": "prepend", "heading": "Shaping#Timing", "content": "At room temperature:"},
     NOTE.replace(b"### Timing\n", b"### Timing\nAt room temperature:\n")),
    ({"operation": "replace_section", "heading": "Shaping", "content": "Stretch, then dimple.\n"},
     NOTE.replace(b"Dimple it.\n\n### Timing\nTwo hours.\n", b"Stretch, then dimple.\n")),
    ({"operation": "replace_section", "heading": "^first", "content": "- two items"},
     NOTE.replace(b"- one item ^first", b"- two items ^first")),
    ({"operation": "find_replace", "find": "Hot oven.", "content": "250 C."},
     NOTE.replace(b"Hot oven.", b"250 C.")),
])
def test_an_edit_changes_only_what_it_names(step, vault, arguments, expected):
    assert edited(step, vault, NOTE, **arguments) == expected


def test_crlf_and_a_byte_order_mark_are_kept(step, vault):
    crlf = b"\xef\xbb\xbf" + NOTE.replace(b"\n", b"\r\n")
    after = edited(step, vault, crlf, operation="append", heading="Dough", content="- salt\n- yeast")
    assert after == crlf.replace(b"^first\r\n\r\n", b"^first\r\n- salt\r\n- yeast\r\n\r\n")


def test_the_file_mode_is_kept(step, vault):
    file = write(vault, "Bread/Focaccia.md", NOTE)
    os.chmod(file, 0o664)  # 0o020 is a bit the usual umask takes away
    edited(step, vault, NOTE, operation="append", content="x")
    assert oct(file.stat().st_mode & 0o777) == oct(0o664)
# endregion


# region write policy
WRITE_TOOLS = {"create_note", "edit_note", "set_properties", "move_note", "delete_note", "undo_edit"}


def tool_names(url, step) -> set[str]:
    client = session(url, step)
    return {tool["name"] for tool in client.send(client.session_id, rpc("tools/list")).json()["result"]["tools"]}


def test_read_only_lists_no_write_tool_and_runs_none(step, vault):
    write(vault, "Note.md", b"text\n")
    with serve(step, vault, "--read-only") as (url, _):
        assert not tool_names(url, step) & WRITE_TOOLS and "get_note" in tool_names(url, step)
        client = session(url, step)
        reply = client.send(client.session_id, rpc("tools/call", name="edit_note", arguments={
            "path": "Note.md", "operation": "append", "content": "x"})).json()
        assert "error" in reply
    assert (vault / "Note.md").read_bytes() == b"text\n"


def test_the_environment_can_make_the_server_read_only(step, vault, monkeypatch):
    monkeypatch.setenv("VAULT_MCP_READ_ONLY", "1")
    with serve(step, vault) as (url, _):
        assert not tool_names(url, step) & WRITE_TOOLS


def test_write_folders_keep_writes_inside_them(step, vault):
    write(vault, "Journal/Today.md", b"today\n")
    write(vault, "Bread/Focaccia.md", b"bread\n")
    with serve(step, vault, "--write-folder", "journal") as (url, _):
        assert "create_note" not in tool_names(url, step)  # the inbox is outside
        client = session(url, step)
        tool_data(client, "edit_note", path="Journal/Today.md", operation="append", content="more")
        refusal = tool_refusal(client, "edit_note", path="Bread/Focaccia.md", operation="append", content="x")
        assert "outside the folders" in refusal
    assert (vault / "Bread/Focaccia.md").read_bytes() == b"bread\n"
    assert (vault / "Journal/Today.md").read_bytes() == b"today\nmore\n"
    with serve(step, vault, "--write-folder", "Inbox") as (url, _):
        assert "create_note" in tool_names(url, step)


def test_no_editing_tool_is_marked_read_only(step, vault):
    with serve(step, vault) as (url, _):
        client = session(url, step)
        tools = client.send(client.session_id, rpc("tools/list")).json()["result"]["tools"]
    for tool in tools:
        if tool["name"] in WRITE_TOOLS:
            assert tool["annotations"]["readOnlyHint"] is False
# endregion


def test_denied_and_excluded_notes_are_never_written(vault):
    step = find_step(10)
    write(vault, "Private/Diary.md", b"mine\n")
    write(vault, "Archive/Old.md", b"old\n")
    write(vault, ".obsidian/app.json", b'{"userIgnoreFilters": ["Archive/"]}')
    write(vault, "Open.md", b"open\n")
    with serve(step, vault, "--exclude", "Private") as (url, _):
        client = session(url, step)
        assert "No note" in tool_refusal(client, "edit_note", path="Private/Diary.md", operation="append",
                                         content="x")
        assert "excluded files" in tool_refusal(client, "edit_note", path="Archive/Old.md", operation="append",
                                                content="x")
        version = tool_data(client, "get_note", path="Open.md")["version"]
        for target, why in (("Private/Open.md", "deny list"), ("private/open", "deny list"),
                            ("Archive/Open.md", "excluded files")):
            assert why in tool_refusal(client, "move_note", path="Open.md", to=target, version=version)
    assert (vault / "Private/Diary.md").read_bytes() == b"mine\n"
    assert (vault / "Archive/Old.md").read_bytes() == b"old\n"
    assert (vault / "Open.md").is_file() and not (vault / "Private/Open.md").exists()


# region properties
FRONT = (b'---\n# kept: a comment\ntitle: "Rye"   # quoted, with a comment\ntags: [bread, rye]\n'
         b"steps:\n- mix\n- rest\n\n# the oven\nrating: 4\n---\n# Rye\nBody.\n")


@pytest.mark.parametrize("properties, expected", [
    ({"rating": 5}, FRONT.replace(b"rating: 4", b"rating: 5")),
    ({"tags": ["bread", "rye", "sour dough"]}, FRONT.replace(b"[bread, rye]", b"[bread, rye, sour dough]")),
    ({"steps": None}, FRONT.replace(b"steps:\n- mix\n- rest\n", b"")),
    ({"status": "to do: soon"}, FRONT.replace(b"rating: 4\n", b'rating: 4\nstatus: "to do: soon"\n')),
    ({"steps": ["mix", "true"]}, FRONT.replace(b"steps:\n- mix\n- rest\n", b'steps:\n- mix\n- "true"\n')),
])
def test_set_properties_keeps_every_other_byte(step, vault, properties, expected):
    file = write(vault, "Rye.md", FRONT)
    with serve(step, vault) as (url, _):
        client = session(url, step)
        version = tool_data(client, "get_note", path="Rye.md")["version"]
        tool_data(client, "set_properties", path="Rye.md", properties=properties, version=version)
        before = {"title": "Rye", "tags": ["bread", "rye"], "steps": ["mix", "rest"], "rating": 4}
        expected_properties = {name: value for name, value in (before | properties).items() if value is not None}
        assert tool_data(client, "get_note", path="Rye.md")["frontmatter"] == expected_properties
    assert file.read_bytes() == expected


def test_set_properties_creates_frontmatter_and_refuses_what_it_cannot_read(served):
    client, vault = served
    plain = write(vault, "Scratch/Plain.md", b"# Plain\r\nText.\r\n")
    tool_data(client, "set_properties", path="Scratch/Plain.md", properties={"tags": ["idea"]})
    assert plain.read_bytes() == b"---\r\ntags:\r\n  - idea\r\n---\r\n# Plain\r\nText.\r\n"
    broken = write(vault, "Scratch/Broken.md", b'---\ntitle: "unclosed\n---\nText.\n')
    refusal = tool_refusal(client, "set_properties", path="Scratch/Broken.md", properties={"a": 1})
    assert "cannot be read" in refusal and broken.read_bytes() == b'---\ntitle: "unclosed\n---\nText.\n'
    refusal = tool_refusal(client, "set_properties", path="Scratch/Plain.md", properties={"a": {"b": 1}})
    assert "can be text" in refusal
# endregion


# region journal and undo
def test_undo_puts_each_write_back_to_the_byte(served):
    client, vault = served
    original = b"---\r\ntags: [a]   # mine\r\n---\r\n# Undo\r\nText.\r\n"
    file = write(vault, "Scratch/Undo.md", original)
    version = tool_data(client, "get_note", path="Scratch/Undo.md")["version"]
    edit = tool_data(client, "edit_note", path="Scratch/Undo.md", operation="replace_section", heading="Undo",
                     content="Other text.", version=version)
    properties = tool_data(client, "set_properties", path="Scratch/Undo.md", properties={"tags": None, "x": 1})
    assert file.read_bytes() != original
    assert tool_data(client, "undo_edit", editId=properties["editId"])["restored"] == ["Scratch/Undo.md"]
    tool_data(client, "undo_edit", editId=edit["editId"])
    assert file.read_bytes() == original


def test_undo_refuses_naming_the_note_changed_since_and_changes_nothing(served):
    client, vault = served
    file = write(vault, "Scratch/Changed.md", b"one\n")
    edit = tool_data(client, "edit_note", path="Scratch/Changed.md", operation="append", content="two")
    file.write_bytes(b"one\ntwo\nthe user's three\n")
    refusal = tool_refusal(client, "undo_edit", editId=edit["editId"])
    assert "Scratch/Changed.md" in refusal and "nothing was undone" in refusal
    assert file.read_bytes() == b"one\ntwo\nthe user's three\n"


def test_a_deleted_note_sits_in_the_trash_and_comes_back_with_undo(served):
    client, vault = served
    file = write(vault, "Scratch/Gone.md", b"# Gone\nkeep me\n")
    os.chmod(file, 0o640)
    version = tool_data(client, "get_note", path="Scratch/Gone.md")["version"]
    stale = tool_refusal(client, "delete_note", path="Scratch/Gone.md", version="0" * 16)
    assert "nothing was written" in stale and file.exists()
    deleted = tool_data(client, "delete_note", path="Scratch/Gone.md", version=version)
    assert not file.exists() and (vault / deleted["trash"]).read_bytes() == b"# Gone\nkeep me\n"
    assert deleted["trash"].startswith(".trash/")
    tool_data(client, "undo_edit", editId=deleted["editId"])
    assert file.read_bytes() == b"# Gone\nkeep me\n" and oct(file.stat().st_mode & 0o777) == oct(0o640)
    assert not (vault / deleted["trash"]).exists()


def test_undo_of_create_note_moves_the_new_note_to_the_trash(served):
    client, vault = served
    created = tool_data(client, "create_note", title="Undo me", content="x")
    tool_data(client, "undo_edit", editId=created["editId"])
    assert not (vault / created["path"]).exists() and (vault / ".trash/Undo me.md").is_file()
    assert "No edit" in tool_refusal(client, "undo_edit", editId=created["editId"])  # once only


def test_the_journal_keeps_the_last_writes(step, tmp_path):
    from helpers import step_modules
    with step_modules(step.path):
        import journal
    store = journal.Journal(tmp_path / "journal")
    ids = [store.record(journal.Entry("edit_note", [journal.Change("a.md", b"x" * 10, "v")]))
           for _ in range(journal.MAX_ENTRIES + 5)]
    kept = sorted(file.stem for file in store.folder.glob("*.json"))
    assert kept == sorted(ids[5:])  # the oldest five went
    assert store.read(ids[-1]).changes[0].before == b"x" * 10
# endregion


# region move
def vault_bytes(vault) -> dict:
    return {str(file.relative_to(vault)): file.read_bytes() for file in vault.rglob("*.md")
            if ".trash" not in file.parts}


def backlink_sources(client, path) -> set:
    return {backlink["path"] for backlink in tool_data(client, "get_backlinks", path=path)["backlinks"]}


def test_a_move_rewrites_every_link_and_undo_puts_all_back(step, tmp_path):
    vault = tmp_path / "vault"
    shutil.copytree(SAMPLE_VAULT, vault)
    original = vault_bytes(vault)
    old, new = "Bread/Bulk fermentation.md", "Bread/Archive/Bulk rise.md"
    with serve(step, vault) as (url, _):
        client = session(url, step)
        linking = backlink_sources(client, old)
        assert linking
        version = tool_data(client, "get_note", path=old)["version"]
        assert "nothing was written" in tool_refusal(client, "move_note", path=old, to=new, version="0" * 16)
        assert "exists" in tool_refusal(client, "move_note", path=old, to="Home.md", version=version)
        tool_refusal(client, "move_note", path=old, to="../Outside.md", version=version)
        assert vault_bytes(vault) == original
        moved = tool_data(client, "move_note", path=old, to=new, version=version)
        assert moved["to"] == new and set(moved["changed"]) <= linking | {new} and moved["changed"]
        assert not (vault / old).exists() and (vault / new).is_file()
        assert backlink_sources(client, new) == linking  # the backlinks follow the note
        assert "No note" in tool_refusal(client, "get_backlinks", path=old)
        for text in (file.read_text() for file in vault.rglob("*.md")):
            assert "[[Bulk fermentation" not in text and "(Bulk%20fermentation.md)" not in text
        tool_data(client, "undo_edit", editId=moved["editId"])
    assert vault_bytes(vault) == original


def test_a_move_is_refused_when_a_linking_note_changed_since_that_edit(step, tmp_path):
    vault = tmp_path / "vault"
    write(vault, "A.md", b"# A\n")
    write(vault, "B.md", b"see [[A]]\n")
    with serve(step, vault) as (url, _):
        client = session(url, step)
        version = tool_data(client, "get_note", path="A.md")["version"]
        moved = tool_data(client, "move_note", path="A.md", to="Z/A2", version=version)
        assert moved["changed"] == ["B.md"] and (vault / "B.md").read_bytes() == b"see [[A2]]\n"
        (vault / "B.md").write_bytes(b"see [[A2]] and more\n")
        refusal = tool_refusal(client, "undo_edit", editId=moved["editId"])
        assert "B.md" in refusal
    assert (vault / "Z/A2.md").read_bytes() == b"# A\n" and not (vault / "A.md").exists()
# endregion


@pytest.mark.parametrize("number", [9, 10])
def test_the_watcher_sees_an_edit_and_backlinks_follow(number, tmp_path):
    import time
    step = find_step(number)
    vault = tmp_path / "vault"
    write(vault, "Target.md", b"# Target\n")
    write(vault, "Source.md", b"# Source\n")
    with serve(step, vault) as (url, _):
        client = session(url, step)
        assert backlink_sources(client, "Target.md") == set()
        tool_data(client, "edit_note", path="Source.md", operation="append", content="See [[Target]].")
        deadline = time.monotonic() + 10
        while backlink_sources(client, "Target.md") != {"Source.md"} and time.monotonic() < deadline:
            time.sleep(0.1)
        assert backlink_sources(client, "Target.md") == {"Source.md"}


def test_without_a_watcher_the_links_follow_each_write_at_once(tmp_path):
    """Step 8 has no watcher: an edit, a delete and the undo of a move each tell the link
    graph at once, so backlinks, and a move made after, see the notes as they are."""
    step = find_step(8)
    vault = tmp_path / "vault"
    write(vault, "Target.md", b"# Target\n")
    write(vault, "Source.md", b"# Source\n")
    write(vault, "Other.md", b"see [[Target]]\n")
    with serve(step, vault) as (url, _):
        client = session(url, step)
        tool_data(client, "edit_note", path="Source.md", operation="append", content="See [[Target]].")
        assert backlink_sources(client, "Target.md") == {"Source.md", "Other.md"}
        version = tool_data(client, "get_note", path="Other.md")["version"]
        tool_data(client, "delete_note", path="Other.md", version=version)
        assert backlink_sources(client, "Target.md") == {"Source.md"}
        version = tool_data(client, "get_note", path="Target.md")["version"]
        moved = tool_data(client, "move_note", path="Target.md", to="Kept/Goal.md", version=version)
        assert moved["changed"] == ["Source.md"]
        tool_data(client, "undo_edit", editId=moved["editId"])
        assert backlink_sources(client, "Target.md") == {"Source.md"}  # the note is back where it was
        version = tool_data(client, "get_note", path="Target.md")["version"]
        again = tool_data(client, "move_note", path="Target.md", to="Kept/Goal.md", version=version)
        assert again["changed"] == ["Source.md"]


def test_the_bundle_settings_reach_the_policy(vault, monkeypatch):
    """The bundle passes its settings as variables (steps/package.py): "true" and folders joined."""
    step = find_step(10)
    monkeypatch.setenv("VAULT_MCP_WRITE_FOLDER", os.pathsep.join(["Journal", "Ideas"]))
    with serve(step, vault) as (url, _):
        assert "create_note" not in tool_names(url, step) and "edit_note" in tool_names(url, step)
    monkeypatch.setenv("VAULT_MCP_READ_ONLY", "true")
    with serve(step, vault) as (url, _):
        assert not tool_names(url, step) & WRITE_TOOLS


def test_a_utf16_note_stays_utf16_with_its_mark(step, vault):
    data = "\ufeff# Notiz\r\nÄrger.\r\n".encode("utf-16-le")
    after = edited(step, vault, data, operation="append", content="Mehr.")
    assert after == "\ufeff# Notiz\r\nÄrger.\r\nMehr.\r\n".encode("utf-16-le")


def test_a_move_refuses_a_linking_note_changed_after_the_plan_read_it(tmp_path, monkeypatch):
    """The plan is read without locks; a note changed between the plan and the writes is not
    written over, and nothing moves."""
    from helpers import STEPS_DIR, step_modules
    with step_modules(STEPS_DIR / "08-links-and-inbox"):
        import note_moves
        from links import LinkGraph
        from note_writes import StaleVersion, version_of
        from vault import Vault
        from write_policy import WritePolicy
    write(tmp_path, "A.md", b"# A\n")
    write(tmp_path, "B.md", b"see [[A]]\n")
    vault = Vault(tmp_path)
    planned = note_moves.plan_move

    def plan_then_the_user_types(*arguments):
        plan = planned(*arguments)
        (tmp_path / "B.md").write_bytes(b"see [[A]], and the user's words\n")
        return plan

    monkeypatch.setattr(note_moves, "plan_move", plan_then_the_user_types)
    with pytest.raises(StaleVersion, match="B.md"):
        note_moves.move_note(vault, WritePolicy(), LinkGraph.build(vault), "A.md", "Z/A2.md", version_of(b"# A\n"))
    assert (tmp_path / "B.md").read_bytes() == b"see [[A]], and the user's words\n"
    assert (tmp_path / "A.md").is_file() and not (tmp_path / "Z").exists()
