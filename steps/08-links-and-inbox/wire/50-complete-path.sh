#!/usr/bin/env bash
# Completion of a note's path, as a client asks while the user types in a box for the
# vault:///{+path} template (the capability "completions" says it may): the paths that
# start with what is typed first, then the notes whose name does, then those that hold
# its letters in order, at most 100, with total and hasMore. Anything else this server
# cannot complete is refused with -32602.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 91, "method": "completion/complete", "params": {"ref": {"type": "ref/resource", "uri": "vault:///{+path}"}, "argument": {"name": "path", "value": "bread/b"}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 92, "method": "completion/complete", "params": {"ref": {"type": "ref/resource", "uri": "vault:///{+path}"}, "argument": {"name": "path", "value": "trb"}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 93, "method": "completion/complete", "params": {"ref": {"type": "ref/prompt", "name": "summarize"}, "argument": {"name": "topic", "value": "br"}}}
JSON
