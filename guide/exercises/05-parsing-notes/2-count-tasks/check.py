"""get_note counts a note's open and done tasks, and none inside code or comments."""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from probe import CLIENT_INFO, HANDSHAKE_VERSION, StdioRun, expect, ok, shown

# A note of the check's own, in a vault of its own in a temporary folder: three open
# tasks, three done, and six that code, comments or indentation hide.
TASKS = """# Tasks

- [ ] open, the usual form
- [x] done
* [X] done, another bullet and a capital X
1. [ ] open, in a numbered list
> - [ ] open, in a callout
- a plain item, no task
    - [x] done, nested under an item

Inline code is no task: `- [ ] this`

```
- [ ] in a code fence
- [x] in a code fence
```

%%
- [ ] in a comment
%%
<!-- - [x] in an HTML comment -->

    - [ ] indented code
    - [x] indented code
"""


def tasks_over_stdio(server, note: str) -> dict:
    """get_note of `note` from the copy run over stdio on the check's own vault."""
    with tempfile.TemporaryDirectory() as vault:
        (Path(vault) / "Tasks.md").write_text(note, encoding="utf-8")
        messages = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": HANDSHAKE_VERSION, "capabilities": {}, "clientInfo": CLIENT_INFO}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "get_note", "arguments": {"path": "Tasks"}}},
        ]
        done = subprocess.run(
            [sys.executable, str(server.folder / "server.py"), "--stdio", "--vault", vault],
            input="".join(json.dumps(message) + "\n" for message in messages),
            capture_output=True, text=True, timeout=20,
        )
    answer = StdioRun(done.stdout.splitlines(), done.stderr).messages().get(2, {})
    result = answer.get("result", {})
    expect(result.get("isError") is False,
           f"over stdio, get_note \"Tasks\" failed: {shown(result or answer)}; the server said {done.stderr[-500:]!r}")
    return result.get("structuredContent", {})


def tasks_of(server, path: str) -> dict:
    answer = server.call("tools/call", {"name": "get_note", "arguments": {"path": path}})
    result = answer.get("result", {})
    expect(result.get("isError") is False, f"get_note {path!r} failed: {shown(result or answer)}")
    data = result.get("structuredContent", {})
    expect("tasks" in data,
           f"get_note {path!r} answers no 'tasks': count them in markdown.py (on the masked text), keep the "
           f"counts on the Note in parse_note (notes.py), and return them from get_note (tools.py). "
           f"It answers {shown(sorted(data))}")
    return data["tasks"]


def check(server):
    server.handshake()
    tools = {tool.get("name"): tool for tool in server.result("tools/list")["tools"]}
    output = tools.get("get_note", {}).get("outputSchema", {}).get("properties", {})
    expect(output.get("tasks", {}).get("type") == "object",
           f"get_note's outputSchema should declare 'tasks', an object (in GET_NOTE, tools.py); it declares "
           f"{shown(sorted(output))}")
    ok("get_note's output schema declares tasks")

    plan = tasks_of(server, "Journal/2026-W14 Weekly plan")
    expect(plan == {"open": 3, "done": 1},
           f"Journal/2026-W14 Weekly plan has three open tasks (- [ ]) and one done (- [x]); get_note says {shown(plan)}")
    focaccia = tasks_of(server, "Bread/Focaccia")
    expect(focaccia == {"open": 0, "done": 0},
           f"Bread/Focaccia has lists but no tasks: {{\"open\": 0, \"done\": 0}}; get_note says {shown(focaccia)}")
    ok("the weekly plan has 3 open tasks and 1 done; a list without checkboxes has none")

    counted = tasks_over_stdio(server, TASKS).get("tasks")
    expect(counted == {"open": 3, "done": 3},
           f"a note with 3 open and 3 done tasks, and 6 more inside code, comments and indented code, gives "
           f"{shown(counted)}. Count on the text mask() returns, where code and comments are blank, and allow "
           f"*, + and 1. as well as -, a capital X, a callout's >, and an item nested under another")
    ok("tasks in every kind of list count, and none inside code or comments (over stdio, on a vault of the check's own)")
