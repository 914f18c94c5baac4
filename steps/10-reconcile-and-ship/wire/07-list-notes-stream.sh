#!/usr/bin/env bash
# A call with a progress token: the client is ready for progress
# notifications, so the answer is an SSE stream, which can carry them before the
# response. Listing notes has no progress to report: the stream holds the response.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "list_notes", "arguments": {"folder": "Inbox"}, "_meta": {"progressToken": "list-1"}}}
JSON
