"""A first build on more than one core: notes read, cut into chunks and embedded in worker processes.

A build's time goes to pure Python: reading each note, parsing it (notes.py),
embedding its chunks (the offline embedders are Python too) and quantizing the
vectors. Threads would take turns on one core, since only one at a time runs
Python code, so the build hands the notes to worker processes instead, a few
notes to a task, and takes back each note's chunks and stored vectors in the
order of the notes, with the meta stored beside them (step 10: the note's stamp
and links, taken from the same read). The workers only compute: this process alone writes the
index (Index.write_new), so a crash anywhere leaves the old index whole, as it
does without workers.

The workers are forked: each starts as a copy of this process, with the embedder
and the note reader already in memory, so nothing has to be sent to them but
paths. Where the system cannot fork (Windows), on one core, and for a vault too
small to repay starting processes, the same work is done here, note after note.
With Ollama, each worker sends its own requests, so the model always has a batch
to work on while this process writes what came back.
"""
import contextlib
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
import warnings
from concurrent.futures import ProcessPoolExecutor

from index import embed_batches

MAX_WORKERS = 4
NOTES_PER_TASK = 5  # about 25 chunks: one call of the embedder, one request to Ollama (32 chunks at most)
PARALLEL_FROM = 100  # notes; for fewer, starting the workers takes longer than it saves

_worker_job = None  # in a worker process: (read_note, embedder), set by start_worker


def worker_count(notes: int) -> int:
    """How many worker processes a build of `notes` notes uses; 0 for none."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    if notes < PARALLEL_FROM or cores < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return 0
    return min(MAX_WORKERS, cores)


def embedded_notes(paths: list[str], read_note, embedder):
    """(path, chunks, stored vectors, meta) for every note of `paths`, in their order.
    read_note(path) gives a note's chunks and meta; the embedder embeds their texts."""
    tasks = [paths[start : start + NOTES_PER_TASK] for start in range(0, len(paths), NOTES_PER_TASK)]
    workers = worker_count(len(paths))
    if not workers:
        for task in tasks:
            yield from embed_notes(task, read_note, embedder)
        return
    # region embedded-notes
    context = multiprocessing.get_context("fork")
    pool = ProcessPoolExecutor(workers, context, initializer=start_worker, initargs=(read_note, embedder))
    try:
        with forking_safely():
            done_tasks = pool.map(work_on, tasks)  # the workers start, every task is handed out; answers come in order
        for done in done_tasks:
            yield from done
    finally:  # after the last note, or an error: a worker that died, a note the embedder refused
        pool.shutdown(cancel_futures=True)
    # endregion embedded-notes


@contextlib.contextmanager
def forking_safely():
    """A forked worker holds a copy of every lock, as it was at that moment: one that
    another thread held stays held in the worker forever. multiprocessing closes
    sys.stdin in each new worker, which waits for the lock of stdin's buffer, held
    by the stdio transport's thread as it waits for a line; so sys.stdin is set aside
    while the workers start (the transport keeps its own reference). The workers
    then take no other lock from this process (see start_worker), so Python 3.12's
    warning that forking with threads may deadlock is silenced."""
    stdin, sys.stdin = sys.stdin, None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            yield
    finally:
        sys.stdin = stdin


def embed_notes(paths: list[str], read_note, embedder) -> list[tuple]:
    """(path, chunks, stored vectors, meta) for each of a few notes, their chunks embedded in one call."""
    read = [(path, *read_note(path)) for path in paths]
    embedded = embed_batches([[(path, chunks) for path, chunks, _ in read]], embedder)
    return [(path, chunks, vectors, meta) for (path, chunks, vectors), (*_, meta) in zip(embedded, read)]


def start_worker(read_note, embedder) -> None:
    """Runs first in each worker. Its copy of the server's stdout is never written: a
    worker says nothing on the protocol's channel, not even a flush at exit. Its log
    goes to stderr through a new file object, since another thread may have been
    writing to the old one, holding its lock, at the fork. The server's signal
    handlers are undone: the pool stops its workers with SIGTERM, and Ctrl-C is the
    server's to handle, which then stops them."""
    global _worker_job
    _worker_job = read_note, embedder
    sys.stdout = open(os.devnull, "w")
    inherited, sys.stderr = sys.stderr, open(os.dup(2), "w", buffering=1)
    for handler in logging.getLogger().handlers:
        if getattr(handler, "stream", None) is inherited:
            handler.stream = sys.stderr
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=exit_with, args=(os.getppid(),), daemon=True).start()


def exit_with(parent: int) -> None:
    """Ends the worker once `parent` is gone. A server that is killed cannot stop its
    workers, and each would wait for its next task forever. The loop lasts as long
    as the worker does: the pool stops the worker, and this thread with it."""
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


def work_on(paths: list[str]) -> list[tuple]:
    return embed_notes(paths, *_worker_job)
