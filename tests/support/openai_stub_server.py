"""A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions protocol, for the tests.

`ChatCompletionServer(policy)` answers `POST /v1/chat/completions` with whatever `policy(body)` returns
(a `Reply`: a completion, an error status with its message, or a delay: a slow server, or one that
hangs past the client's timeout, or a raw body: a broken reply), and `GET /v1/models` with one model, so
the real openai client, its HTTP, our endpoint check, retries, timeouts, batching and reply parsing are
exercised end to end. With `tokenizer=True` it also counts tokens (words) at llama-cpp-python's
`POST /extras/tokenize/count`. Every
request body is kept in `server.requests` (message_text and message_images read a message's content
parts); `server.busy_peak` is the most requests it served at once. `AnswerPolicy` answers `qtc answer` prompts from a table of questions, each with a
behaviour (correct, wrong, not answerable, malformed, rate limited, server error, hang, ...);
`ParaphrasePolicy` answers `qtc paraphrase` prompts from a table of rewrites. `POST /v1/embeddings` gives
each text a deterministic vector of its words (`word_vector`); the texts are kept in `server.embedded`.
"""

from __future__ import annotations

import base64
import json
import re
import threading
import time
import zlib
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable


@dataclass
class Reply:
    content: str = ""  # the assistant message (for status 200)
    status: int = 200
    delay: float = 0.0  # seconds before replying: a hang when longer than the client's timeout
    headers: dict = field(default_factory=dict)
    message: str = ""  # the error's message (for a status other than 200)
    body: bytes | None = None  # sent as it is instead of a completion or an error (a broken reply)
    content_type: str = "application/json"


# What llama.cpp's server says, with HTTP 400, of a prompt longer than its context window.
CONTEXT_TOO_LONG = "the request exceeds the available context size, try increasing it"


def _tokens(text: str) -> int:
    return len(text.split())


EMBEDDING_SIZE = 64


def word_vector(text: str) -> list[float]:
    """The stub's embedding: each lower-cased word counted in one of EMBEDDING_SIZE buckets by its CRC-32,
    so that texts sharing words are near; the same text always gives the same vector."""
    vector = [0.0] * EMBEDDING_SIZE
    for word in re.findall(r"\w+", text.lower()):
        vector[zlib.crc32(word.encode()) % EMBEDDING_SIZE] += 1.0
    return vector


def message_text(message: dict) -> str:
    """A message's text: its content, or the text parts of a content given in parts (with images)."""
    content = message.get("content") or ""
    return content if isinstance(content, str) else "\n".join(p["text"] for p in content if p["type"] == "text")


def message_images(message: dict) -> list[bytes]:
    """The images of a message's content parts, in order, decoded from their base64 data URLs."""
    content = message.get("content") or ""
    urls = [] if isinstance(content, str) else [p["image_url"]["url"] for p in content if p["type"] == "image_url"]
    if any(not url.startswith("data:image/") for url in urls):
        raise ValueError("an image part that is not a data URL")
    return [base64.b64decode(url.partition(",")[2], validate=True) for url in urls]


class _Handler(BaseHTTPRequestHandler):
    server: "_Server"

    def log_message(self, format, *args) -> None:  # keep test output clean
        pass

    def _send(self, status: int, body: dict | bytes, headers: dict, content_type: str = "application/json") -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.endswith("/models"):
            self._send(200, {"object": "list", "data": [{"id": "stub", "object": "model", "owned_by": "stub"}]}, {})
        else:
            self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}}, {})

    def do_POST(self) -> None:
        if self.path.endswith("/embeddings"):
            self._embeddings(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            return
        if self.path == "/extras/tokenize/count" and self.server.tokenizer:
            text = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["input"]
            self._send(200, {"count": _tokens(text)}, {})
            return
        if not self.path.endswith("/chat/completions"):
            self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}}, {})
            return
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with self.server.lock:
            self.server.requests.append(body)
            self.server.busy += 1
            self.server.busy_peak = max(self.server.busy_peak, self.server.busy)
        try:
            self._reply(body)
        finally:
            with self.server.lock:
                self.server.busy -= 1

    def _embeddings(self, body: dict) -> None:
        texts = [body["input"]] if isinstance(body["input"], str) else body["input"]
        with self.server.lock:
            self.server.embedded.extend(texts)
        self._send(200, {"object": "list", "model": body["model"],
                         "data": [{"object": "embedding", "index": i, "embedding": word_vector(text)}
                                  for i, text in enumerate(texts)],
                         "usage": {"prompt_tokens": sum(map(_tokens, texts)), "total_tokens": sum(map(_tokens, texts))}},
                   {})

    def _reply(self, body: dict) -> None:
        reply = self.server.policy(body)
        if reply.delay and self.server.stopping.wait(reply.delay):
            return  # the server is shutting down: drop the hanging request
        try:
            if reply.body is not None:
                self._send(reply.status, reply.body, reply.headers, reply.content_type)
                return
            if reply.status != 200:
                self._send(reply.status, {"error": {"message": reply.message or f"stub status {reply.status}",
                                                    "type": "stub_error", "code": reply.status}}, reply.headers)
                return
            prompt = sum(_tokens(message_text(m)) for m in body["messages"])
            self._send(200, {
                "id": f"chatcmpl-stub-{len(self.server.requests)}", "object": "chat.completion",
                "created": int(time.time()), "model": body["model"],
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": reply.content}}],
                "usage": {"prompt_tokens": prompt, "completion_tokens": _tokens(reply.content),
                          "total_tokens": prompt + _tokens(reply.content)},
            }, reply.headers)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (its timeout) before the reply


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    policy: Callable[[dict], Reply]
    requests: list[dict]
    embedded: list[str]
    busy: int = 0
    busy_peak: int = 0
    lock: threading.Lock
    stopping: threading.Event
    tokenizer: bool


