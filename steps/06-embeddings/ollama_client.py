"""The one place that talks to Ollama: its embedding API, over urllib.

    POST {OLLAMA_HOST}/api/embed   {"model": "nomic-embed-text", "input": ["...", ...]}
    200                            {"model": ..., "embeddings": [[0.01, -0.002, ...], ...]}
    404 (model not pulled)         {"error": "model 'nomic-embed-text' not found"}

Decisions:
- Where: OLLAMA_HOST, read the way the ollama command reads it: 'host', 'host:port'
  or a URL; without a scheme it is http and port 11434. '0.0.0.0' is an address
  to listen on, so a client connects to 127.0.0.1 instead.
- nomic-embed-text was trained with task prefixes: 'search_document: ' before a
  text to be found, 'search_query: ' before what is searched. Without them its
  vectors still work, but queries match documents less well.
- Inputs go in batches (32 by default): one request per text would be slow, one
  request for a whole vault would be huge and could time out.
- Retries, with waits that double, for what may pass by itself: a refused or
  broken connection (Ollama starting or restarting) and 5xx answers. Never for
  4xx: the same request would get the same answer. Never after a timeout: a
  slow server asked again only makes the wait longer.
- Every answer is checked before anyone stores it: one vector per input, all of
  one dimension, finite numbers only. A NaN in an index would poison every
  search that touches it, silently; here it is an error.
- Vectors are normalised to length 1, so cosine is a dot product (vectors.py).
- No HTTP proxy: Ollama runs on this machine or nearby, and an http_proxy set
  for the web must not catch its requests.
- One exception, OllamaError, whose message says what happened and what to do.
"""
import json
import math
import os
import time
import urllib.error
import urllib.request
from http.client import HTTPException

from vectors import norm, normalise

DEFAULT_MODEL = "nomic-embed-text"
DEFAULT_PORT = 11434
DEFAULT_URL = f"http://127.0.0.1:{DEFAULT_PORT}"
DOCUMENT_PREFIX = "search_document: "
QUERY_PREFIX = "search_query: "
MAX_ANSWER_BYTES = 64 * 1024 * 1024  # 32 vectors of 768 floats are about 0.5 MiB


# region errors
class OllamaError(Exception):
    """What went wrong, and what the reader can do about it.

    str(error) is 'problem: fix'; make_embedder uses the parts on their own."""

    def __init__(self, problem: str, fix: str):
        super().__init__(f"{problem}: {fix}")
        self.problem = problem
        self.fix = fix


class _Retryable(OllamaError):
    """A failure that may pass if the same request is sent again."""
# endregion errors


# ---- where Ollama is --------------------------------------------------------


# region ollama-url
def ollama_url(value: str | None = None) -> str:
    """The base URL for OLLAMA_HOST (or for value, when given), e.g.
    '' -> http://127.0.0.1:11434, 'box:8080' -> http://box:8080,
    'https://box' -> https://box:443 (with a scheme, the scheme's port)."""
    if value is None:
        value = os.environ.get("OLLAMA_HOST", "")
    text = value.strip().strip("\"'").strip()
    if not text:
        return DEFAULT_URL
    scheme, has_scheme, rest = text.partition("://")
    if not has_scheme:
        scheme, rest, port = "http", text, DEFAULT_PORT
    else:
        scheme = scheme.lower()
        port = {"http": 80, "https": 443}.get(scheme)
        if port is None:
            problem = f"OLLAMA_HOST={value!r} has the scheme {scheme!r}"
            raise OllamaError(problem, "write it with http://, https:// or no scheme")
    hostport, _, path = rest.rstrip("/").partition("/")
    host, port = _split_host_port(hostport, port, value)
    host = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
    if ":" in host:  # IPv6 goes in brackets in a URL
        host = f"[{host}]"
    return f"{scheme}://{host}:{port}" + (f"/{path}" if path else "")
# endregion ollama-url


def _split_host_port(hostport: str, port: int, value: str) -> tuple[str, int]:
    """'host:1234' -> ('host', 1234); 'host', '::1' -> (host, the default port)."""
    if hostport.startswith("["):  # [::1] or [::1]:8080
        host, _, after = hostport[1:].partition("]")
        port_text = after.removeprefix(":") if after else ""
    elif hostport.count(":") == 1:
        host, port_text = hostport.split(":")
    else:  # no port, or a bare IPv6 address such as ::1
        host, port_text = hostport, ""
    if port_text:
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            problem = f"OLLAMA_HOST={value!r} has no valid port"
            raise OllamaError(problem, "write it as host:port, with a port from 1 to 65535")
        port = int(port_text)
    return host, port


