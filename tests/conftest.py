"""Shared fixtures: real step servers on free ports."""
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "steps"))  # manifest, launch, replay, check

from helpers import Client, McpClient  # noqa: E402
from launch import running_server  # noqa: E402
from manifest import find_step  # noqa: E402


@pytest.fixture(scope="module")
def step1():
    with running_server(find_step(1).server) as (url, _log):
        yield Client(url)


@pytest.fixture(scope="module")
def step2():
    with running_server(find_step(2).server) as (url, _log):
        yield McpClient(url)
