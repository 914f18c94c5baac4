#!/usr/bin/env bash
# GET opens the stream on which the server speaks unasked, now that it has something to
# say. It belongs to a session: without one it is 400, with one that never existed 404.
# The stream itself stays open, so it is not recorded here (41-get-stream.sh shows it).
. "$(dirname "$0")/lib.sh"

send GET 'Accept: text/event-stream'
send GET 'Accept: text/event-stream' 'Mcp-Session-Id: no-such-session'
