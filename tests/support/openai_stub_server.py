"""A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions protocol, for the tests.

`ChatCompletionServer(policy)` answers `POST /v1/chat/completions` with whatever `policy(body)` returns
(a `Reply`: a completion, an error status, or a delay), so the real openai client, its HTTP, our
retries, timeouts, batching and reply parsing are exercised end to end. Every request body is kept in
`server.requests`. `AnswerPolicy` answers `qtc answer` prompts from a table of questions, each with a
behaviour (correct, wrong, not answerable, malformed, rate limited, server error, hang, ...);
`ParaphrasePolicy` answers `qtc paraphrase` prompts from a table of rewrites.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable


@dataclass
class Reply:
    content: str = ""  # the assistant message (for status 200)
    status: int = 200
    delay: float = 0.0  # seconds before replying: a hang when longer than the client's timeout
    headers: dict = field(default_factory=dict)


def _tokens(text: str) -> int:
    return len(text.split())


class _Handler(BaseHTTPRequestHandler):
    server: "_Server"

    def log_message(self, format, *args) -> None:  # keep test output clean
        pass

    def _send(self, status: int, body: dict, headers: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        if not self.path.endswith("/chat/completions"):
            self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}}, {})
            return
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with self.server.lock:
            self.server.requests.append(body)
        reply = self.server.policy(body)
        if reply.delay and self.server.stopping.wait(reply.delay):
            return  # the server is shutting down: drop the hanging request
        try:
            if reply.status != 200:
                self._send(reply.status, {"error": {"message": f"stub status {reply.status}",
                                                    "type": "stub_error", "code": reply.status}}, reply.headers)
                return
            prompt = sum(_tokens(m.get("content") or "") for m in body["messages"])
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
    lock: threading.Lock
    stopping: threading.Event


class ChatCompletionServer:
    """`with ChatCompletionServer(policy) as server:` serves on `server.url` (an OpenAI base URL)."""

    def __init__(self, policy: Callable[[dict], Reply]):
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.policy = policy
        self._server.requests = []
        self._server.lock = threading.Lock()
        self._server.stopping = threading.Event()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def requests(self) -> list[dict]:
        return self._server.requests

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
ALWAYS = ("malformed", "hang_always")


class AnswerPolicy:
    """Answers the numbered questions of a `qtc answer` prompt, found by their text.

    `questions` maps a question's text to (its correct answer, its behaviour): `correct`, `wrong`
    (answers "wrong answer"), `not_answerable`, `skip` (the batch reply leaves it out; asked alone, it is
    answered correctly), `rate_limit` / `server_error` (the first request asking it gets 429 / 500),
    `hang` (the first request asking it waits `hang_seconds` before answering), `hang_always`, or
    `malformed` (every reply is broken JSON). `style` shapes well-formed replies: `json` (the object the
    prompt asks for), `fenced` (in a code fence with chatter around), `list` (a bare array of strings).
    """

    def __init__(self, questions: dict[str, tuple[str, str]], style: str = "json", hang_seconds: float = 30.0):
        self.questions = questions
        self.style = style
        self.hang_seconds = hang_seconds
        self._failed: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    def _answer(self, text: str) -> str:
        answer, behaviour = self.questions[text]
        return {"wrong": "wrong answer", "not_answerable": "not answerable"}.get(behaviour, answer)

    def __call__(self, body: dict) -> Reply:
        asked = [(int(n), text) for n, text in _QUESTION_LINE.findall(body["messages"][-1]["content"])]
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
        if "malformed" in behaviours:
            return Reply('{"answers": [{"question": 1, "answer": ')
        kept = [(n, text) for n, text in asked if len(asked) == 1 or self.questions[text][1] != "skip"]
        if self.style == "list":
            return Reply(json.dumps([self._answer(text) for _, text in kept]))
        content = json.dumps({"answers": [{"question": n, "answer": self._answer(text)} for n, text in kept]})
        if self.style == "fenced":
            content = f"Sure! Here are my answers:\n```json\n{content}\n```\nHope this helps."
        return Reply(content)


class ParaphrasePolicy:
    """Answers `qtc paraphrase` prompts: the rewrite of each question text from `rewrites` (the text
    itself where it has none), as the JSON object the prompt asks for."""

    def __init__(self, rewrites: dict[str, str]):
        self.rewrites = rewrites

    def __call__(self, body: dict) -> Reply:
        original = body["messages"][-1]["content"].rsplit("Question: ", 1)[1].strip()
        return Reply(json.dumps({"paraphrase": self.rewrites.get(original, original)}))
