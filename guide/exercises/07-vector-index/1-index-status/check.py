"""A tool `index_status`: how many notes and chunks the index holds, which embedder made it, and where it lives."""
import time
from pathlib import Path

from probe import expect, ok, shown

FIELDS = ("notes", "chunks", "embedder", "folder")


def structured(server, name: str, arguments: dict) -> dict:
    answer = server.call("tools/call", {"name": name, "arguments": arguments})
    result = answer.get("result", {})
    expect(result.get("isError") is False, f"{name} {shown(arguments)} failed: {shown(result or answer.get('error'))}")
    return result.get("structuredContent", {})


def wait_for_the_first_build(server, seconds: float = 60) -> None:
    """Ask as a model would until search answers from the whole index: during the first
    build it answers from the notes done so far, and says how many (`indexed`)."""
    deadline = time.monotonic() + seconds
    while "indexed" in structured(server, "search_vault", {"query": "salt"}) and time.monotonic() < deadline:
        time.sleep(0.2)


def check(server):
    server.handshake()
    tools = {tool.get("name"): tool for tool in server.result("tools/list")["tools"]}
    expect("index_status" in tools,
           f"tools/list offers no tool named 'index_status': declare it in tools.py (a Tool, like REINDEX) and "
           f"add it to TOOLS. It offers {shown(sorted(tools))}")
    declared = tools["index_status"].get("outputSchema", {}).get("properties", {})
    expect(all(field in declared for field in FIELDS),
           f"index_status's outputSchema should name {', '.join(FIELDS)}; it names {shown(sorted(declared))}")
    ok("tools/list offers index_status, with notes, chunks, embedder and folder in its output schema")

    wait_for_the_first_build(server)
    status = structured(server, "index_status", {})
    notes = structured(server, "list_notes", {"limit": 200}).get("notes", [])
    expect(status.get("notes") == len(notes),
           f"the index holds every note of the vault, {len(notes)} of them (list_notes lists them); index_status "
           f"says notes: {shown(status.get('notes'))}. Count them in the index (VaultIndex.chunk_index.note_paths())")
    expect(isinstance(status.get("chunks"), int) and status["chunks"] >= len(notes),
           f"chunks is the number of sections in the index (len(index)), at least one per note; index_status "
           f"says {shown(status.get('chunks'))}")
    rebuilt = structured(server, "reindex", {})
    expect((status.get("notes"), status.get("chunks")) == (rebuilt.get("notes"), rebuilt.get("chunks")),
           f"reindex counted {shown(rebuilt)}, index_status {shown({k: status.get(k) for k in FIELDS[:2]})}: "
           f"the two should agree")
    ok(f"index_status counts {status['notes']} notes and {status['chunks']} chunks, as reindex does")

    expect(status.get("embedder") == "hash-512",
           f"embedder is the name the index was made by, which the checks run with the offline embedder: "
           f"'hash-512' (ChunkIndex.embedder_name). index_status says {shown(status.get('embedder'))}")
    ok("embedder names what made the index: hash-512")

    folder = status.get("folder")
    expect(isinstance(folder, str) and Path(folder).is_absolute() and (Path(folder) / "index.json").is_file(),
           f"folder is where the index lives, an absolute path that holds index.json (VaultIndex.directory); "
           f"index_status says {shown(folder)}")
    ok(f"folder is where the index lives: {folder}")
