#!/usr/bin/env bash
# The same call with a progress token: the client is ready for progress notifications,
# so the answer is an SSE stream, which can carry them before the response. echo has
# no progress to report, so the stream holds just the response.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "streamed"}, "_meta": {"progressToken": "echo-1"}}}
JSON
