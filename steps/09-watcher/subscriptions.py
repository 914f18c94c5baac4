"""Who wants to hear of changes to the vault, and telling them.

Until step 9 the server spoke only when asked. Now the vault changes under it,
and a client may want to know: that a note it subscribed to changed
(notifications/resources/updated), or that notes came or went
(notifications/resources/list_changed). The watcher calls Hub.note_changed and
Hub.list_changed; the Hub passes each change to the listeners that asked for it.

A Listener is one channel to one client: a handshake-era session's GET stream
or its stdio, or one 2026-07-28 subscriptions/listen stream. It knows nothing of
HTTP or stdio: it calls the `send` function its transport gave it. Streams and
pump keep the long-lived streams that HTTP holds open, and their budget; the
stream they write to is the transport's. This module knows nothing of the watcher
either; the watcher's thread and the worker's call in, the transports' threads add
and remove listeners, hence the lock.
"""
import logging
import queue
import threading
import time

from vault import path_to_uri

log = logging.getLogger("subscriptions")

META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"  # 2026-07-28
KEEP_ALIVE_SECONDS = 15.0  # a comment on a quiet stream, so that nobody takes it for dead
STREAM_TICK = 0.5  # how often an open stream looks whether its client has left


# region listener
class Listener:
    """One client's channel for notifications, and what it asked to hear.

    uris is the set of resource URIs it subscribed to; a handshake-era session
    shares its own set, so resources/subscribe takes effect on a stream already
    open. subscription_id is the id of a 2026-07-28 subscriptions/listen request:
    every message on that stream carries it in _meta."""

    def __init__(self, send, uris: set[str], list_changed: bool, subscription_id=None):
        self.send, self.uris, self.list_changed = send, uris, list_changed
        self.subscription_id = subscription_id
        self.on_close = None  # the transport's: ends its stream when the server stops

    def deliver(self, method: str, params: dict) -> None:
        if self.subscription_id is not None:
            params = {"_meta": {META_SUBSCRIPTION_ID: self.subscription_id}, **params}
        self.send({"jsonrpc": "2.0", "method": method, "params": params})
# endregion listener


class Hub:
    def __init__(self):
        self._listeners: list[Listener] = []
        self._lock = threading.Lock()

    def add(self, listener: Listener) -> None:
        with self._lock:
            self._listeners.append(listener)

    def remove(self, listener: Listener) -> None:
        with self._lock:
            if listener in self._listeners:
                self._listeners.remove(listener)

    # region hub
    def note_changed(self, path: str) -> None:
        """From the watcher's worker, once the note's new text is in the index."""
        uri = path_to_uri(path)
        for listener in self._current():
            if uri in listener.uris:
                self._tell(listener, "notifications/resources/updated", {"uri": uri})

    def list_changed(self) -> None:
        """From the watcher's poller, when notes appeared, vanished or were renamed."""
        for listener in self._current():
            if listener.list_changed:
                self._tell(listener, "notifications/resources/list_changed", {})
    # endregion hub

    def close(self) -> None:
        """The server stops: every stream is told to end."""
        for listener in self._current():
            self.remove(listener)
            if listener.on_close:
                listener.on_close()

    def _current(self) -> list[Listener]:
        with self._lock:  # a copy: a listener may go while we send to the others
            return list(self._listeners)

    def _tell(self, listener: Listener, method: str, params: dict) -> None:
        try:
            listener.deliver(method, params)
        except (OSError, ValueError):  # the client went away; its transport removes it
            log.info("a listener has gone; %s not delivered", method)


class Streams:
    """The long-lived streams open now: a session's GET stream (one at most, since
    a second would only get the same messages twice) and subscriptions/listen
    answers, which need no session.

    A stream holds a thread for as long as its client likes, so streams draw on a
    budget of their own, limit in all, and never on the slots that answer
    requests: clients that only listen cannot keep out one that asks."""

    def __init__(self, hub: Hub, limit: int):
        self.hub, self._limit, self._open = hub, limit, 0
        self._outboxes: dict[str, queue.Queue] = {}  # session id -> the outbox of its GET stream
        self._lock = threading.Condition()  # a Condition: wait_until_ended sleeps on it

    def take(self) -> bool:
        """A place in the budget for one more stream; False if every place is taken."""
        with self._lock:
            if self._open >= self._limit:
                return False
            self._open += 1
            return True

    def give_back(self) -> None:
        with self._lock:
            self._open -= 1
            self._lock.notify_all()

    def wait_until_ended(self, seconds: float) -> bool:
        """Until every stream has given its place back (the server stops); False if
        some are still open after seconds."""
        with self._lock:
            return self._lock.wait_for(lambda: self._open == 0, seconds)

    def follow_session(self, session_id: str, uris: set[str], stream, still_wanted) -> bool:
        """A session's GET stream, until it ends; False, with nothing sent, if the
        session has one open already."""
        with self._lock:
            if session_id in self._outboxes:
                return False
            outbox = self._outboxes[session_id] = queue.Queue()
        listener = Listener(outbox.put, uris, list_changed=True)
        listener.on_close = lambda: outbox.put(None)
        self.hub.add(listener)
        try:
            stream.open()  # the client sees 200 now, not at the first change
            pump(outbox, stream, still_wanted)
        finally:
            self.hub.remove(listener)
            self.close_stream(session_id)
        return True

    def close_stream(self, session_id: str) -> None:
        """End the session's GET stream, if it has one: None in the outbox ends it."""
        with self._lock:
            outbox = self._outboxes.pop(session_id, None)
        if outbox is not None:
            outbox.put(None)


# region pump
def pump(outbox: queue.Queue, stream, still_wanted) -> None:
    """Send each message that arrives in outbox on the transport's stream until
    None does, the client leaves, or still_wanted() says the stream has no reason
    left. A quiet stream gets a comment line now and then, so that proxies keep it open."""
    quiet_since = time.monotonic()
    while True:
        try:
            message = outbox.get(timeout=STREAM_TICK)
        except queue.Empty:
            if stream.client_gone() or not still_wanted():
                return
            if time.monotonic() - quiet_since >= KEEP_ALIVE_SECONDS:
                stream.keep_alive()
                quiet_since = time.monotonic()
            continue
        if message is None:
            return
        stream.send(message)
        quiet_since = time.monotonic()
# endregion pump
