"""notifications/resources/updated says the note is indexed: "indexed": true in its params."""
import json

from probe import expect, ok, run_copy

# A Hub with one listener that subscribed to one note, told that the note changed:
# the messages it would have sent, printed as JSON.
TELL = """
import json
from subscriptions import Hub, Listener
sent = []
hub = Hub()
hub.add(Listener(sent.append, {"vault:///Bread/Focaccia.md"}, list_changed=True))
hub.note_changed("Bread/Focaccia.md")
hub.note_changed("Bread/Rye bread.md")
hub.list_changed()
print(json.dumps(sent))
"""


def check(server):
    done = run_copy(server.folder, ["-c", TELL])
    expect(done.returncode == 0, f"the copy's subscriptions.py failed to run: {done.stderr.strip()[-600:]}")
    sent = json.loads(done.stdout)
    updated = [m for m in sent if m.get("method") == "notifications/resources/updated"]
    expect(len(updated) == 1, f"one resources/updated for the subscribed note was expected; got {updated}")
    params = updated[0].get("params", {})
    expect(params.get("uri") == "vault:///Bread/Focaccia.md", f"the notification names {params.get('uri')!r}")
    expect(params.get("indexed") is True,
           f"its params are {params}: add \"indexed\": True where Hub.note_changed (subscriptions.py) builds them")
    ok("resources/updated carries the note's URI and indexed: true")
    listed = [m for m in sent if m.get("method") == "notifications/resources/list_changed"]
    expect(len(listed) == 1 and listed[0].get("params") == {},
           f"list_changed should be as before, with empty params; got {listed}")
    ok("list_changed is unchanged")
