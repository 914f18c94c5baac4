"""A first build on more than one core: notes read, cut into chunks and embedded in worker processes.

A build's time goes to pure Python: reading each note, parsing it (notes.py),
embedding its chunks (the offline embedders are Python too) and quantizing the
vectors. Threads would take turns on one core, since only one at a time runs
Python code, so the build hands the notes to worker processes instead, a few
notes to a task, and takes back each note's chunks and stored vectors in the
order of the notes. The workers only compute: this process alone writes the
index (ChunkIndex.write_new), so a crash anywhere leaves the old index whole, as it
does without workers.

The workers are forked: each starts as a copy of this process, with the embedder
and the note reader already in memory, so nothing has to be sent to them but
paths. Only Linux forks a process that runs threads safely: macOS's system libraries
may deadlock in the copy, and Windows cannot fork. There, on one core, and for a vault
too small to repay starting processes, the same work is done here, note after note.
With Ollama, each worker sends its own requests, so the model always has a batch
to work on while this process writes what came back.

Each worker has a pipe of its own, whose far end only that worker holds. A worker
that dies, even halfway through sending an answer (the kernel's out-of-memory
killer, say), ends its pipe: this process reads the end at once and the build
fails. concurrent.futures' pool shares one pipe between its workers, and there a
worker killed mid-answer leaves the pool waiting for the rest of it forever.
"""
import contextlib
import itertools
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
import warnings
from collections import deque
from multiprocessing.connection import wait

from index import embed_batches

MAX_WORKERS = 4
NOTES_PER_TASK = 5  # about 25 chunks: one call of the embedder, one request to Ollama (32 chunks at most)
PARALLEL_FROM = 100  # notes; for fewer, starting the workers takes longer than it saves
TASKS_PER_WORKER = 2  # one it works on, one waiting: no worker idles while this process writes
# A fork copies one thread of a process that runs several (the server's): safe on Linux,
# where the copy takes no lock another thread held (forking_safely); not on macOS.
FORK_IS_SAFE = sys.platform.startswith("linux")


class WorkerFailed(Exception):
    """A worker's task failed (Ollama refused, say) or the worker died: the build fails."""


def worker_count(notes: int) -> int:
    """How many worker processes a build of `notes` notes uses; 0 for none."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    if notes < PARALLEL_FROM or cores < 2 or not FORK_IS_SAFE:
        return 0
    return min(MAX_WORKERS, cores)


# region tasks
def embedded_notes(paths: list[str], read_chunks, embedder):
    """(path, chunks, stored vectors) for every note of `paths`, in their order.
    read_chunks(path) gives a note's chunks; the embedder embeds their texts."""
    tasks = [paths[start : start + NOTES_PER_TASK] for start in range(0, len(paths), NOTES_PER_TASK)]
    workers = worker_count(len(paths))
    if not workers:
        for task in tasks:
            yield from embed_notes(task, read_chunks, embedder)
        return
# endregion tasks
    # region embedded-notes
    pool = []  # (process, pipe) of each worker started
    try:
        with forking_safely():
            for _ in range(workers):
                pool.append(start_worker(read_chunks, embedder))
        yield from answers_in_order(tasks, [pipe for _, pipe in pool])
    finally:  # after the last note, or an error: a worker that died, a note the embedder refused
        for process, pipe in pool:
            stop_worker(process, pipe)
    # endregion embedded-notes


# region answers-in-order
def answers_in_order(tasks: list[list[str]], pipes: list):
    """Yields the notes of every task, in the order of the tasks, whichever worker ends first."""
    unsent = enumerate(tasks)
    sent = {pipe: deque() for pipe in pipes}  # each worker's task numbers, in the order it answers them
    answered = {}
    for pipe in pipes:
        hand_out(pipe, sent[pipe], unsent)
    for number in range(len(tasks)):
        while number not in answered:
            for pipe in wait([pipe for pipe in pipes if sent[pipe]]):  # an answer, or a worker's end
                answered[sent[pipe].popleft()] = receive(pipe)
                hand_out(pipe, sent[pipe], unsent)
        yield from answered.pop(number)


