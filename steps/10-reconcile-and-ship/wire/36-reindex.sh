#!/usr/bin/env bash
# Rebuilding the index takes a while on a large vault, so a client that sends a progress
# token hears how far it has got: the answer is an SSE stream of notifications/progress,
# then the result. Searches meanwhile use the old index.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 64, "method": "tools/call", "params": {"name": "reindex", "arguments": {}, "_meta": {"progressToken": "reindex-1"}}}
JSON
