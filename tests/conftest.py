"""Shared fixtures: real step servers on free ports, and a small HTTP client."""
import http.client
import json
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "steps"))  # manifest, launch, replay, check

from launch import running_server  # noqa: E402
from manifest import find_step  # noqa: E402


class Reply:
    def __init__(self, response: http.client.HTTPResponse):
        self.status = response.status
        self.headers = response.headers
        self.body = response.read()

    def json(self):
        return json.loads(self.body)


class Client:
    """Raw HTTP to one server: every header and byte is the test's choice."""

    def __init__(self, url: str):
        self.url = url
        parts = urlsplit(url)
        self.host, self.port, self.path = parts.hostname, parts.port, parts.path

    def request(self, method: str, body=None, headers=None, path=None) -> Reply:
        if body is not None and not isinstance(body, (bytes, str)):
            body = json.dumps(body)
        connection = http.client.HTTPConnection(self.host, self.port, timeout=10)
        try:
            connection.request(method, path or self.path, body, headers or {})
            return Reply(connection.getresponse())
        finally:
            connection.close()

    def post(self, body, headers=None, **kw) -> Reply:
        return self.request("POST", body, {"Content-Type": "application/json", **(headers or {})}, **kw)


@pytest.fixture(scope="module")
def step1():
    with running_server(find_step(1).server) as (url, _log):
        yield Client(url)
