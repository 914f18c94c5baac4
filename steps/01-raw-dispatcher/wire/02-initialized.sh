#!/usr/bin/env bash
# The client confirms the handshake with a notification: a message with no "id".
# Nothing answers a notification, so the server replies 202 Accepted with no body.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' <<'JSON'
{"jsonrpc": "2.0", "method": "notifications/initialized"}
JSON
