"""Shared fixtures: real step servers on free ports. And the order the suite runs in."""
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "steps"))  # manifest, launch, replay, check

from helpers import Client, McpClient, StdioServer  # noqa: E402
from launch import running_server  # noqa: E402
from manifest import find_step  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "drift: compares the repository with itself (quoted code, snapshot copies, recorded transcripts)",
    )


def pytest_collection_modifyitems(items):
    """Behaviour first, drift last. A bug in a step also makes its quoted code, its
    copies and its transcripts differ; run first, those tests would hide the test
    that names the behaviour, and `pytest -x` would stop there."""
    items.sort(key=lambda item: item.get_closest_marker("drift") is not None)  # a stable sort


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


@pytest.fixture
def stdio():
    """Step 3's server over stdio, a fresh process (a fresh session) for each test."""
    server = StdioServer(find_step(3).server)
    yield server
    server.stop()
