#!/usr/bin/env bash
# Sessions: a request without Mcp-Session-Id is a bad request (400); one with an id the
# server does not know, or no longer knows, is 404, which tells the client to start over.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 15, "method": "tools/list"}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' 'Mcp-Session-Id: no-such-session' 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 16, "method": "tools/list"}
JSON
