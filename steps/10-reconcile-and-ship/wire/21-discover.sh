#!/usr/bin/env bash
# The 2026-07-28 revision has no handshake. A client asks what the server speaks with
# server/discover; the request carries its own version and capabilities in _meta, and
# the same version and the method again in headers. No session id anywhere.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' 'MCP-Protocol-Version: 2026-07-28' 'Mcp-Method: server/discover' <<'JSON'
{"jsonrpc": "2.0", "id": 31, "method": "server/discover", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/clientInfo": {"name": "curl", "version": "8"}}}}
JSON