def hand_out(pipe, sent: deque, unsent) -> None:
    for number, task in itertools.islice(unsent, TASKS_PER_WORKER - len(sent)):
        try:
            pipe.send(task)
        except OSError:
            raise WorkerFailed("a worker process ended before it was given its task") from None
        sent.append(number)


def receive(pipe) -> list[tuple]:
    try:
        done, answer = pipe.recv()
    except (EOFError, OSError):
        raise WorkerFailed("a worker process ended before it answered") from None
    if not done:
        raise WorkerFailed(f"a worker's task failed: {answer}")
    return answer
# endregion answers-in-order


# region forking-safely
@contextlib.contextmanager
def forking_safely():
    """A forked worker holds a copy of every lock, as it was at that moment: one that
    another thread held stays held in the worker forever. multiprocessing closes
    sys.stdin in each new worker, which waits for the lock of stdin's buffer, held
    by the stdio transport's thread as it waits for a line; so sys.stdin is set aside
    while the workers start (the transport keeps its own reference). The workers
    then take no other lock from this process (see work), so Python 3.12's
    warning that forking with threads may deadlock is silenced."""
    stdin, sys.stdin = sys.stdin, None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            yield
    finally:
        sys.stdin = stdin
# endregion forking-safely


# region start-worker
def start_worker(read_chunks, embedder) -> tuple:
    """A forked worker process, and this process's end of its pipe."""
    ours, theirs = multiprocessing.Pipe()
    fork = multiprocessing.get_context("fork")
    process = fork.Process(target=work, args=(theirs, read_chunks, embedder, os.getpid()), daemon=True)  # ended with us
    process.start()
    theirs.close()  # the worker holds the only copy now: its death ends the pipe
    return process, ours
# endregion start-worker


def stop_worker(process, pipe) -> None:
    """Killed: a worker holds nothing that must be saved, and may be waiting on Ollama."""
    process.kill()
    process.join()  # reaped, so no zombie is left behind
    pipe.close()


def embed_notes(paths: list[str], read_chunks, embedder) -> list[tuple]:
    """(path, chunks, stored vectors) for each of a few notes, their chunks embedded in one call."""
    return list(embed_batches([[(path, read_chunks(path)) for path in paths]], embedder))


def work(pipe, read_chunks, embedder, server: int) -> None:
    """A worker's life: a task in, its notes out, until the server kills it. Its copy
    of the server's stdout is never written: a worker says nothing on the protocol's
    channel, not even a flush at exit. Its log goes to stderr through a new file
    object, since another thread may have been writing to the old one, holding its
    lock, at the fork. The server's signal handlers are undone: SIGTERM ends a worker
    at once, and Ctrl-C is the server's to handle, which then stops its workers."""
    sys.stdout = open(os.devnull, "w")
    inherited, sys.stderr = sys.stderr, open(os.dup(2), "w", buffering=1)
    for handler in logging.getLogger().handlers:
        if getattr(handler, "stream", None) is inherited:
            handler.stream = sys.stderr
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=exit_with, args=(server,), daemon=True).start()
    while True:
        try:
            task = pipe.recv()
        except (EOFError, OSError):  # a broken pipe: the server is gone, there is no one to tell
            os._exit(0)
        try:
            answer = True, embed_notes(task, read_chunks, embedder)
        except Exception as error:  # the server's build fails with these words
            answer = False, f"{type(error).__name__}: {error}"
        pipe.send(answer)


# region exit-with
def exit_with(parent: int) -> None:
    """Ends the worker once `parent`, the server, is gone. A server that is killed
    cannot stop its workers, and its ends of their pipes live on in them (each was
    forked holding copies), so no worker would read an end: each would wait for its
    next task forever. The loop lasts as long as the worker does."""
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)
# endregion exit-with