# ---- the client ---------------------------------------------------------------


class OllamaEmbedder:
    """Embeddings from a running Ollama: an Embedder (embeddings.py)."""

    def __init__(
        self,
        host: str | None = None,  # None reads OLLAMA_HOST
        model: str = DEFAULT_MODEL,
        batch_size: int = 32,
        timeout: float = 60.0,  # seconds for one request; a cold model takes a while to load
        attempts: int = 3,  # tries of one request before giving up
        backoff: float = 0.5,  # seconds before the second try, doubled for each one after
    ):
        if batch_size < 1 or attempts < 1:
            raise ValueError("batch_size and attempts must be at least 1")
        self.url = ollama_url(host)
        self.model = model
        self.name = f"ollama/{model}"
        self.dimension = None  # learnt from the first answer; every later one must agree
        self.batch_size = batch_size
        self.timeout = timeout
        self.attempts = attempts
        self.backoff = backoff

    # region embed
    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, in order, asked for in batches."""
        vectors = []
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start : start + self.batch_size]
            vectors += self._embed([DOCUMENT_PREFIX + text for text in batch])
        return vectors

    def embed_query(self, text: str) -> list[float]:
        return self._embed([QUERY_PREFIX + text])[0]

    def _embed(self, inputs: list[str]) -> list[list[float]]:
        answer = self._with_retries("/api/embed", {"model": self.model, "input": inputs})
        return self._checked_vectors(answer, len(inputs))
    # endregion embed

    # region quick-look
    def check(self, timeout: float = 2.0) -> None:
        """One quick look, without retries: GET /api/tags, the models pulled.
        Raises OllamaError unless Ollama answers and has the model."""
        answer = self._request("/api/tags", None, timeout)
        models = answer.get("models") if isinstance(answer, dict) else None
        if not isinstance(models, list):
            raise self._not_ollama("/api/tags")
        names = set()
        for model in models:
            if isinstance(model, dict):
                names |= {model.get("name"), model.get("model")}
        # 'nomic-embed-text' means the tag 'latest', and /api/tags lists it so.
        if self.model not in names and f"{self.model}:latest" not in names:
            raise self._model_missing()
    # endregion quick-look

    # ---- one request, and what can go wrong with it -------------------------

    # region retries
    def _with_retries(self, path: str, body: dict) -> object:
        """POST body to path and return the parsed answer; a failure that may
        pass is tried again after a wait that doubles each time."""
        for attempt in range(1, self.attempts + 1):
            try:
                return self._request(path, body, self.timeout)
            except _Retryable as error:
                if attempt == self.attempts:
                    tries = f" after {attempt} tries" if attempt > 1 else ""
                    raise OllamaError(error.problem + tries, error.fix) from None
                time.sleep(self.backoff * 2 ** (attempt - 1))
    # endregion retries

    # region request
    def _request(self, path: str, body: dict | None, timeout: float) -> object:
        """One request (POST with a body, else GET); the parsed JSON answer."""
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(
            self.url + path, data=data, headers={"Content-Type": "application/json"}
        )
        try:
            with _NO_PROXY.open(request, timeout=timeout) as response:
                raw = response.read(MAX_ANSWER_BYTES + 1)
        except urllib.error.HTTPError as answer:  # a status other than 2xx
            with answer:
                raise self._status_error(path, answer.code, answer.read(64 * 1024)) from None
        except urllib.error.URLError as failure:  # no connection, or a timeout while connecting
            raise self._connection_error(path, failure.reason, timeout) from None
        except (OSError, HTTPException) as failure:  # while reading the answer
            raise self._connection_error(path, failure, timeout) from None
        if len(raw) > MAX_ANSWER_BYTES:
            raise self._broken(f"is larger than {MAX_ANSWER_BYTES} bytes")
        try:
            return json.loads(raw)
        except ValueError:  # not JSON, or not even UTF-8
            why = f"it answered with something that is not JSON: {_preview(raw)}"
            raise self._not_ollama(path, why) from None
    # endregion request

    # region connection
    def _connection_error(self, path: str, reason: object, timeout: float) -> OllamaError:
        if isinstance(reason, TimeoutError):
            slow = "check OLLAMA_HOST; if it is right, look at Ollama's log (`ollama serve` prints it)"
            if path == "/api/embed":
                slow = "a first request loads the model, which can be slow: try again, or allow more time"
            return OllamaError(f"Ollama at {self.url} did not answer within {timeout:g} seconds", slow)
        if isinstance(reason, HTTPException) and not isinstance(reason, ConnectionError):
            return self._not_ollama(path, f"it does not speak HTTP ({type(reason).__name__})")
        detail = getattr(reason, "strerror", None) or str(reason)
        return _Retryable(
            f"Ollama is not answering at {self.url} ({detail})",
            "start it with `ollama serve`, or set OLLAMA_HOST to where it listens",
        )
    # endregion connection

    # region status
    def _status_error(self, path: str, status: int, raw: bytes) -> OllamaError:
        error = _error_field(raw)  # Ollama explains itself in {"error": "..."}
        if status >= 500:
            return _Retryable(
                f"Ollama at {self.url} failed with HTTP {status}: {error or _preview(raw)}",
                "look at Ollama's log (`ollama serve` prints it)",
            )
        if status == 404 and error and "model" in error.lower():
            return self._model_missing()
        if status == 404:
            return self._not_ollama(path, f"it answered 404 Not Found: {_preview(raw)}")
        return OllamaError(
            f"Ollama at {self.url} refused the request with HTTP {status}: {error or _preview(raw)}",
            f"check that {self.model} is an embedding model and that Ollama is up to date",
        )
    # endregion status

    def _model_missing(self) -> OllamaError:
        return OllamaError(
            f"Ollama at {self.url} does not have the model {self.model}", f"run `ollama pull {self.model}`"
        )

    def _not_ollama(self, path: str, why: str = "its answer is not shaped like Ollama's") -> OllamaError:
        return OllamaError(
            f"{self.url}{path} does not look like Ollama: {why}",
            "check that OLLAMA_HOST points at Ollama, and that Ollama is up to date",
        )

    def _broken(self, what: str) -> OllamaError:
        return OllamaError(
            f"Ollama at {self.url} sent an answer that {what}",
            "nothing from it was kept; if this repeats, check that OLLAMA_HOST points at Ollama "
            "and that Ollama is up to date",
        )

    # ---- what an answer must be -----------------------------------------------

    # region checked
    def _checked_vectors(self, answer: object, count: int) -> list[list[float]]:
        """The answer's vectors, normalised, once every check has passed."""
        vectors = answer.get("embeddings") if isinstance(answer, dict) else None
        if not isinstance(vectors, list):
            raise self._broken("has no list of 'embeddings'")
        if len(vectors) != count:
            raise self._broken(f"has {len(vectors)} vectors for {count} inputs")
        if not all(isinstance(vector, list) and vector for vector in vectors):
            raise self._broken("holds something that is not a list of numbers")
        dimension = self.dimension or len(vectors[0])  # later answers must match the first
        for vector in vectors:
            if len(vector) != dimension:
                raise self._broken(f"has a vector of dimension {len(vector)} where {dimension} was expected")
            if not all(map(_is_finite_number, vector)):
                raise self._broken("holds a value that is not a finite number (NaN, infinity, text...)")
            if not 0 < norm(vector) < math.inf:
                raise self._broken("holds a vector without a direction (all zeros) or too long to measure")
        self.dimension = dimension
        return [normalise(vector) for vector in vectors]
    # endregion checked


# region no-proxy
# No proxy handler: see the module's docstring.
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))
# endregion no-proxy


# region finite
def _is_finite_number(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer too large for a float
        return False
# endregion finite


def _error_field(raw: bytes) -> str | None:
    """The 'error' string of a JSON answer like {"error": "..."}, if there is one."""
    try:
        answer = json.loads(raw)
    except ValueError:
        return None
    error = answer.get("error") if isinstance(answer, dict) else None
    return _preview(error) if isinstance(error, str) else None


def _preview(raw: bytes | str, limit: int = 120) -> str:
    """The start of an answer, on one line and printable, for a message."""
    if isinstance(raw, bytes):
        raw = raw[: limit * 4].decode("utf-8", "replace")
    text = " ".join(raw[: limit * 4].split())
    text = "".join(c if c.isprintable() else "?" for c in text)
    if not text:
        return "(empty)"
    return text if len(text) <= limit else text[:limit] + "..."
