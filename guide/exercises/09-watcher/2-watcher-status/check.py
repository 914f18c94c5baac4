"""A tool `watcher_status`: how many jobs wait, and when the watcher last scanned the vault."""
import shutil
import tempfile
import time
from datetime import datetime
from pathlib import Path

from launch import running_server
from manifest import SAMPLE_VAULT
from probe import Server, expect, ok, shown

NOTE = "Bread/Watched by the check.md"


def status(server) -> dict:
    answer = server.call("tools/call", {"name": "watcher_status", "arguments": {}})
    result = answer.get("result", {})
    expect(result.get("isError") is False, f"watcher_status failed: {shown(result or answer.get('error'))}")
    data = result.get("structuredContent", {})
    expect(isinstance(data.get("pending"), int) and data["pending"] >= 0,
           f"'pending' should be the number of jobs waiting or running (Watcher.pending()); the tool answered "
           f"{shown(data)}")
    return data


def scanned_at(data: dict) -> datetime:
    try:
        when = datetime.fromisoformat(data.get("lastScan"))
    except (TypeError, ValueError):
        when = None
    expect(when is not None and when.tzinfo is not None,
           f"'lastScan' should be the time of the watcher's last scan as ISO 8601 with its time zone, e.g. "
           f"\"2026-05-02T09:30:12+00:00\"; the tool answered {shown(data)}")
    return when


def check(server):
    server.handshake()
    tools = {tool.get("name"): tool for tool in server.result("tools/list")["tools"]}
    expect("watcher_status" in tools,
           "tools/list offers no tool named 'watcher_status': declare a Tool beside REINDEX and add it to TOOLS "
           "in tools.py")
    declared = tools["watcher_status"]
    expect(declared.get("annotations", {}).get("readOnlyHint") is True,
           f"watcher_status only reads: its annotations should say readOnlyHint: true; they say "
           f"{shown(declared.get('annotations'))}")
    expect(not declared.get("inputSchema", {}).get("properties"),
           f"watcher_status takes no arguments; its inputSchema declares {shown(declared.get('inputSchema'))}")
    output = declared.get("outputSchema", {}).get("properties", {})
    expect(output.get("pending", {}).get("type") == "integer" and "lastScan" in output,
           f"watcher_status' outputSchema should declare 'pending' (an integer) and 'lastScan'; it declares "
           f"{shown(declared.get('outputSchema'))}")
    ok("tools/list offers watcher_status, read-only, no arguments, pending and lastScan in its output schema")

    first = scanned_at(status(server))
    time.sleep(1.2)  # the check's server scans every tenth of a second
    later = scanned_at(status(server))
    expect(later > first, f"lastScan should move on with every scan; 1.2 s apart it said {first.isoformat()} "
                          f"and then {later.isoformat()}. Note the time in Watcher._poll (watcher.py)")
    ok("lastScan is the time of the last scan, and moves on")

    # Writing is done on a copy of the sample vault of the check's own, never on the sample vault.
    with tempfile.TemporaryDirectory() as folder:
        vault = Path(folder) / "vault"
        shutil.copytree(SAMPLE_VAULT, vault)
        with running_server(server.folder / "server.py", "--vault", str(vault)) as (url, _log):
            check_jobs(Server(url, server.folder), vault)


def check_jobs(server, vault: Path) -> None:
    server.handshake()
    seen = []
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not any(seen):  # a note saved again and again is never quiet
        (vault / NOTE).write_text(f"# Watched\n\nSaved {len(seen)} times.\n", encoding="utf-8")
        seen.append(status(server)["pending"])
        time.sleep(0.05)
    expect(any(seen), f"while {NOTE} was being saved again and again, watcher_status said pending: "
                      f"{shown(seen[-10:])}; the job that waits for the note to be quiet should count")
    ok(f"pending counts the job of a note being written ({max(seen)})")

    deadline = time.monotonic() + 10
    while (pending := status(server)["pending"]) and time.monotonic() < deadline:
        time.sleep(0.1)
    expect(pending == 0, f"10 s after the last save, watcher_status still says pending: {pending}")
    ok("pending is back to 0 once the note is indexed")
