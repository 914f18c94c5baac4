"""Step 6's embeddings: the Ollama client against a stand-in server, the offline
hashing embedder, make_embedder, and the cosine helpers.

The stand-in is an http.server on 127.0.0.1 that speaks Ollama's embedding API
(POST /api/embed, GET /api/tags) and fails on request: down, slow, 5xx, 404,
broken JSON, wrong vectors. No real Ollama is needed, and nothing leaves loopback.
"""
import json
import math
import os
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from helpers import STEPS_DIR, step_modules

STEP = STEPS_DIR / "06-embeddings"
with step_modules(STEP):
    import embeddings
    import vectors
    from embeddings import make_embedder
    from hash_embedder import HashEmbedder, slot, word_form, words
    from static_embedder import StaticEmbedder
    from ollama_client import (
        DEFAULT_URL,
        DOCUMENT_PREFIX,
        QUERY_PREFIX,
        OllamaEmbedder,
        OllamaError,
        ollama_url,
    )
    from vectors import cosine, dot, norm, normalise

MODEL_NOT_FOUND = {"error": "model 'nomic-embed-text' not found"}  # as Ollama answers /api/embed


# ---- the stand-in ---------------------------------------------------------------


class Answer:
    """One scripted answer: a status, a body, and an optional delay first."""

    def __init__(self, status=200, body=b"", content_type="application/json", delay=0.0):
        self.status, self.content_type, self.delay = status, content_type, delay
        self.body = body if isinstance(body, bytes) else json.dumps(body).encode()


def vectors_answer(vectors):
    return Answer(body={"model": "nomic-embed-text", "embeddings": vectors})


class StandIn:
    """What the stand-in answers, and what it was asked.

    POST /api/embed answers the next scripted Answer, or, when the script is
    empty, a correct answer: for input number i of the request, the vector
    [i + 1, 1, 1, ...] of `dimension` numbers (not normalised, on purpose).
    GET /api/tags lists `models`, or the next scripted Answer."""

    def __init__(self):
        self.script: list[Answer] = []
        self.requests: list[tuple[str, object]] = []  # (path, parsed body)
        self.dimension = 4
        self.models = ["nomic-embed-text:latest", "llama3.2:latest"]
        self.release = threading.Event()  # ends a delay early, at teardown
        self.server = None

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def inputs(self):
        return [body["input"] for path, body in self.requests if path == "/api/embed"]

    def answer_for(self, path, body):
        self.requests.append((path, body))
        if self.script:
            return self.script.pop(0)
        if path == "/api/tags":
            return Answer(body={"models": [{"name": name, "model": name} for name in self.models]})
        if path == "/api/embed" and isinstance(body, dict):
            count = len(body["input"])
            return vectors_answer([[i + 1.0] + [1.0] * (self.dimension - 1) for i in range(count)])
        return Answer(404, b"404 page not found", "text/plain")  # what Ollama's router says


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        self.reply(self.server.stand_in.answer_for(self.path, None))

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.reply(self.server.stand_in.answer_for(self.path, json.loads(raw)))

    def reply(self, answer):
        if answer.delay:
            self.server.stand_in.release.wait(answer.delay)
        self.send_response(answer.status)
        self.send_header("Content-Type", answer.content_type)
        self.send_header("Content-Length", str(len(answer.body)))
        self.end_headers()
        self.wfile.write(answer.body)

    def log_message(self, *args):  # keep pytest's output clean
        pass


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a client that gave up on a slow answer closed its socket: expected here


@pytest.fixture
def stand_in():
    fake = StandIn()
    server = QuietServer(("127.0.0.1", 0), Handler)
    server.stand_in = fake
    fake.server = server
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    yield fake
    fake.release.set()
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


