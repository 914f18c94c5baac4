"""Hard links (vault.py, from step 4): one file may have several names, and a name in the
vault may share its file with one outside it, in .obsidian, or in a denied folder (step 10).
Such a note is never served: not listed, not read, not searched, not a resource. A file
whose every name is a note of the vault is served under each. Real files and real hard
links in temporary vaults; in this process for each distinct copy of vault.py, then over
HTTP against step 10's server, and the watcher (steps 9 and 10) for a link made while it runs."""
import os
import time

import pytest

from helpers import McpClient, distinct_copies, rpc, step_modules, tool_call
from launch import running_server
from manifest import find_step
from test_step09_watcher import eventually

SECRET = "zyzzyvasecret"  # a word only the file outside the vault holds

pytestmark = pytest.mark.skipif(not hasattr(os, "link"), reason="no hard links here")


def make_vault(tmp_path):
    """A vault whose hostile names share their files with others, and the file outside it."""
    root, outside = tmp_path / "vault", tmp_path / "outside"
    for folder in (root / ".obsidian", root / "Private", root / "Open", outside):
        folder.mkdir(parents=True)
    (outside / "secret.txt").write_text(f"# Secret\n\n{SECRET} lives outside the vault.\n")
    (root / ".obsidian" / "app.json").write_text('{"userIgnoreFilters": []}\n')
    (root / "Private" / "diary.md").write_text("# Diary\n\nprivatediaryword\n")
    (root / "Home.md").write_text("# Home\n\nA plain note. [[Open/Twin]]\n")
    (root / "Open" / "Twin.md").write_text("# Twin\n\ntwinword, one file with two names in the vault.\n")
    os.link(outside / "secret.txt", root / "Open" / "Leak.md")
    os.link(root / ".obsidian" / "app.json", root / "Open" / "Settings.md")
    os.link(root / "Private" / "diary.md", root / "Open" / "Diary copy.md")
    os.link(root / "Open" / "Twin.md", root / "Twin again.md")
    return root


REFUSED = ["Open/Leak.md", "Open/Settings.md"]  # a name outside the vault, one in .obsidian
DENIED_TWIN = "Open/Diary copy.md"  # its other name is in Private/, which step 10 may deny


@pytest.mark.parametrize("step", distinct_copies("vault.py", since=4))
def test_a_file_with_a_name_outside_the_vault_is_neither_listed_nor_read(step, tmp_path):
    root = make_vault(tmp_path)
    with step_modules(find_step(step).path):
        from vault import Vault, VaultError
    vault = Vault(root)
    listed = vault.list_notes()
    assert listed == ["Home.md", "Open/Diary copy.md", "Open/Twin.md", "Private/diary.md", "Twin again.md"]
    for path in REFUSED:
        with pytest.raises(VaultError, match="hard links") as refusal:
            vault.read_note(path)
        assert SECRET not in str(refusal.value)
    assert vault.read_note("Twin again.md")[1] == vault.read_note("Open/Twin.md")[1]  # both names are notes here
    assert "privatediaryword" in vault.read_note(DENIED_TWIN)[1]  # nothing is denied in this vault


def test_a_note_sharing_its_file_with_a_denied_note_is_denied_too(tmp_path):
    root = make_vault(tmp_path)
    with step_modules(find_step(10).path):
        from vault import Vault, VaultError
    vault = Vault(root, deny=["Private"])
    assert DENIED_TWIN not in vault.list_notes() and DENIED_TWIN not in vault.all_notes()
    with pytest.raises(VaultError, match="hard links"):
        vault.read_note(DENIED_TWIN)
    assert "Open/Twin.md" in vault.list_notes()


