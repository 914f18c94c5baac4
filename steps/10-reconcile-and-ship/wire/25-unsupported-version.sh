#!/usr/bin/env bash
# A version the server does not speak: 400 with -32022, and data lists the versions
# that would work, so the client can pick one (or fall back to the handshake).
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' 'MCP-Protocol-Version: 2027-01-01' 'Mcp-Method: tools/list' <<'JSON'
{"jsonrpc": "2.0", "id": 36, "method": "tools/list", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2027-01-01", "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/clientInfo": {"name": "curl", "version": "8"}}}}
JSON