@pytest.fixture
def closed_port():
    """A loopback port that was just bound and closed: nothing listens there."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def client(stand_in, **options):
    """A client for the stand-in that does not wait long between tries."""
    return OllamaEmbedder(stand_in.url, **{"backoff": 0.01, "timeout": 5, **options})


def raises(call) -> OllamaError:
    with pytest.raises(OllamaError) as caught:
        call()
    return caught.value


def is_unit(vector):
    return math.isclose(norm(vector), 1.0, rel_tol=1e-9)


# ---- the Ollama client: what it sends ---------------------------------------------


def test_documents_and_queries_get_their_task_prefixes(stand_in):
    ollama = client(stand_in)
    ollama.embed_documents(["Rye starter", "Kimchi"])
    ollama.embed_query("sour bread")
    assert stand_in.requests[0][1] == {
        "model": "nomic-embed-text",
        "input": [DOCUMENT_PREFIX + "Rye starter", DOCUMENT_PREFIX + "Kimchi"],
    }
    assert stand_in.inputs()[1] == [QUERY_PREFIX + "sour bread"]
    assert DOCUMENT_PREFIX == "search_document: " and QUERY_PREFIX == "search_query: "


def test_texts_go_in_batches_and_vectors_come_back_in_order(stand_in):
    texts = [f"note {i}" for i in range(70)]
    vectors = client(stand_in, batch_size=32).embed_documents(texts)
    assert [len(batch) for batch in stand_in.inputs()] == [32, 32, 6]
    assert len(vectors) == 70
    # The stand-in's first number is the input's place in its batch, plus one.
    places = [i % 32 + 1 for i in range(70)]
    for vector, place in zip(vectors, places):
        assert vector == pytest.approx(normalise([place, 1, 1, 1]))


def test_no_texts_no_request(stand_in):
    assert client(stand_in).embed_documents([]) == []
    assert stand_in.requests == []


def test_vectors_are_normalised_and_the_dimension_is_learnt(stand_in):
    stand_in.dimension = 6
    ollama = client(stand_in)
    assert ollama.dimension is None
    [vector] = ollama.embed_documents(["Focaccia"])
    assert is_unit(vector) and len(vector) == 6
    assert ollama.dimension == 6
    assert ollama.name == "ollama/nomic-embed-text"


def test_another_model_is_asked_for_by_name(stand_in):
    client(stand_in, model="mxbai-embed-large").embed_query("miso")
    assert stand_in.requests[0][1]["model"] == "mxbai-embed-large"


# ---- the Ollama client: what goes wrong ----------------------------------------------


def test_nothing_listening_says_start_ollama(closed_port):
    ollama = OllamaEmbedder(f"127.0.0.1:{closed_port}", attempts=3, backoff=0.01)
    error = raises(lambda: ollama.embed_query("rye"))
    assert f"Ollama is not answering at http://127.0.0.1:{closed_port}" in str(error)
    assert "after 3 tries" in str(error)
    assert "`ollama serve`" in str(error)


def test_a_slow_answer_times_out_without_retries(stand_in):
    stand_in.script = [Answer(delay=10)]
    started = time.monotonic()
    error = raises(lambda: client(stand_in, timeout=0.3).embed_query("rye"))
    assert time.monotonic() - started < 8  # waiting for the answer would take 10
    assert "did not answer within 0.3 seconds" in str(error)
    assert error.fix == "a first request loads the model, which can be slow: try again, or allow more time"
    assert len(stand_in.requests) == 1


def test_a_500_is_retried_and_the_retry_works(stand_in):
    stand_in.script = [Answer(500, {"error": "llama runner process has terminated"})]
    vector = client(stand_in, attempts=3).embed_query("rye")
    assert is_unit(vector)
    assert len(stand_in.requests) == 2


def test_500_every_time_gives_up_after_the_last_try(stand_in):
    stand_in.script = [Answer(500, {"error": "llama runner process has terminated"})] * 5
    error = raises(lambda: client(stand_in, attempts=3).embed_query("rye"))
    assert len(stand_in.requests) == 3
    assert "failed with HTTP 500: llama runner process has terminated after 3 tries" in str(error)


def test_the_waits_between_tries_double(stand_in):
    stand_in.script = [Answer(503, b"busy", "text/plain")] * 3
    started = time.monotonic()
    raises(lambda: client(stand_in, attempts=3, backoff=0.2).embed_query("rye"))
    assert 0.6 <= time.monotonic() - started < 8  # 0.2, then 0.4; the bound only catches a runaway


def test_a_4xx_is_not_retried(stand_in):
    stand_in.script = [Answer(400, {"error": "invalid input type"})]
    error = raises(lambda: client(stand_in, attempts=3).embed_query("rye"))
    assert len(stand_in.requests) == 1
    assert "HTTP 400: invalid input type" in str(error)


def test_a_model_not_pulled_says_ollama_pull(stand_in):
    stand_in.script = [Answer(404, MODEL_NOT_FOUND)]
    error = raises(lambda: client(stand_in).embed_query("rye"))
    assert len(stand_in.requests) == 1
    assert "does not have the model nomic-embed-text" in str(error)
    assert error.fix == "run `ollama pull nomic-embed-text`"


def test_the_older_not_found_message_is_understood_too(stand_in):
    stand_in.script = [Answer(404, {"error": 'model "nomic-embed-text" not found, try pulling it first'})]
    assert "`ollama pull nomic-embed-text`" in str(raises(lambda: client(stand_in).embed_query("rye")))


def test_a_404_that_is_not_about_a_model_is_not_ollama(stand_in):
    stand_in.script = [Answer(404, b"404 page not found", "text/plain")]
    error = raises(lambda: client(stand_in).embed_query("rye"))
    assert f"{stand_in.url}/api/embed does not look like Ollama" in str(error)
    assert "404 page not found" in str(error)
    assert "OLLAMA_HOST" in str(error) and "ollama pull" not in str(error)


def test_an_html_page_is_not_ollama(stand_in):
    stand_in.script = [Answer(200, b"<!doctype html><html><body>Welcome</body></html>", "text/html")]
    error = raises(lambda: client(stand_in).embed_query("rye"))
    assert "does not look like Ollama: it answered with something that is not JSON: <!doctype html>" in str(error)


def test_a_server_that_does_not_speak_http_is_not_ollama():
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.settimeout(5)

        def greet_and_hang_up():
            connection, _ = listener.accept()
            with connection:
                connection.sendall(b"SSH-2.0-OpenSSH_9.6\r\n")
                # Hang up only once the request is in, as an SSH server does: closing
                # first races the client's send, which then fails with a broken pipe.
                connection.settimeout(5)
                received = b""
                while b"\r\n\r\n" not in received and (chunk := connection.recv(65536)):
                    received += chunk

        greeter = threading.Thread(target=greet_and_hang_up, daemon=True)
        greeter.start()
        ollama = OllamaEmbedder(f"127.0.0.1:{listener.getsockname()[1]}", attempts=1)
        error = raises(lambda: ollama.embed_query("rye"))
        greeter.join(timeout=5)
    assert "does not look like Ollama: it does not speak HTTP" in str(error)


def test_malformed_json_is_an_error(stand_in):
    stand_in.script = [Answer(200, b'{"embeddings": [[0.1, 0.2')]
    error = raises(lambda: client(stand_in).embed_query("rye"))
    assert "not JSON" in str(error)


def test_json_without_embeddings_is_an_error(stand_in):
    stand_in.script = [Answer(200, {"embedding": [0.1, 0.2]})]  # the older /api/embeddings shape
    assert "has no list of 'embeddings'" in str(raises(lambda: client(stand_in).embed_query("rye")))


def test_the_wrong_number_of_vectors_is_an_error(stand_in):
    stand_in.script = [vectors_answer([[1.0, 0.0], [0.0, 1.0]])]
    error = raises(lambda: client(stand_in).embed_documents(["a", "b", "c"]))
    assert "has 2 vectors for 3 inputs" in str(error)


def test_vectors_of_different_dimensions_are_an_error(stand_in):
    stand_in.script = [vectors_answer([[1.0, 0.0, 0.0], [0.0, 1.0]])]
    error = raises(lambda: client(stand_in).embed_documents(["a", "b"]))
    assert "a vector of dimension 2 where 3 was expected" in str(error)


def test_a_later_batch_must_keep_the_first_dimension(stand_in):
    stand_in.script = [vectors_answer([[1.0, 0.0, 0.0]]), vectors_answer([[1.0, 0.0]])]
    ollama = client(stand_in, batch_size=1)
    error = raises(lambda: ollama.embed_documents(["a", "b"]))
    assert "a vector of dimension 2 where 3 was expected" in str(error)


@pytest.mark.parametrize(
    "raw",
    [
        b'{"embeddings": [[0.1, NaN, 0.3]]}',  # Python's json reads NaN and Infinity
        b'{"embeddings": [[0.1, Infinity, 0.3]]}',
        b'{"embeddings": [[0.1, "0.2", 0.3]]}',
        b'{"embeddings": [[0.1, null, 0.3]]}',
        b'{"embeddings": [[0.1, true, 0.3]]}',
        b'{"embeddings": [[0.1, 1e999, 0.3]]}',
    ],
    ids=["nan", "infinity", "text", "null", "bool", "overflow"],
)
def test_anything_but_finite_numbers_is_an_error(stand_in, raw):
    stand_in.script = [Answer(200, raw)]
    assert "not a finite number" in str(raises(lambda: client(stand_in).embed_query("rye")))


@pytest.mark.parametrize("vector", [[0.0, 0.0, 0.0], [], 0.5, "abc"], ids=["zeros", "empty", "number", "text"])
def test_a_vector_that_cannot_be_used_is_an_error(stand_in, vector):
    stand_in.script = [vectors_answer([vector])]
    error = raises(lambda: client(stand_in).embed_query("rye"))
    assert "sent an answer that" in str(error) and "nothing from it was kept" in str(error)


def test_a_failed_answer_does_not_set_the_dimension(stand_in):
    stand_in.script = [vectors_answer([[1.0, 0.0], [1.0]])]
    ollama = client(stand_in)
    raises(lambda: ollama.embed_documents(["a", "b"]))
    assert ollama.dimension is None
    assert len(ollama.embed_query("rye")) == stand_in.dimension


# ---- where Ollama is: OLLAMA_HOST ------------------------------------------------


@pytest.mark.parametrize(
    "value,url",
    [
        ("", DEFAULT_URL),
        ("   ", DEFAULT_URL),
        ("127.0.0.1:11434", "http://127.0.0.1:11434"),
        ("localhost:8080", "http://localhost:8080"),
        ("ollama.lan", "http://ollama.lan:11434"),  # no scheme: Ollama's port
        ("0.0.0.0", "http://127.0.0.1:11434"),  # an address to listen on, not to connect to
        ("0.0.0.0:9999", "http://127.0.0.1:9999"),
        (":9999", "http://127.0.0.1:9999"),
        ('"127.0.0.1:1234"', "http://127.0.0.1:1234"),  # quotes from a careless export
        ("http://ollama.lan", "http://ollama.lan:80"),  # a scheme brings its own port
        ("https://ollama.lan/", "https://ollama.lan:443"),
        ("HTTP://box:5000//", "http://box:5000"),
        ("http://box:5000/ollama", "http://box:5000/ollama"),  # behind a reverse proxy
        ("[::1]:8080", "http://[::1]:8080"),
        ("::1", "http://[::1]:11434"),
        ("[::]", "http://[::1]:11434"),
    ],
)
def test_ollama_host_is_read_as_ollama_reads_it(value, url):
    assert ollama_url(value) == url


@pytest.mark.parametrize("value", ["box:port", "box:0", "box:70000", "ftp://box", "box:-1"])
def test_an_unusable_ollama_host_says_so(value):
    error = raises(lambda: ollama_url(value))
    assert f"OLLAMA_HOST={value!r}" in str(error)


def test_the_environment_is_read_when_no_host_is_given(stand_in, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", stand_in.url.removeprefix("http://"))
    assert OllamaEmbedder().url == stand_in.url
    assert is_unit(OllamaEmbedder().embed_query("rye"))
    monkeypatch.delenv("OLLAMA_HOST")
    assert OllamaEmbedder().url == "http://127.0.0.1:11434"


def test_a_proxy_setting_does_not_catch_requests_to_ollama(stand_in, closed_port):
    # In another process, because urllib reads the proxy settings once per process.
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]); from ollama_client import OllamaEmbedder; "
        "print(len(OllamaEmbedder(sys.argv[2], attempts=1).embed_query('rye')))"
    )
    proxy = f"http://127.0.0.1:{closed_port}"  # a proxy that is not there
    done = subprocess.run(
        [sys.executable, "-c", script, str(STEP), stand_in.url],
        env={**os.environ, "http_proxy": proxy, "HTTP_PROXY": proxy, "no_proxy": "", "NO_PROXY": ""},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(stand_in.dimension)


# ---- the offline embedder ----------------------------------------------------------

SAMPLES = [
    "Feed the sourdough starter equal weights of flour and water.",
    "Crème fraîche thickens overnight at room temperature.",
    "Kimchi: napa cabbage, gochugaru, garlic, fish sauce!",
    "",
]
IN_ANOTHER_PROCESS = (
    "import json, sys; sys.path.insert(0, sys.argv[1]); from hash_embedder import HashEmbedder; "
    "print(json.dumps(HashEmbedder().embed_documents(json.loads(sys.argv[2]))))"
)


def test_hash_vectors_are_the_same_in_every_process():
    here = HashEmbedder().embed_documents(SAMPLES)
    for seed in ("1", "2"):  # Python's own hash() of a str would differ between these
        done = subprocess.run(
            [sys.executable, "-c", IN_ANOTHER_PROCESS, str(STEP), json.dumps(SAMPLES)],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        assert json.loads(done.stdout) == here


def test_the_recipe_is_pinned():
    # Changing the hash or the feature strings changes every stored vector. If
    # you mean to, change HashEmbedder.name too (so old indexes are rebuilt), then these.
    assert slot("w:bread", 512) == (324, -1)
    assert slot("w:bread", 768) == (68, -1)


@pytest.mark.parametrize("dimension", [64, 512, 768])
def test_hash_vectors_have_the_dimension_and_length_one(dimension):
    hashing = HashEmbedder(dimension)
    assert hashing.name == f"hash-{dimension}" and hashing.dimension == dimension
    for vector in hashing.embed_documents(SAMPLES[:3]):
        assert len(vector) == dimension and is_unit(vector)


def test_the_default_is_512():
    assert HashEmbedder().name == "hash-512"


def test_similar_sentences_are_closer_than_unrelated_ones():
    hashing = HashEmbedder()
    starter, also_starter, cabbage = hashing.embed_documents(
        [
            "The sourdough starter doubled overnight.",
            "My starter doubles in size overnight when it is warm.",
            "Salt the napa cabbage for kimchi.",
        ]
    )
    assert cosine(starter, also_starter) > 0.3
    assert cosine(starter, also_starter) > cosine(starter, cabbage) + 0.2


def test_word_forms_meet():
    assert word_form("fermenting") == word_form("fermented") == word_form("ferments") == "ferment"
    assert word_form("bake") == word_form("bakes") == word_form("baked") == word_form("baking") == "bak"
    assert word_form("bread") == "bread"  # too short to lose 'ed'
    assert word_form("glass") == "glass"  # a double s is no plural
    hashing = HashEmbedder()
    assert cosine(hashing.embed_query("fermenting cabbage"), hashing.embed_query("fermented cabbages")) > 0.6


def test_words_are_folded_split_and_stop_words_dropped():
    assert words("The_Starter, and THE levain!") == ["starter", "levain"]
    composed, decomposed = "cr\u00e8me", "cre\u0300me"  # the same word, as macOS may store it
    assert words(composed) == words(decomposed) == ["crème"]
    hashing = HashEmbedder()
    assert hashing.embed_query("Rye BREAD") == hashing.embed_query("rye bread")


@pytest.mark.parametrize("text", ["", "   \n\t", "!?!", "the and of"])
def test_a_text_without_words_is_the_zero_vector(text):
    hashing = HashEmbedder()
    vector = hashing.embed_query(text)
    assert vector == [0.0] * hashing.dimension
    assert cosine(vector, hashing.embed_query("rye")) == 0.0


def test_repeating_a_word_counts_less_and_less():
    hashing = HashEmbedder()
    # With counts taken as they are, the ten 'rye's would drown out the 'wheat'.
    assert cosine(hashing.embed_query("rye " * 10 + "wheat"), hashing.embed_query("wheat")) > 0.2


def test_signs_are_balanced():
    signs = [slot(f"w:word{i}", 512)[1] for i in range(1000)]
    assert 400 < signs.count(1) < 600
    assert any(x < 0 for x in HashEmbedder().embed_query(SAMPLES[0]))


def test_queries_and_documents_are_embedded_alike():
    hashing = HashEmbedder()
    assert hashing.embed_query(SAMPLES[1]) == hashing.embed_documents([SAMPLES[1]])[0]
    assert hashing.embed_documents([]) == []


# ---- cosine and friends ------------------------------------------------------------


def test_dot_uses_sumprod_where_python_has_it():
    assert (vectors._sumprod is getattr(math, "sumprod", None)) == hasattr(math, "sumprod")
    a, b = [0.5, -1.0, 2.0], [4.0, 3.0, 0.25]
    assert dot(a, b) == pytest.approx(sum(x * y for x, y in zip(a, b)))


def test_dot_refuses_vectors_of_different_lengths():
    with pytest.raises(ValueError):
        dot([1.0, 2.0], [1.0])


def test_cosine():
    assert cosine([1.0, 2.0], [2.0, 4.0]) == pytest.approx(1.0)
    assert cosine([1.0, 0.0], [0.0, 3.0]) == 0.0
    assert cosine([1.0, 2.0], [-1.0, -2.0]) == pytest.approx(-1.0)
    assert cosine([0.0, 0.0], [1.0, 1.0]) == 0.0
    same = normalise([0.1, 0.7, 0.3])
    assert -1.0 <= cosine(same, same) <= 1.0


def test_normalise():
    assert normalise([3.0, 4.0]) == pytest.approx([0.6, 0.8])
    assert normalise([0.0, 0.0]) == [0.0, 0.0]


# ---- make_embedder and the startup line ------------------------------------------------


def test_hash_when_asked():
    embedder, line = make_embedder("hash")
    assert isinstance(embedder, HashEmbedder)
    assert line == "embeddings: offline hashing (hash-512), as configured; semantic search is approximate."


def test_the_static_table_when_asked():
    embedder, line = make_embedder("static")
    assert isinstance(embedder, StaticEmbedder)
    assert line == f"embeddings: offline static table ({embedder.name}), as configured; semantic search is approximate."


def test_auto_finds_ollama_with_one_small_request(stand_in):
    embedder, line = make_embedder("auto", host=stand_in.url)
    assert isinstance(embedder, OllamaEmbedder)
    assert line == f"embeddings: Ollama, model nomic-embed-text at {stand_in.url}."
    assert stand_in.requests == [("/api/tags", None)]


def test_auto_falls_back_to_the_static_table_when_ollama_is_not_answering(closed_port):
    embedder, line = make_embedder("auto", host=f"127.0.0.1:{closed_port}")
    assert isinstance(embedder, StaticEmbedder)
    assert embedder.name.startswith("static-minilm-256-")
    # Between the two parts, the system's words for a refused connection.
    assert line.startswith(
        f"embeddings: offline static table ({embedder.name}), because Ollama is not answering at "
        f"http://127.0.0.1:{closed_port} ("
    )
    assert line.endswith(
        "); semantic search is approximate. For real embeddings: start it with `ollama serve`, "
        "or set OLLAMA_HOST to where it listens, then restart."
    )


def test_auto_falls_back_when_the_model_is_not_pulled(stand_in):
    stand_in.models = ["llama3.2:latest"]
    embedder, line = make_embedder("auto", host=stand_in.url)
    assert isinstance(embedder, StaticEmbedder)
    assert f"because Ollama at {stand_in.url} does not have the model nomic-embed-text" in line
    assert "For real embeddings: run `ollama pull nomic-embed-text`, then restart." in line


def test_a_tagged_model_must_be_pulled_with_its_tag(stand_in):
    stand_in.models = ["nomic-embed-text:latest"]
    assert isinstance(make_embedder("auto", host=stand_in.url, model="nomic-embed-text")[0], OllamaEmbedder)
    assert isinstance(make_embedder("auto", host=stand_in.url, model="nomic-embed-text:v1.5")[0], StaticEmbedder)


@pytest.mark.parametrize(
    "answer",
    [
        Answer(404, b"404 page not found", "text/plain"),
        Answer(200, b"<html>router login</html>", "text/html"),
        Answer(200, {"status": "ok"}),
    ],
    ids=["404", "html", "other-json"],
)
def test_auto_falls_back_when_something_else_answers(stand_in, answer):
    stand_in.script = [answer]
    embedder, line = make_embedder("auto", host=stand_in.url)
    assert isinstance(embedder, StaticEmbedder)
    assert f"{stand_in.url}/api/tags does not look like Ollama" in line
    assert "check that OLLAMA_HOST points at Ollama" in line


def test_auto_does_not_wait_long_for_a_slow_ollama(stand_in):
    stand_in.script = [Answer(delay=10)]
    started = time.monotonic()
    embedder, line = make_embedder("auto", host=stand_in.url, probe_timeout=0.3)
    assert time.monotonic() - started < 8  # waiting for the answer would take 10
    assert isinstance(embedder, StaticEmbedder)
    assert "did not answer within 0.3 seconds" in line
    assert "For real embeddings: check OLLAMA_HOST; if it is right, look at Ollama's log" in line


def test_auto_looks_once_without_retries(stand_in):
    stand_in.script = [Answer(500, {"error": "busy"})]
    embedder, line = make_embedder("auto", host=stand_in.url)
    assert isinstance(embedder, StaticEmbedder) and len(stand_in.requests) == 1
    assert "failed with HTTP 500: busy" in line


def test_auto_falls_back_on_an_unusable_ollama_host(monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "box:port")
    embedder, line = make_embedder("auto")
    assert isinstance(embedder, StaticEmbedder)
    assert "because OLLAMA_HOST='box:port' has no valid port" in line


def test_ollama_when_asked_fails_loudly(stand_in, closed_port):
    with pytest.raises(OllamaError, match="ollama serve"):
        make_embedder("ollama", host=f"127.0.0.1:{closed_port}")
    stand_in.models = []
    with pytest.raises(OllamaError, match="ollama pull nomic-embed-text"):
        make_embedder("ollama", host=stand_in.url)


def test_options_reach_the_ollama_client(stand_in):
    embedder, _ = make_embedder("ollama", host=stand_in.url, batch_size=2, timeout=7, attempts=5)
    assert (embedder.batch_size, embedder.timeout, embedder.attempts) == (2, 7, 5)
    embedder.embed_documents(["a", "b", "c"])
    assert [len(batch) for batch in stand_in.inputs()] == [2, 1]


def test_an_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="auto, ollama, static, hash"):
        make_embedder("openai")


def test_every_startup_line_is_one_line(stand_in, closed_port):
    lines = [make_embedder("hash")[1], make_embedder("auto", host=stand_in.url)[1]]
    lines.append(make_embedder("auto", host=f"127.0.0.1:{closed_port}")[1])
    stand_in.script = [Answer(200, b"<html>\n<body>\nnot here\n</body>\n</html>", "text/html")]
    lines.append(make_embedder("auto", host=stand_in.url)[1])
    for line in lines:
        assert line.startswith("embeddings: ") and "\n" not in line


# ---- the demo ------------------------------------------------------------------------


def test_the_demo_ranks_the_default_sentences(capsys):
    assert embeddings.main(["--embedder", "hash"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("embeddings: offline hashing (hash-512)")
    blocks = out.split("\n\n")[1:]
    assert len(blocks) == len(embeddings.DEFAULT_SENTENCES)
    best = {}
    for block in blocks:
        sentence, first, *rest = block.strip().splitlines()
        best[sentence] = first.split(None, 1)[1]  # "  0.390  text" -> "text"
        assert len(rest) == len(embeddings.DEFAULT_SENTENCES) - 2
    first, second = embeddings.DEFAULT_SENTENCES[:2]
    assert best[first] == second and best[second] == first
    massage, sauerkraut = embeddings.DEFAULT_SENTENCES[4:6]
    assert best[massage] == sauerkraut and best[sauerkraut] == massage


def test_the_demo_ranks_sentences_against_a_query(capsys):
    assert embeddings.main(["--embedder", "hash", "--query", "sour rye starter", "rye starter", "kimchi"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2] == "query: sour rye starter"
    assert lines[3].endswith("rye starter") and lines[4].endswith("kimchi")


def test_the_demo_runs_as_a_command_from_anywhere(tmp_path, closed_port):
    done = subprocess.run(
        [sys.executable, str(STEP / "embeddings.py"), "rye bread", "wheat bread"],
        cwd=tmp_path,
        env={**os.environ, "OLLAMA_HOST": f"127.0.0.1:{closed_port}"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("embeddings: offline static table (static-minilm-256-")
    assert "because Ollama is not answering" in done.stdout
    assert "rye bread" in done.stdout


def test_the_demo_says_what_is_wrong_when_ollama_was_asked_for(closed_port, monkeypatch, capsys):
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{closed_port}")
    assert embeddings.main(["--embedder", "ollama"]) == 1
    assert "error: Ollama is not answering" in capsys.readouterr().err


def test_the_demo_asks_ollama_for_documents_and_a_query(stand_in, monkeypatch, capsys):
    monkeypatch.setenv("OLLAMA_HOST", stand_in.url)
    assert embeddings.main(["--embedder", "ollama", "--query", "sour", "rye", "kimchi"]) == 0
    assert stand_in.inputs() == [[DOCUMENT_PREFIX + "rye", DOCUMENT_PREFIX + "kimchi"], [QUERY_PREFIX + "sour"]]
    assert capsys.readouterr().out.startswith(f"embeddings: Ollama, model nomic-embed-text at {stand_in.url}.")
