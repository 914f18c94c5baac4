"""list_notes takes a `tag` and lists only the notes with that tag, or one nested under it."""
import unicodedata

from probe import expect, ok, shown

LACTO = ["Ferments/Kimchi.md", "Ferments/Lacto-fermented hot sauce.md", "Journal/2026-03-28 Ferment log.md"]
FERMENT = [
    "Ferments/Crème fraîche.md", "Ferments/Kimchi.md", "Ferments/Koji.md", "Ferments/Kombucha.md",
    "Ferments/Lacto-fermented hot sauce.md", "Ferments/Miso.md", "Ferments/Troubleshooting.md",
    "Journal/2026-03-28 Ferment log.md", "Reading/The Noma Guide to Fermentation (notes).md",
]


def listed(server, **arguments) -> dict:
    answer = server.call("tools/call", {"name": "list_notes", "arguments": arguments})
    result = answer.get("result", {})
    expect(result.get("isError") is False,
           f"list_notes {shown(arguments)} failed: {shown(result or answer.get('error'))}")
    return result.get("structuredContent", {})


def notes(server, **arguments) -> list:
    """The paths list_notes gives, in NFC (a file system may keep "è" as e and an accent)."""
    found = listed(server, limit=200, **arguments).get("notes")
    return [unicodedata.normalize("NFC", name) for name in found] if isinstance(found, list) else found


def check(server):
    server.handshake()
    tools = {tool.get("name"): tool for tool in server.result("tools/list")["tools"]}
    properties = tools.get("list_notes", {}).get("inputSchema", {}).get("properties", {})
    expect(properties.get("tag", {}).get("type") == "string",
           f"list_notes's inputSchema should declare 'tag', a string (in LIST_NOTES, tools.py); it declares "
           f"{shown(sorted(properties))}")
    ok("list_notes declares a tag argument")

    found = notes(server, tag="ferment/lacto")
    expect(found == LACTO,
           f"list_notes with tag \"ferment/lacto\" should list {shown(LACTO)}: the notes whose tags, in their "
           f"properties or their text, include it (parse_note gives them). It listed {shown(found)}")
    ok("a tag lists the notes that have it, in their properties or their text")
    found = notes(server, tag="ferment")
    expect(found == FERMENT,
           f"\"ferment\" also finds the notes tagged \"ferment/lacto\" or \"ferment/mold\", as Obsidian's tag "
           f"search does (Note.tag_keys gives them). Ferments/Sauerkraut.md is not among them: its "
           f"properties are malformed, so its tags cannot be read. Expected {shown(FERMENT)}, got {shown(found)}")
    for spelling in ("#Ferment", "FERMENT"):
        again = notes(server, tag=spelling)
        expect(again == FERMENT, f"tags compare without case, and a leading # is dropped: tag {spelling!r} "
                                 f"should list what \"ferment\" lists; it listed {shown(again)}")
    found = notes(server, tag="ferm")
    expect(found == [], f"\"ferm\" is no tag of the sample vault, only the start of one; it listed {shown(found)}")
    found = notes(server, tag="発酵")
    expect(found == ["Ferments/Koji.md"], f"tag \"発酵\" should list Ferments/Koji.md; it listed {shown(found)}")
    ok("a tag finds the tags nested under it, without regard to case or a leading #; a prefix is not a tag")

    found = notes(server, tag="bread", folder="Kitchen")
    expect(found == ["Kitchen/Dutch oven (cast iron).md"],
           f"tag and folder together: tag \"bread\" in folder \"Kitchen\" is only the Dutch oven; it listed {shown(found)}")
    pages, cursor = [], None
    for _ in range(10):
        page = listed(server, tag="sourdough", limit=3, **({"cursor": cursor} if cursor else {}))
        pages.append(page.get("notes"))
        cursor = page.get("nextCursor")
        if not cursor:
            break
    every = notes(server, tag="sourdough")
    expect([len(p) for p in pages] == [3, 3, 3] and sum(pages, []) == every,
           f"9 notes are tagged sourdough: three pages of 3 should list them all, each once; filter before "
           f"paging. The pages were {shown(pages)}")
    ok("tag works with folder, and a page at a time")

    everything = notes(server)
    expect(len(everything) == 32, f"without a tag list_notes lists all 32 notes as before; it listed {len(everything)}")
    ok("without a tag, list_notes lists every note as before")