@pytest.mark.parametrize("step", distinct_copies("vault.py", since=4))
def test_a_link_made_after_the_listing_is_caught_when_the_note_is_read(step, tmp_path):
    root = make_vault(tmp_path)
    with step_modules(find_step(step).path):
        from vault import Vault, VaultError
    vault = Vault(root)
    assert "Home.md" in vault.list_notes()  # listed while it had one name
    os.link(root / "Home.md", tmp_path / "outside" / "Home elsewhere.md")  # no folder of the vault changes
    with pytest.raises(VaultError, match="2 names"):
        vault.read_note("Home.md")


@pytest.mark.parametrize("step", distinct_copies("vault.py", since=4))
def test_a_note_whose_other_name_is_removed_is_served_again(step, tmp_path):
    root = make_vault(tmp_path)
    with step_modules(find_step(step).path):
        from vault import Vault
    vault = Vault(root)
    (tmp_path / "outside" / "secret.txt").unlink()
    time.sleep(0.01)
    assert "Open/Leak.md" in vault.list_notes() and SECRET in vault.read_note("Open/Leak.md")[1]


def test_step_10_serves_no_hostile_name_by_any_tool_resource_or_search(tmp_path):
    root = make_vault(tmp_path)
    with running_server(find_step(10).server, "--vault", str(root), "--exclude", "Private", timeout=30) as (url, log):
        client = McpClient(url)
        client.session_id = client.open_session()

        def ask(method, **params) -> dict:
            return client.send(client.session_id, rpc(method, **params)).json()

        hostile = [*REFUSED, DENIED_TWIN]
        listed = tool_call(client, "list_notes")["structuredContent"]["notes"]
        assert set(listed) == {"Home.md", "Open/Twin.md", "Twin again.md"}
        resources = {item["uri"] for item in ask("resources/list")["result"]["resources"]}
        assert resources == {"vault:///Home.md", "vault:///Open/Twin.md", "vault:///Twin%20again.md"}
        for path in hostile:
            assert tool_call(client, "get_note", path=path)["isError"]
            assert "error" in ask("resources/read", uri="vault:///" + path.replace(" ", "%20"))
        found = eventually(lambda: (answer := tool_call(client, "search_vault", query="twinword", mode="keyword"))
                           ["structuredContent"]["results"] and answer, "an index with the twin note", 30)
        assert {hit["path"] for hit in found["structuredContent"]["results"]} == {"Open/Twin.md", "Twin again.md"}
        for word in (SECRET, "privatediaryword", "userIgnoreFilters"):
            assert tool_call(client, "search_vault", query=word, mode="keyword")["structuredContent"]["results"] == []
        tags_and_links = tool_call(client, "get_backlinks", path="Open/Twin.md")["structuredContent"]
        assert [link["path"] for link in tags_and_links["backlinks"]] == ["Home.md"]


@pytest.mark.parametrize("step", distinct_copies("watcher.py", since=9))
def test_a_hard_link_made_out_of_the_vault_while_the_server_runs_takes_the_note_out_of_search(step, tmp_path):
    root = make_vault(tmp_path)
    (root / "Open" / "Plain.md").write_text("# Plain\n\nplainword until it gains a name outside.\n")
    a_minute_ago = time.time() - 60
    for folder in [root, *(path for path in root.rglob("*") if path.is_dir())]:  # the listing is trusted
        os.utime(folder, (a_minute_ago, a_minute_ago))  # as it is: only the note's own stat shows the link
    with running_server(find_step(step).server, "--vault", str(root), timeout=30) as (url, log):
        client = McpClient(url)
        client.session_id = client.open_session()

        def hits() -> list:
            answer = tool_call(client, "search_vault", query="plainword", mode="keyword")["structuredContent"]
            return [] if "indexed" in answer else [hit["path"] for hit in answer["results"]]

        eventually(lambda: hits() == ["Open/Plain.md"], "the note indexed", 30)
        os.link(root / "Open" / "Plain.md", tmp_path / "outside" / "Plain.txt")
        eventually(lambda: hits() == [], "the note gone from search", 30)
        assert tool_call(client, "get_note", path="Open/Plain.md")["isError"]
