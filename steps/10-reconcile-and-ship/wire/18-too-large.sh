#!/usr/bin/env bash
# A body over the 4 MiB limit is refused from its Content-Length, before it is read:
# 413. (curl waits for the server's go-ahead before sending a large body, so it
# never has to send the 5 MB at all.)
. "$(dirname "$0")/lib.sh"

post_large 5000000 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25'
