"""Step 4's vault.py: every path a model sends is judged before a file is opened.

Real files in temporary vaults; real symlinks where the system allows them.
"""
import logging
import os
import random
import threading
import unicodedata
from pathlib import Path
from urllib.parse import unquote

import pytest
from helpers import STEPS_DIR, step_modules
from manifest import SAMPLE_VAULT

with step_modules(STEPS_DIR / "04-tools-and-notes"):
    import vault as vault_module
    from vault import (
        MAX_NOTE_BYTES,
        InvalidCursor,
        NoteNotFound,
        NotText,
        Vault,
        VaultError,
        page,
        path_to_uri,
        uri_to_path,
    )

NOTES = {
    "Home.md": "# Home\n",
    "Bread/Focaccia.md": "# Focaccia\n",
    "Bread/Rye bread.md": "# Rye\n",
    "Bread/Deep/Deeper/Levain.md": "# Levain\n",
    "Bread.md": "# A note named like a folder\n",
    "Attachments/table.csv": "a,b\n",
    ".obsidian/app.json": "{}\n",
    ".obsidian/snippet.md": "# hidden\n",
    ".trash/Old.md": "# deleted\n",
    ".git/config": "[core]\n",
    "Bread/.draft.md": "# hidden file\n",
    "%2e%2e/x.md": "# a folder really named %2e%2e\n",
}


@pytest.fixture
def root(tmp_path) -> Path:
    vault = tmp_path / "vault"
    for name, text in NOTES.items():
        (vault / name).parent.mkdir(parents=True, exist_ok=True)
        (vault / name).write_text(text, encoding="utf-8")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.md").write_text("# secret\n", encoding="utf-8")
    (tmp_path / "outside" / "Focaccia.md").write_text("# secret\n", encoding="utf-8")  # named like a note
    return vault


@pytest.fixture
def vault(root) -> Vault:
    return Vault(root)


def refused(vault: Vault, user_path, *words, error=VaultError) -> str:
    """resolve refuses user_path with error, and the message has every one of words."""
    with pytest.raises(error) as caught:
        vault.resolve(user_path)
    message = str(caught.value)
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"
    assert str(vault.root) not in message  # the server's own paths stay private
    return message


def link(target: Path, at: Path, directory: bool = False) -> None:
    try:
        os.symlink(target, at, target_is_directory=directory)
    except (OSError, NotImplementedError):
        pytest.skip("this system does not let us create symlinks")


@pytest.mark.parametrize(
    "user_path",
    ["../../etc/passwd", "..", "a/../../b", "Bread/../Home.md", "Bread\\..\\..\\x", "..\\x", "Bread/.."],
)
def test_dot_dot_is_refused_anywhere(vault, user_path):
    refused(vault, user_path, "'..'", "inside the vault")


@pytest.mark.parametrize(
    "user_path", ["/etc/passwd", "C:\\x", "C:x", "c:/Windows/win.ini", "\\\\server\\share", "//server/share", "\\Home.md", "///etc"]
)
def test_absolute_paths_drives_and_shares_are_refused(vault, user_path):
    refused(vault, user_path, "absolute", "relative to the vault", '"Folder/Note.md"')


def test_backslashes_are_separators(vault, root):
    assert vault.resolve("Bread\\Focaccia.md") == root / "Bread" / "Focaccia.md"


def test_a_nul_byte_is_refused(vault):
    refused(vault, "Home\0.md", "NUL", "\\u0000")


@pytest.mark.parametrize("user_path", ["", "   ", "\t\n"])
def test_an_empty_path_is_refused(vault, user_path):
    refused(vault, user_path, "empty", '"Folder/Note.md"')


@pytest.mark.parametrize("user_path", [None, 3, ["Home.md"]])
def test_a_path_that_is_not_a_string_is_refused(vault, user_path):
    refused(vault, user_path, "must be a string")


@pytest.mark.parametrize("user_path", [".", "./", "./."])
def test_the_vault_itself_is_not_a_note(vault, user_path):
    refused(vault, user_path, "names the vault itself")


