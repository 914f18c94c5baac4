"""`--ignore FOLDER`: a folder of the vault the search index leaves out, though its notes still read."""
import shutil
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from launch import running_server
from manifest import SAMPLE_VAULT
from probe import Server, expect, ok, shown

FOLDER = "Journal"
WORD = "aliquot"  # in two of the Journal's bake logs, and in Bread/Bulk fermentation.md
OLD_NOTE = "Journal/2026-03-14 Bake log.md"
NEW_NOTE = "Journal/2026-05-02 Bake log.md"  # written by the check while the copy runs
CONTROL = "Bread/Check control.md"  # written just after it, outside the folder


def call(server, name: str, **arguments) -> dict:
    answer = server.call("tools/call", {"name": name, "arguments": arguments})
    result = answer.get("result", {})
    expect(result.get("isError") is False,
           f"{name} {shown(arguments)} failed: {shown(result or answer.get('error'))}")
    return result.get("structuredContent", {})


def found(server, word: str) -> list[str]:
    results = call(server, "search_vault", query=word, mode="keyword", limit=20).get("results", [])
    return [hit.get("path") for hit in results]


def check(server):
    # The copy runs twice on a copy of the sample vault of the check's own, with one
    # index folder: the first time as it was, the second with --ignore.
    with tempfile.TemporaryDirectory() as folder:
        vault, index_dir = Path(folder) / "vault", Path(folder) / "index"
        shutil.copytree(SAMPLE_VAULT, vault)
        program = server.folder / "server.py"
        with running_server(program, "--vault", str(vault), "--index-dir", str(index_dir)) as (url, _log):
            before = Server(url, server.folder)
            before.handshake()
            paths = found(before, WORD)
            expect(any(path.startswith(f"{FOLDER}/") for path in paths),
                   f"without --ignore, a search for {WORD!r} should find the {FOLDER} notes; it found {shown(paths)}")
        ok(f"without --ignore, search finds {WORD!r} in the {FOLDER} notes, and the index is kept on disk")
        with ExitStack() as stack:
            try:
                url, _log = stack.enter_context(running_server(
                    program, "--vault", str(vault), "--index-dir", str(index_dir), "--ignore", FOLDER))
            except RuntimeError as error:  # it did not start: argparse knows no --ignore yet
                log = "\n".join(str(error).splitlines()[1:][-2:])
                expect(False, f"the copy did not start with --ignore {FOLDER}: add the option in parse_args "
                              f"(server.py) and hand it to VaultIndex. Its log ends:\n{log}")
            check_ignored(Server(url, server.folder), vault)


def check_ignored(server, vault: Path) -> None:
    server.handshake()
    paths = found(server, WORD)
    expect("Bread/Bulk fermentation.md" in paths,
           f"with --ignore {FOLDER}, search should still find the notes outside it; {WORD!r} found {shown(paths)}")
    expect(not any(path.startswith(f"{FOLDER}/") for path in paths),
           f"with --ignore {FOLDER}, search for {WORD!r} still finds {shown(paths)}. The index on disk was built "
           f"without --ignore: once VaultIndex.load has read it, the notes of {FOLDER} must leave it "
           f"(vault_index.py), as they stay out of a new build")
    ok(f"with --ignore {FOLDER}, the index loaded from disk has left the {FOLDER} notes out")

    (vault / NEW_NOTE).write_text("# 2026-05-02 Bake log\n\nA quenelle of zabaglione on the side.\n",
                                  encoding="utf-8")
    time.sleep(0.5)  # the watcher has seen it, and its job waits before the next one
    (vault / CONTROL).write_text("# Check control\n\nA spoon of zabaglione.\n", encoding="utf-8")
    deadline = time.monotonic() + 10
    while CONTROL not in (paths := found(server, "zabaglione")) and time.monotonic() < deadline:
        time.sleep(0.1)
    expect(CONTROL in paths, f"10 s after {CONTROL} was written, search still does not find it: the watcher "
                             f"should keep indexing the notes outside {FOLDER}; search found {shown(paths)}")
    time.sleep(0.5)
    paths = found(server, "zabaglione")
    expect(NEW_NOTE not in paths,
           f"{NEW_NOTE}, written while the copy ran, was indexed: search finds {shown(paths)}. A note of an "
           f"ignored folder stays out when the watcher hands it over too (VaultIndex.update_note)")
    ok(f"a note written in {FOLDER} stays out of search; one written elsewhere is found")

    for path in (OLD_NOTE, NEW_NOTE):
        note = call(server, "get_note", path=path)
        expect(note.get("path") == path, f"get_note {path!r} answered {shown(note)}")
    listed = call(server, "list_notes", folder=FOLDER).get("notes", [])
    expect(NEW_NOTE in listed and OLD_NOTE in listed,
           f"the notes of {FOLDER} are left out of search, not out of the vault: list_notes should list them; "
           f"it lists {shown(listed)}")
    ok(f"get_note and list_notes read the notes of {FOLDER} as before")