class ChatCompletionServer:
    """`with ChatCompletionServer(policy) as server:` serves on `server.url` (an OpenAI base URL)."""

    def __init__(self, policy: Callable[[dict], Reply], tokenizer: bool = False):
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.policy = policy
        self._server.tokenizer = tokenizer
        self._server.requests = []
        self._server.embedded = []
        self._server.lock = threading.Lock()
        self._server.stopping = threading.Event()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def requests(self) -> list[dict]:
        return self._server.requests

    @property
    def embedded(self) -> list[str]:
        """Every text sent to `/v1/embeddings`, in order."""
        return self._server.embedded

    @property
    def busy_peak(self) -> int:
        return self._server.busy_peak

    def __enter__(self) -> "ChatCompletionServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


_QUESTION_LINE = re.compile(r"^(\d+)\. \[[^\]]*\] (.*)$", re.MULTILINE)

# Per-question behaviours of AnswerPolicy. The first four decide the answer; the others the reply.
ANSWERS = ("correct", "wrong", "not_answerable", "skip")
ONCE = ("rate_limit", "server_error", "hang")  # the first request that asks the question fails, later ones succeed
ALWAYS = ("malformed", "hang_always", "too_long")


class AnswerPolicy:
    """Answers the numbered questions of a `qtc answer` prompt, found by their text.

    `questions` maps a question's text to (its correct answer, its behaviour): `correct`, `wrong`
    (answers "wrong answer"), `not_answerable`, `skip` (the batch reply leaves it out; asked alone, it is
    answered correctly), `rate_limit` / `server_error` (the first request asking it gets 429 / 500),
    `hang` (the first request asking it waits `hang_seconds` before answering), `hang_always`,
    `malformed` (every reply is broken JSON) or `too_long` (every request asking it gets HTTP 400: the
    context is longer than the model's window). `delay` slows every reply down (a slow local model). `style` shapes well-formed replies: `json` (the object the
    prompt asks for), `fenced` (in a code fence with chatter around), `list` (a bare array of strings).
    """

    def __init__(self, questions: dict[str, tuple[str, str]], style: str = "json", hang_seconds: float = 30.0,
                 delay: float = 0.0):
        self.questions = questions
        self.style = style
        self.hang_seconds = hang_seconds
        self.delay = delay
        self._failed: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    def _answer(self, text: str) -> str:
        answer, behaviour = self.questions[text]
        return {"wrong": "wrong answer", "not_answerable": "not answerable"}.get(behaviour, answer)

    def __call__(self, body: dict) -> Reply:
        asked = [(int(n), text) for n, text in _QUESTION_LINE.findall(message_text(body["messages"][-1]))]
        behaviours = {self.questions[text][1] for _, text in asked}
        with self._lock:
            for behaviour in ONCE:
                first = [(text, behaviour) for _, text in asked
                         if self.questions[text][1] == behaviour and (text, behaviour) not in self._failed]
                if first:
                    self._failed.update(first)
                    return {"rate_limit": Reply(status=429, headers={"Retry-After": "0"}),
                            "server_error": Reply(status=500),
                            "hang": Reply(delay=self.hang_seconds)}[behaviour]
        if "hang_always" in behaviours:
            return Reply(delay=self.hang_seconds)
        if "too_long" in behaviours:
            return Reply(status=400, message=CONTEXT_TOO_LONG)
        if "malformed" in behaviours:
            return Reply('{"answers": [{"question": 1, "answer": ', delay=self.delay)
        kept = [(n, text) for n, text in asked if len(asked) == 1 or self.questions[text][1] != "skip"]
        if self.style == "list":
            return Reply(json.dumps([self._answer(text) for _, text in kept]), delay=self.delay)
        content = json.dumps({"answers": [{"question": n, "answer": self._answer(text)} for n, text in kept]})
        if self.style == "fenced":
            content = f"Sure! Here are my answers:\n```json\n{content}\n```\nHope this helps."
        return Reply(content, delay=self.delay)


class ParaphrasePolicy:
    """Answers `qtc paraphrase` prompts: the rewrite of each question text from `rewrites` (the text
    itself where it has none), as the JSON object the prompt asks for."""

    def __init__(self, rewrites: dict[str, str]):
        self.rewrites = rewrites

    def __call__(self, body: dict) -> Reply:
        original = body["messages"][-1]["content"].rsplit("Question: ", 1)[1].strip()
        return Reply(json.dumps({"paraphrase": self.rewrites.get(original, original)}))