@pytest.mark.parametrize(
    "user_path, name",
    [
        (".obsidian/app.json", ".obsidian"),
        (".obsidian/snippet.md", ".obsidian"),
        (".trash/Old.md", ".trash"),
        (".git/config", ".git"),
        ("Bread/.draft.md", ".draft.md"),
        ("Bread/.draft", ".draft"),
        ("Bread\\.hidden\\x.md", ".hidden"),
        (".env", ".env"),
    ],
)
def test_hidden_names_are_not_notes_at_any_depth(vault, user_path, name):
    refused(vault, user_path, f'"{name}"', "names starting with '.'")


@pytest.mark.parametrize(
    "user_path, literally",
    [
        ("%2e%2e/%2e%2e/outside/secret.md", "No note"),
        ("..%2f..%2foutside%2fsecret.md", "names starting with '.'"),
        ("%2E%2E%2Foutside%2Fsecret", "No note"),
    ],
)
def test_percent_escapes_are_taken_literally_and_cannot_escape_either_way(vault, user_path, literally):
    refused(vault, user_path, literally)  # taken literally: a name that is not there
    refused(vault, unquote(user_path), "'..'")  # had it been decoded: '..', refused


def test_a_folder_really_named_with_percent_escapes_is_just_a_folder(vault, root):
    assert vault.resolve("%2e%2e/x") == root / "%2e%2e" / "x.md"


def test_a_very_long_name_is_a_clear_error(vault):
    message = refused(vault, "x" * 300, "too long")
    assert len(message) < 300  # the path is cut short in the message


def test_a_very_long_path_is_a_clear_error(vault):
    refused(vault, "a/" * 2040 + "b.md", "too long")  # within the cap, longer than the system opens
    refused(vault, "a/" * 3000 + "b.md", "6004 characters long", "no path in a vault is longer than 4096")


def test_a_note_resolves_to_its_real_file(vault, root):
    assert vault.resolve("Bread/Focaccia.md") == root / "Bread" / "Focaccia.md"
    assert vault.resolve("./Bread//Focaccia.md") == root / "Bread" / "Focaccia.md"


def test_the_md_suffix_is_optional(vault, root):
    assert vault.resolve("Bread/Rye bread") == root / "Bread" / "Rye bread.md"
    assert vault.read_note("Bread/Deep/Deeper/Levain") == ("Bread/Deep/Deeper/Levain.md", "# Levain\n")


def test_a_name_without_md_means_the_note_even_next_to_a_folder_of_that_name(vault, root):
    assert vault.resolve("Bread") == root / "Bread.md"


def test_a_folder_is_not_a_note(vault):
    refused(vault, "Bread/Deep", "is a folder, not a note", "list that folder")


def test_a_missing_note_says_how_to_find_the_right_one(vault):
    refused(vault, "Bread/Focacia.md", "No note", '"Bread/Focacia.md"', "list the notes", error=NoteNotFound)


def test_a_missing_folder_is_a_missing_note(vault):
    refused(vault, "Nowhere/Note.md", "No note", error=NoteNotFound)


def test_a_file_that_is_not_markdown_is_not_a_note(vault):
    refused(vault, "Attachments/table.csv", "not a note", "Markdown", ".md")


