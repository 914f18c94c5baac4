#!/usr/bin/env bash
# Search: a question in plain words, answered with the best section of each note that
# fits, best first. Hybrid (the default) fuses a ranking by meaning with one by words;
# then the same question by words alone; then a search narrowed to one tag.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 61, "method": "tools/call", "params": {"name": "search_vault", "arguments": {"query": "why did my loaf come out dense and gummy", "limit": 3}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 62, "method": "tools/call", "params": {"name": "search_vault", "arguments": {"query": "why did my loaf come out dense and gummy", "limit": 3, "mode": "keyword"}}}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 63, "method": "tools/call", "params": {"name": "search_vault", "arguments": {"query": "how much salt", "limit": 3, "tag": "ferment"}}}
JSON
