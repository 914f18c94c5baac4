"""What one client may hold of the server, the watchdog that enforces time limits,
and the slots that connections share.

A local server still meets clients that misbehave: a bug that opens connections in
a loop, a process that sends one byte every few seconds, a body built to be costly
to parse. Each limit below bounds one resource, so that no client can take them all.
"""
import logging
import socket
import threading
import time
from dataclasses import dataclass

log = logging.getLogger("limits")


@dataclass(frozen=True)
class Limits:
    max_connections: int = 256  # served at once; one more takes the slot of the longest waiting, or gets 503
    request_seconds: float = 10.0  # to send a whole request, or to stay idle between two
    max_body: int = 4 * 1024 * 1024  # bytes; a bigger body is refused unread (413)
    large_body: int = 16 * 1024  # bodies above this take turns to be parsed and served...
    large_at_once: int = 2  # ...this many at a time: parsed JSON can take 17 times its size
    max_streams: int = 64  # GET and listen streams open at once; they hold no connection slot
    max_sessions: int = 10_000  # the least recently used session makes way for a new one
    session_idle_seconds: float = 30 * 60  # an idle session expires; its client gets 404


class Watchdog:
    """One thread that watches the clock for every connection.

    A socket timeout restarts with every byte, so a client sending one byte every
    few seconds would never time out. Instead each request gets a deadline when
    the server starts reading it; if the request is not in by then, the watchdog
    shuts the socket for reading, and the handler's next read ends at once.
    It also closes refused connections a moment after their answer was sent, so
    the client has time to read the answer before the socket goes; and since it
    knows who is still waiting for a request, it picks the one to make way."""

    def __init__(self, tick: float):
        self._due: dict[socket.socket, tuple[float, str]] = {}  # socket -> (when, "stop reading" or "close")
        self._lock = threading.Lock()
        self._tick = tick
        threading.Thread(target=self._run, name="watchdog", daemon=True).start()

    def arm(self, sock: socket.socket, seconds: float) -> None:
        with self._lock:
            self._due[sock] = (time.monotonic() + seconds, "stop reading")

    def disarm(self, sock: socket.socket) -> bool:
        """Stop watching; False if the deadline had already passed."""
        with self._lock:
            return self._due.pop(sock, None) is not None

    def make_way(self) -> bool:
        """Cut the connection that has waited longest for its request, so that a new
        one can have its slot; False if every connection is busy being answered."""
        with self._lock:
            waiting = [(when, sock) for sock, (when, how) in self._due.items() if how == "stop reading"]
            if not waiting:
                return False
            _, sock = min(waiting, key=lambda pair: pair[0])
            del self._due[sock]
        shut(sock, "cut")
        return True

    def close_later(self, sock: socket.socket, seconds: float) -> None:
        with self._lock:
            self._due[sock] = (time.monotonic() + seconds, "close")

    def _run(self) -> None:
        while True:
            time.sleep(self._tick)
            now = time.monotonic()
            with self._lock:
                late = [(sock, how) for sock, (when, how) in self._due.items() if when <= now]
                for sock, _ in late:
                    del self._due[sock]
            for sock, how in late:
                shut(sock, how)


class Slots:
    """The connections served at once. When every slot is taken, a new connection
    gets the slot of the one that has waited longest for its request (the watchdog
    knows who waits): slow and idle clients never keep out one with something to
    say. Only a connection busy being answered keeps its slot."""

    def __init__(self, limit: int, watchdog: Watchdog):
        self._free = threading.BoundedSemaphore(limit)
        self._watchdog = watchdog
        self._lent: set[socket.socket] = set()  # connections whose stream gave their slot back
        self._lock = threading.Lock()

    def take(self) -> bool:
        if self._free.acquire(blocking=False):
            return True
        return self._watchdog.make_way() and self._free.acquire(timeout=1.0)

    # region lend
    def release(self, connection: socket.socket) -> None:
        """The connection has ended: its slot is free, unless its stream gave it back."""
        with self._lock:
            if connection in self._lent:
                self._lent.discard(connection)
                return
        self._free.release()

    def lend(self, connection: socket.socket) -> None:
        """A connection that becomes a stream gives its slot back while the stream lasts:
        streams have a budget of their own, and the slots are for answering requests."""
        with self._lock:
            self._lent.add(connection)
        self._free.release()

    def reclaim(self, connection: socket.socket) -> bool:
        """After its stream, the connection may carry requests again if a slot is free."""
        if not self._free.acquire(blocking=False):
            return False
        with self._lock:
            self._lent.discard(connection)
        return True
    # endregion lend


def shut(sock: socket.socket, how: str) -> None:
    try:
        if how == "close":
            sock.close()
        elif how == "cut":
            sock.shutdown(socket.SHUT_RDWR)  # its reads end at once, and nothing more is written
        else:
            sock.shutdown(socket.SHUT_RD)  # a blocked read returns at once; writing still works
    except OSError:
        pass  # the client went first