def test_a_note_too_large_names_its_size(vault, root):
    (root / "Big.md").write_bytes(b"x" * (MAX_NOTE_BYTES + MAX_NOTE_BYTES // 2))
    refused(vault, "Big.md", "1.5 MiB", f"({MAX_NOTE_BYTES * 3 // 2} bytes)", "larger than 1 MiB")


def test_a_note_at_the_size_limit_is_read(vault, root):
    (root / "Edge.md").write_bytes(b"x" * MAX_NOTE_BYTES)
    assert len(vault.read_note("Edge")[1]) == MAX_NOTE_BYTES


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_is_not_opened(vault, root):
    os.mkfifo(root / "Pipe.md")  # opening it would wait forever for a writer
    refused(vault, "Pipe", "not a regular file")


def test_nfc_and_nfd_names_find_the_same_note(vault, root):
    decomposed = unicodedata.normalize("NFD", "Crème fraîche.md")
    (root / decomposed).write_text("# cream\n", encoding="utf-8")
    composed = unicodedata.normalize("NFC", "Crème fraîche")
    assert composed != unicodedata.normalize("NFD", composed)
    relative, text = vault.read_note(composed)
    assert text == "# cream\n"
    assert vault.resolve(composed).name in (decomposed, unicodedata.normalize("NFC", decomposed))
    assert relative in vault.list_notes()  # the path it reports is one the listing has


def test_a_symlink_out_of_the_vault_is_refused(vault, root):
    link(root.parent / "outside" / "secret.md", root / "Bread" / "escape.md")
    refused(vault, "Bread/escape.md", "outside the vault", "symbolic link")
    refused(vault, "Bread/escape", "outside the vault")


def test_a_symlinked_folder_out_of_the_vault_is_refused(vault, root):
    link(root.parent / "outside", root / "Elsewhere", directory=True)
    refused(vault, "Elsewhere/secret.md", "outside the vault")
    with pytest.raises(VaultError, match="outside the vault"):
        vault.list_notes("Elsewhere")


def test_a_symlink_into_a_hidden_folder_is_refused(vault, root):
    link(root / ".obsidian" / "snippet.md", root / "Snippet.md")
    refused(vault, "Snippet.md", "hidden folder")


def test_a_symlink_inside_to_inside_is_followed(vault, root):
    link(root / "Bread" / "Focaccia.md", root / "Flatbread.md")
    assert vault.resolve("Flatbread") == root / "Bread" / "Focaccia.md"
    assert vault.read_note("Flatbread") == ("Flatbread.md", "# Focaccia\n")


def test_a_symlink_loop_is_a_clear_error(vault, root):
    link(root / "Loop.md", root / "Loop.md")
    refused(vault, "Loop.md", "cannot be opened", "symbolic links")


def test_a_dangling_symlink_is_a_missing_note(vault, root):
    link(root / "Gone.md", root / "Dangling.md")
    refused(vault, "Dangling.md", "No note", error=NoteNotFound)


def test_read_note_gives_the_found_path_and_the_text(vault):
    assert vault.read_note("Home") == ("Home.md", "# Home\n")


@pytest.mark.parametrize(
    "data, words",
    [
        ("# Crème\n".encode("latin-1"), ["not UTF-8 text", "byte 4"]),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", ["not UTF-8 text"]),
        (b"\x00\x01\x02binary\x00", ["NUL", "binary"]),  # valid UTF-8, yet no text
        ("# Cream\n".encode("utf-16-le"), ["NUL", "binary"]),  # UTF-16 without its mark
    ],
    ids=["latin-1", "png", "nul-bytes", "utf-16-without-bom"],
)
def test_a_file_that_is_not_text_is_refused_not_served_as_garbage(vault, root, data, words):
    (root / "Odd.md").write_bytes(data)
    with pytest.raises(NotText) as caught:
        vault.read_note("Odd")
    for word in words:
        assert word in str(caught.value)
    assert "Odd.md" in str(caught.value)


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16"], ids=["utf-8", "utf-16"])
@pytest.mark.parametrize("order", ["little", "big"])
def test_a_byte_order_mark_says_how_to_decode_and_is_dropped(vault, root, encoding, order):
    if encoding == "utf-16":
        encoding = "utf-16-le" if order == "little" else "utf-16-be"
        data = ("\ufeff---\ntags: [crème]\n---\n# 🍞\n").encode(encoding)
    else:
        data = "---\ntags: [crème]\n---\n# 🍞\n".encode(encoding)
    (root / "Bom.md").write_bytes(data)
    assert vault.read_note("Bom")[1] == "---\ntags: [crème]\n---\n# 🍞\n"


def test_a_note_deleted_between_the_check_and_the_read(vault, root, monkeypatch):
    check = vault.locate

    def check_then_delete(user_path):
        found = check(user_path)
        found[1].unlink()
        return found

    monkeypatch.setattr(vault, "locate", check_then_delete)
    with pytest.raises(NoteNotFound, match="deleted or moved a moment ago"):
        vault.read_note("Home")


def swap_for_link(path: Path, target: Path) -> None:
    """Put a symbolic link to target where path is, in one rename, as an attacker would."""
    link(target, path.with_name(path.name + ".swap"), directory=target.is_dir())
    if target.is_dir():
        path.rename(path.with_name(path.name + ".old"))  # a folder cannot be renamed over
    os.replace(path.with_name(path.name + ".swap"), path)


@pytest.fixture(params=[True, False], ids=["name-by-name", "same-file"])
def opening(request, monkeypatch):
    """Both ways of opening: O_NOFOLLOW name by name, and the fstat comparison that
    stands in for it where the system has no O_NOFOLLOW (Windows)."""
    if request.param and not vault_module.NAME_BY_NAME:
        pytest.skip("this system cannot open without following links")
    monkeypatch.setattr(vault_module, "NAME_BY_NAME", request.param)
    return request.param


def test_a_note_swapped_for_a_link_out_after_the_check_is_not_read(vault, root, monkeypatch, opening):
    check = vault.locate

    def check_then_swap(user_path):
        found = check(user_path)
        swap_for_link(root / "Bread" / "Focaccia.md", root.parent / "outside" / "secret.md")
        return found

    monkeypatch.setattr(vault, "locate", check_then_swap)
    with pytest.raises(VaultError, match="replaced by a symbolic link") as caught:
        vault.read_note("Bread/Focaccia")
    assert "secret" not in str(caught.value) and str(root) not in str(caught.value)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_note_swapped_for_a_named_pipe_after_the_check_is_refused_at_once(vault, root, monkeypatch, opening):
    check, note = vault.locate, root / "Bread" / "Focaccia.md"

    def check_then_swap(user_path):
        found = check(user_path)
        os.mkfifo(note.with_name("pipe"))
        os.replace(note.with_name("pipe"), note)
        return found

    monkeypatch.setattr(vault, "locate", check_then_swap)
    outcome = []
    reader = threading.Thread(target=lambda: outcome.append(refusal_of(vault, "Bread/Focaccia")), daemon=True)
    reader.start()
    reader.join(timeout=5)
    if reader.is_alive():  # let the stuck open go before failing
        os.close(os.open(note, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("reading a named pipe swapped in for a note waited for a writer")
    assert "not a plain file" in outcome[0]


def refusal_of(vault, user_path) -> str:
    try:
        vault.read_note(user_path)
    except VaultError as error:
        return str(error)
    return "read"


def test_a_folder_swapped_for_a_link_out_after_the_check_is_not_read(vault, root, monkeypatch):
    """outside/ holds a Focaccia.md too: Bread/Focaccia.md would find it through the link."""
    if not vault_module.NAME_BY_NAME:
        pytest.skip("only opening name by name catches a folder swapped above the note")
    check = vault.locate

    def check_then_swap(user_path):
        found = check(user_path)
        swap_for_link(root / "Bread", root.parent / "outside")
        return found

    monkeypatch.setattr(vault, "locate", check_then_swap)
    with pytest.raises(VaultError, match="replaced by a symbolic link"):
        vault.read_note("Bread/Focaccia")


def test_links_that_stay_inside_are_still_read_both_ways(vault, root, monkeypatch, opening):
    link(root / "Bread" / "Focaccia.md", root / "Flatbread.md")
    link(root / "Bread" / "Deep", root / "Shortcut", directory=True)
    assert vault.read_note("Flatbread") == ("Flatbread.md", "# Focaccia\n")
    assert vault.read_note("Shortcut/Deeper/Levain") == ("Shortcut/Deeper/Levain.md", "# Levain\n")


def test_an_unreadable_folder_is_skipped_with_one_log_line(vault, root, monkeypatch, caplog):
    """Root reads any folder whatever its mode, so the refusal is made where the
    listing reads folders: os.scandir, as the vault module calls it."""
    scandir = os.scandir

    def refuse_bread(path):
        if Path(path) == root / "Bread":
            raise PermissionError(13, "Permission denied", str(path))
        return scandir(path)

    monkeypatch.setattr(vault_module.os, "scandir", refuse_bread)
    caplog.set_level(logging.INFO, logger="vault")
    assert vault.list_notes() == ["%2e%2e/x.md", "Bread.md", "Home.md"]
    vault._listing = None  # walk again: the folder is still unreadable, and was already said
    assert vault.list_notes() == ["%2e%2e/x.md", "Bread.md", "Home.md"]
    lines = [record.getMessage() for record in caplog.records if record.name == "vault"]
    assert len(lines) == 1, lines
    assert '"Bread"' in lines[0] and "cannot be read" in lines[0] and "Permission denied" in lines[0]


NOTES_LISTED = [
    "%2e%2e/x.md",
    "Bread.md",
    "Bread/Deep/Deeper/Levain.md",
    "Bread/Focaccia.md",
    "Bread/Rye bread.md",
    "Home.md",
]


def test_list_notes_is_sorted_posix_and_skips_hidden_and_other_files(vault):
    assert vault.list_notes() == NOTES_LISTED


def test_list_notes_in_a_folder(vault):
    assert vault.list_notes("Bread/Deep") == ["Bread/Deep/Deeper/Levain.md"]
    assert vault.list_notes("Bread\\Deep\\") == ["Bread/Deep/Deeper/Levain.md"]
    assert vault.list_notes(".") == vault.list_notes()


@pytest.mark.parametrize(
    "folder, words",
    [
        ("../outside", "'..'"),
        ("/etc", "absolute"),
        ("C:\\", "absolute"),
        (".obsidian", "names starting with '.'"),
        ("", "empty"),
        ("Nowhere", "No folder"),
        ("Home.md", "is not a folder"),
        ("a\0b", "NUL"),
    ],
)
def test_the_folder_is_judged_like_any_path(vault, folder, words):
    with pytest.raises(VaultError) as caught:
        vault.list_notes(folder)
    assert words in str(caught.value)


def test_listing_does_not_follow_symlinked_folders_and_survives_a_cycle(vault, root):
    link(root.parent / "outside", root / "Elsewhere", directory=True)
    link(root / "Bread", root / "Bread" / "Again", directory=True)  # a cycle
    link(root / "Bread" / "Focaccia.md", root / "Flatbread.md")  # a file inside: listed
    link(root.parent / "outside" / "secret.md", root / "Secret.md")  # a file outside: not
    link(root / "Loop.md", root / "Loop.md")  # a file that links to itself: not
    link(root / "Gone.md", root / "Dangling.md")  # a link to nothing: not
    link(root / ".obsidian" / "snippet.md", root / "Snippet.md")  # a link into a hidden folder: not
    assert vault.list_notes() == sorted(NOTES_LISTED + ["Flatbread.md"])


def test_the_sample_vault_lists_every_note_and_reads_each():
    sample = Vault(SAMPLE_VAULT)
    notes = sample.list_notes()
    expected = sorted(p.relative_to(SAMPLE_VAULT).as_posix() for p in SAMPLE_VAULT.rglob("*.md")
                      if ".obsidian" not in p.parts)
    assert notes == expected and len(notes) >= 20
    for note in notes:
        assert sample.read_note(note)[0] == note
        assert sample.read_note(note.removesuffix(".md"))[0] == note


NAMES = [f"Folder/Note {n:02d}.md" for n in range(25)]


def test_pages_cover_the_list_once_and_the_last_has_no_cursor():
    seen, cursor = [], None
    for _ in range(10):
        chunk, cursor = page(NAMES, cursor, 10)
        seen += chunk
        if cursor is None:
            break
    assert seen == NAMES


def test_an_exact_last_page_has_no_cursor():
    assert page(NAMES[:10], None, 10) == (NAMES[:10], None)
    assert page([], None, 10) == ([], None)


@pytest.mark.parametrize(
    "changed", [NAMES[1:], sorted(NAMES + ["Folder/Note 00a.md"])], ids=["one deleted", "one added"]
)
def test_a_cursor_survives_a_note_deleted_or_added_on_an_earlier_page(changed):
    _, cursor = page(NAMES, None, 10)
    assert page(changed, cursor, 10)[0] == NAMES[10:20]  # an offset would skip or repeat a note


@pytest.mark.parametrize("cursor", ["", "garbage!", "bm90IGEgY3Vyc29y", "é", 42, "YWZ0ZXI6"[:-1]])
def test_a_forged_cursor_is_refused(cursor):
    with pytest.raises(InvalidCursor, match="not one this server gave; start again without a cursor"):
        page(NAMES, cursor, 10)


def test_uris_round_trip_every_note_of_the_sample_vault():
    for note in Vault(SAMPLE_VAULT).list_notes():
        uri = path_to_uri(note)
        assert uri.startswith("vault:///") and " " not in uri
        assert uri_to_path(uri) == note


@pytest.mark.parametrize(
    "note, uri",
    [
        ("Bread/Basic country loaf.md", "vault:///Bread/Basic%20country%20loaf.md"),
        ("Bread/Baker's percentages.md", "vault:///Bread/Baker%27s%20percentages.md"),
        ("Ferments/Crème fraîche.md", "vault:///Ferments/Cr%C3%A8me%20fra%C3%AEche.md"),
        ("Ideas/#1? 100% sure.md", "vault:///Ideas/%231%3F%20100%25%20sure.md"),
    ],
)
def test_segments_are_percent_encoded(note, uri):
    assert path_to_uri(note) == uri
    assert uri_to_path(uri) == note


def test_a_uri_may_spell_its_scheme_in_capitals():
    assert uri_to_path("VAULT:///Home.md") == "Home.md"


@pytest.mark.parametrize(
    "uri, words",
    [
        ("file:///etc/passwd", "not a note of this server"),
        ("https://example.com/Home.md", "not a note of this server"),
        ("vault://otherhost/Home.md", "not a note of this server"),
        ("vault:/Home.md", "not a note of this server"),
        ("vault:///Home.md#Heading", "query or fragment"),
        ("vault:///Home.md?raw=1", "query or fragment"),
        ("vault:///%FF.md", "not UTF-8"),
        (None, "not a note of this server"),
    ],
)
def test_foreign_or_broken_uris_are_refused(uri, words):
    with pytest.raises(NoteNotFound, match=words.replace("?", r"\?")):
        uri_to_path(uri)


def test_a_uri_decodes_escapes_but_the_vault_still_judges_the_path(vault):
    for uri in ["vault:///%2e%2e/%2e%2e/outside/secret.md", "vault:///..%2F..%2Foutside%2Fsecret.md",
                "vault:///%2Fetc%2Fpasswd", "vault:///Home%00.md"]:
        with pytest.raises(VaultError):
            vault.resolve(uri_to_path(uri))
    assert vault.resolve(uri_to_path("vault:///Bread%5CFocaccia.md")).name == "Focaccia.md"


ALPHABET = ["a", "Bread", "Home", ".", "..", "/", "\\", ":", "C:", "%2e", "%2f", "\0", " ", "é", "e\u0301",
            ".md", ".obsidian", "outside", "secret.md", "~", "*", "?", "\n", "x" * 120]


def test_random_hostile_paths_end_in_a_note_inside_or_a_vault_error(vault, root):
    rng = random.Random(2024)
    for _ in range(3000):
        user_path = "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(1, 8)))
        try:
            real = vault.resolve(user_path)
        except VaultError as error:
            assert str(error)
            continue
        assert real.is_relative_to(root) and real.suffix == ".md" and real.is_file(), user_path


# The listing is cached while no folder changes; every change shows at once.

def test_the_listing_sees_notes_added_removed_and_renamed_at_once(tmp_path):
    (tmp_path / "Bread").mkdir()
    (tmp_path / "Bread" / "Rye.md").write_text("rye")
    vault = Vault(tmp_path)
    assert vault.list_notes() == ["Bread/Rye.md"]
    (tmp_path / "Bread" / "Spelt.md").write_text("spelt")
    assert vault.list_notes() == ["Bread/Rye.md", "Bread/Spelt.md"]
    (tmp_path / "Bread" / "Rye.md").rename(tmp_path / "Bread" / "Dark rye.md")
    assert vault.list_notes() == ["Bread/Dark rye.md", "Bread/Spelt.md"]
    (tmp_path / "Bread" / "Deep").mkdir()
    (tmp_path / "Bread" / "Deep" / "Note.md").write_text("deep")
    assert vault.list_notes("Bread/Deep") == ["Bread/Deep/Note.md"]
    (tmp_path / "Bread" / "Spelt.md").unlink()
    assert vault.list_notes() == ["Bread/Dark rye.md", "Bread/Deep/Note.md"]


def test_an_unchanged_vault_is_not_walked_again(tmp_path, monkeypatch):
    (tmp_path / "Note.md").write_text("x")
    vault = Vault(tmp_path)
    vault.list_notes()
    vault._walked_at += 10 * 10**9  # as if the walk had been long after the last change
    monkeypatch.setattr(vault, "walk", lambda: pytest.fail("walked although nothing changed"))
    assert vault.list_notes() == ["Note.md"]
