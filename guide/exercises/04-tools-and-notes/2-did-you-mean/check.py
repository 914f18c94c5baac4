"""A note that is not found names the notes the model may have meant."""
from probe import expect, ok, shown, text_of


def refusal(server, path: str) -> str:
    """get_note's answer for a path that must be refused: the text of its tool error."""
    answer = server.call("tools/call", {"name": "get_note", "arguments": {"path": path}})
    expect("result" in answer and answer["result"].get("isError") is True,
           f"get_note {path!r} should be a tool error (isError: true); it answered "
           f"{shown(answer.get('result') or answer.get('error'))}")
    return text_of(answer["result"], f"get_note {path!r}")


def check(server):
    server.handshake()
    listed = server.result("tools/call", {"name": "list_notes", "arguments": {"limit": 200}})
    notes = listed.get("structuredContent", {}).get("notes", [])
    expect("Bread/Focaccia.md" in notes, f"list_notes should still list Bread/Focaccia.md; it gave {shown(notes)}")
    creme = next((note for note in notes if note.startswith("Ferments/Cr")), "Ferments/Crème fraîche.md")

    for sent, meant in (("Bread/Focacia", "Bread/Focaccia.md"), ("Focaccia", "Bread/Focaccia.md"),
                        ("Ferments/Creme fraiche", creme)):
        text = refusal(server, sent)
        expect(meant in text,
               f"get_note {sent!r} finds no note, and the model is left to guess: name the close match {meant!r} "
               f"in the message (in Vault.find_note, vault.py; difflib.get_close_matches compares names). "
               f"It says {text!r}")
    ok("a misspelt path, a name without its folder and a name without its accents each name the note meant")

    text = refusal(server, "Attachments/hydration-table")
    expect("hydration-table.csv" not in text,
           f"only notes may be suggested, as list_notes gives them; the message offers a file that is no note: {text!r}")
    text = refusal(server, "../Home")
    expect("Home.md" not in text,
           f"a path with '..' is refused before anything is looked up, and nothing is suggested for it: {text!r}")
    ok("a file that is not a note is never suggested, and a hostile path gets no suggestion")

    answer = server.call("resources/read", {"uri": "vault:///Bread/Focacia.md"})
    expect(answer.get("error", {}).get("code") == -32002,
           f"resources/read of a missing note is still 'resource not found', -32002, in 2025-11-25; it answered {shown(answer)}")
    answer = server.call("tools/call", {"name": "get_note", "arguments": {"path": "Bread/Focaccia"}})
    expect(answer.get("result", {}).get("isError") is False,
           f"get_note \"Bread/Focaccia\" should still read the note; it answered {shown(answer)}")
    ok("a missing resource is still -32002, and a note that exists is still read")
