#!/usr/bin/env bash
# Straight to work: every result says resultType, names the server in _meta, and a list
# says how long a client may cache it (ttlMs) and for whom (cacheScope).
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' 'MCP-Protocol-Version: 2026-07-28' 'Mcp-Method: tools/list' <<'JSON'
{"jsonrpc": "2.0", "id": 32, "method": "tools/list", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/clientInfo": {"name": "curl", "version": "8"}}}}
JSON
