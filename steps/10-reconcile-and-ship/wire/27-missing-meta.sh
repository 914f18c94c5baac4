#!/usr/bin/env bash
# A 2026-07-28 request without its _meta: the server cannot know the client's version
# or capabilities, so it refuses with 400 and -32602.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' 'MCP-Protocol-Version: 2026-07-28' 'Mcp-Method: tools/list' <<'JSON'
{"jsonrpc": "2.0", "id": 38, "method": "tools/list"}
JSON
