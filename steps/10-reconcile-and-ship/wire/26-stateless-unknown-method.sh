#!/usr/bin/env bash
# An unknown method is HTTP 404 in this era, with -32601 in the body. ping is one: the
# 2026-07-28 revision removed it along with the handshake.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' 'MCP-Protocol-Version: 2026-07-28' 'Mcp-Method: ping' <<'JSON'
{"jsonrpc": "2.0", "id": 37, "method": "ping", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/clientInfo": {"name": "curl", "version": "8"}}}}
JSON
