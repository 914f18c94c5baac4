"""Shared fixtures: real step servers on free ports. And the order the suite runs in.

Every test must pass whatever ran before it, so:

- A test imports a step's modules only inside `with helpers.step_modules(folder):`
  (see its docstring), never by putting a step folder on sys.path.
- `--order=reverse` imports and runs the files, and runs the tests in each file,
  last first; `--order=shuffle` does both in a random order, printed in the header
  as `shuffle:SEED`, and `--order=shuffle:SEED` repeats that order. The tests of a
  file stay together, so that its servers start once.
"""
import random
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "steps"))  # manifest, launch, replay, check

from helpers import Client, McpClient, StdioServer, distinct_copies  # noqa: E402
from launch import running_server  # noqa: E402
from manifest import find_step  # noqa: E402


def pytest_addoption(parser):
    parser.addoption(
        "--order", default="files", metavar="files|reverse|shuffle[:SEED]",
        help="run the test files as collected, last first, or shuffled (SEED replays a shuffle)",
    )


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "drift: compares the repository with itself (quoted code, snapshot copies, recorded transcripts)",
    )
    config.addinivalue_line("markers", "slow: left out of the extra shuffled pass that .ci/run makes")
    config.option.order = with_seed(config.option.order)


def with_seed(order: str) -> str:
    """The --order value, with a fresh seed when shuffle names none."""
    if order in ("files", "reverse"):
        return order
    if order == "shuffle":
        return f"shuffle:{random.randrange(10**6)}"
    name, _, seed = order.partition(":")
    if name != "shuffle" or not seed.isdigit():
        raise pytest.UsageError(f"--order={order}: expected files, reverse, shuffle or shuffle:SEED (digits)")
    return order


def pytest_report_header(config):
    return f"order: {config.option.order} (repeat it with --order={config.option.order})"


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector):
    """The files of this folder in the --order asked for. A file imports its modules
    when it is collected, so this is also the order of the imports."""
    report = yield
    if isinstance(collector, pytest.Directory) and report.result:
        report.result[:] = in_file_order(report.result, collector.config.option.order)
    return report


@pytest.hookimpl(trylast=True)  # after pytest's own reordering, so this order is the one that runs
def pytest_collection_modifyitems(config, items):
    """The files, and the tests of each, in the --order asked for; then behaviour
    first, drift last. A bug in a step also makes its quoted code, its copies and its
    transcripts differ; run first, those tests would hide the test that names the
    behaviour, and `pytest -x` would stop there."""
    order = config.option.order
    files = {}  # each file's tests
    for item in items:
        files.setdefault(item.path, []).append(item)
    paths = in_file_order(list(files), order, path=lambda path: path)
    items[:] = [item for path in paths for item in arranged(files[path], order, str(path))]
    items.sort(key=lambda item: item.get_closest_marker("drift") is not None)  # a stable sort


def in_file_order(things: list, order: str, path=lambda node: node.path) -> list:
    """Files (or their nodes) in the --order asked for: the same order however they
    were collected, so that the files run in the order they were imported in."""
    if order == "files":
        return things  # as collected: by name, or as named on the command line
    return arranged(sorted(things, key=path), order, "files")


def arranged(things: list, order: str, where: str) -> list:
    """things in the given order; a shuffle depends on the seed and on where they are."""
    if order == "reverse":
        return things[::-1]
    if order.startswith("shuffle:"):
        things = things[:]
        random.Random(f"{order}:{where}").shuffle(things)
    return things


@pytest.fixture(scope="module")
def step1():
    with running_server(find_step(1).server) as (url, _log):
        yield Client(url)


@pytest.fixture(scope="module")
def step2():
    with running_server(find_step(2).server) as (url, _log):
        yield McpClient(url)


@pytest.fixture(scope="module")
def step3():
    with running_server(find_step(3).server) as (url, _log):
        yield McpClient(url)


@pytest.fixture(params=[2, 3], ids=["step2", "step3"])
def server(request):
    """Step 2 or step 3 over HTTP: a rule that lives in both is tested in both."""
    return request.getfixturevalue(f"step{request.param}")


@pytest.fixture(scope="session")
def step_servers():
    """start(number): that step's server over HTTP, started when a test first asks for
    it, on a vault of one note when it reads one, and shared by every file that asks;
    all stop at the end of the run. A test using them must leave nothing behind that
    another could see (a session it opened is its own)."""
    with ExitStack() as stack:
        clients = {}

        def start(number: int) -> McpClient:
            if number not in clients:
                step, args = find_step(number), []
                if step.vault:
                    vault = Path(stack.enter_context(tempfile.TemporaryDirectory())) / "vault"
                    vault.mkdir()
                    (vault / "Home.md").write_text("Home.\n")
                    args = ["--vault", str(vault)]
                url, _log = stack.enter_context(running_server(step.server, *args))
                clients[number] = McpClient(url)
                clients[number].step = number  # for a test whose request depends on the step's tools
            return clients[number]

        yield start


@pytest.fixture(params=distinct_copies("http_transport.py"), ids=lambda number: f"step{number}")
def door(request, step_servers):
    """A server of each distinct copy of http_transport.py: a rule of the door is tested in each."""
    return step_servers(request.param)


@pytest.fixture(params=distinct_copies("http_transport.py", since=3), ids=lambda number: f"step{number}")
def stateless_door(request, step_servers):
    """The same from step 3, which brought the 2026-07-28 era to the door."""
    return step_servers(request.param)


@pytest.fixture(params=distinct_copies("protocol.py"), ids=lambda number: f"step{number}")
def core(request, step_servers):
    """A server of each distinct copy of protocol.py: a rule of the protocol core is tested in each."""
    return step_servers(request.param)


@pytest.fixture
def stdio():
    """Step 3's server over stdio, a fresh process (a fresh session) for each test."""
    server = StdioServer(find_step(3).server)
    yield server
    server.stop()
