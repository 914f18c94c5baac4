#!/usr/bin/env bash
# Guarding the door. A web page in your browser can send requests to 127.0.0.1; the
# browser names the page in Origin, and a DNS-rebinding attack shows in Host. A foreign
# Origin or Host is refused with 403 before anything else is read.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' 'Origin: https://evil.example' <<'JSON'
{"jsonrpc": "2.0", "id": 20, "method": "ping"}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' 'Host: evil.example' <<'JSON'
{"jsonrpc": "2.0", "id": 21, "method": "ping"}
JSON
