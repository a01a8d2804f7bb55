"""Chat completions from any OpenAI-compatible endpoint, with retries, and JSON read out of the replies.

The openai client's own retries are turned off so that every retry is ours: rate limits (429), server
errors (5xx) and refused connections are retried with exponential backoff (or after the server's
Retry-After), up to a fixed number of attempts, each retry announced on one line with its cause. A
request that timed out is never sent again: a local server answering one request at a time would still
be generating the first reply, and a second copy would only queue behind it. A request the server
refuses as invalid (HTTP 400 or 422, or a 5xx whose body says the request failed validation, as
llama-cpp-python's server answers) is never sent again as it was: when the refusal names the
response_format, the next dialect of `response_formats` is tried and the refused one is skipped for the
rest of the run. Any other refusal (a bad request, a wrong key, an unknown model) stops at once. Either
way the user gets one line naming the endpoint and the cause.

A reply with status 200 is read as a chat completion by `read_completion`, which trusts nothing in it:
a body that is not a completion (HTML, broken JSON, `message: null`, ...) raises UnusableReply, which
callers may record as a failed answer and go on.
"""

from __future__ import annotations

import base64
import json
import math
import os
import re
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Callable
from urllib.parse import urlparse

from qtc.errors import InvalidOption, UserError

MAX_BACKOFF_SECONDS = 30.0
MAX_RETRY_AFTER_SECONDS = 60.0
CHECK_TIMEOUT_SECONDS = 10.0  # the endpoint check before the first request


# Where servers count tokens with the model's tokenizer, beside the OpenAI API's /v1: (path, the text's
# field, the reply's field: a count, or the tokens themselves).
TOKENIZE_ROUTES = (("/extras/tokenize/count", "input", "count"),  # llama-cpp-python
                   ("/tokenize", "prompt", "count"),  # vLLM
                   ("/tokenize", "content", "tokens"))  # llama.cpp's server


class RequestTimedOut(UserError):
    """A request got no reply within the time limit; it is not sent again."""


class ContextTooLong(UserError):
    """The server refused a request for being longer than the model's context window."""


class UnusableReply(UserError):
    """A reply with status 200 that is not a usable chat completion; its message says why."""


JSON_MODES = ("schema", "object", "off")


def response_formats(json_mode: str, name: str, schema: dict) -> tuple[dict | None, ...]:
    """The response_format dialects `json_mode` asks for, in the order they are tried until the server
    takes one: `schema` sends the JSON schema as OpenAI and vLLM take it (`json_schema`), then as
    llama-cpp-python takes it (`json_object` with a `schema`), then asks for any JSON object, then sends
    none; `object` any JSON object, then none; `off` none."""
    if json_mode not in JSON_MODES:
        raise InvalidOption("json_mode", f"{json_mode!r}: expected one of {', '.join(JSON_MODES)}")
    any_object = {"type": "json_object"}
    return {"schema": ({"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}},
                       {"type": "json_object", "schema": schema}, any_object, None),
            "object": (any_object, None), "off": (None,)}[json_mode]


def _dialect(response_format: dict | None) -> str:
    """A response_format's dialect in words (`json_schema`, `json_object with a schema`, ...)."""
    if response_format is None:
        return "none"
    return str(response_format.get("type")) + (" with a schema" if "schema" in response_format else "")


def _warn(message: str) -> None:
    print(message, file=sys.stderr)


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int
    completion_tokens: int
    request: str  # our id of the request, shared by every answer it gave
    seconds: float


class ChatClient:
    def __init__(self, model: str, base_url: str | None = None, *, timeout: float = 120.0,
                 attempts: int = 6, backoff: float = 1.0, sleep: Callable[[float], None] = time.sleep,
                 warn: Callable[[str], None] = _warn):
        import openai

        for field, value in (("timeout", timeout), ("attempts", attempts)):
            if value <= 0:
                raise InvalidOption(field, f"must be positive, got {value}")
        if base_url is not None and urlparse(base_url).scheme not in ("http", "https"):
            raise InvalidOption("base_url", f"{base_url!r} has no scheme: write it as http://{base_url} "
                                            "(or https://)")
        key = os.environ.get("OPENAI_API_KEY")
        if not key and base_url is None:
            raise InvalidOption("base_url", "is not given and OPENAI_API_KEY is not set: name a server that "
                                            "needs no key, or set the key")
        # A local server needs no key, but the client insists on one.
        self._client = openai.OpenAI(base_url=base_url, timeout=timeout, max_retries=0, api_key=key or "none")
        self.model = model
        self.endpoint = str(self._client.base_url)
        self.timeout = timeout
        self._attempts = attempts
        self._backoff = backoff
        self._sleep = sleep
        self._warn = warn
        self._refused: set[str] = set()  # response_format dialects the server refused: not sent again
        self._refused_lock = threading.Lock()
        self._tokenize_routes = TOKENIZE_ROUTES  # narrowed to the one that answers, or to none

    def count_tokens(self, text: str) -> int | None:
        """How many tokens the server's own tokenizer makes of `text`, or None where it offers none. The
        tokenize routes of llama-cpp-python (`/extras/tokenize/count`), llama.cpp's server and vLLM
        (`/tokenize`) are tried once each, beside the API's path, and the first that answers is kept."""
        for route in self._tokenize_routes:
            count = self._tokenize(route, text)
            if count is not None:
                self._tokenize_routes = (route,)
                return count
        self._tokenize_routes = ()
        return None

    def _tokenize(self, route: tuple[str, str, str], text: str) -> int | None:
        import httpx

        path, field, reply_field = route
        root = self.endpoint.rstrip("/").removesuffix("/v1")
        try:
            reply = httpx.post(root + path, json={"model": self.model, field: text}, timeout=CHECK_TIMEOUT_SECONDS)
            value = reply.json()[reply_field] if reply.status_code == 200 else None
        except (httpx.HTTPError, ValueError, KeyError, TypeError):
            return None
        count = len(value) if isinstance(value, list) else value
        return count if isinstance(count, int) and not isinstance(count, bool) and count >= 0 else None

    def _delay(self, attempt: int, error: Exception) -> float:
        response = getattr(error, "response", None)
        retry_after = response.headers.get("retry-after") if response is not None else None
        try:
            seconds = float(retry_after)
        except (TypeError, ValueError):
            seconds = math.nan
        if 0 <= seconds < math.inf:  # not NaN, negative or infinite
            return min(seconds, MAX_RETRY_AFTER_SECONDS)
        return min(self._backoff * 2 ** attempt, MAX_BACKOFF_SECONDS)

    def _refuse(self, response_format: dict, following: dict | None, error: Exception) -> None:
        """Skip `response_format`'s dialect for the rest of the run, saying so once."""
        with self._refused_lock:
            if _dialect(response_format) in self._refused:
                return
            self._refused.add(_dialect(response_format))
        self._warn(f"{self.endpoint}: the server refused response_format {_dialect(response_format)} "
                   f"({_describe(error)[:200]}); sending {_dialect(following)} from now on (--json-mode chooses)")

    def check(self) -> None:
        """Fail at once, in one line, if the endpoint cannot be reached (nothing listening, no such host):
        one quick request for the model list, where any HTTP reply at all means a server is there."""
        import openai

        try:
            self._client.with_options(timeout=CHECK_TIMEOUT_SECONDS).models.list()
        except openai.APITimeoutError:
            pass  # a server too busy to list its models may still answer; the requests will tell
        except openai.APIConnectionError as error:
            raise UserError(f"{self.endpoint}: cannot connect ({_cause(error)}); is the server running "
                            "and is the URL right?") from None
        except openai.APIError:
            pass

    def complete(self, messages: list[dict], max_tokens: int,
                 formats: tuple[dict | None, ...] = (None,)) -> Completion:
        """The model's reply to `messages`, asked with the first of the response_format dialects
        `formats` (response_formats) that the server has not refused."""
        import openai

        retryable = (openai.RateLimitError, openai.InternalServerError, openai.APIConnectionError)
        failures = 0
        while True:
            usable = [f for f in formats if _dialect(f) not in self._refused] or [formats[-1]]
            response_format = usable[0]
            options = {"response_format": response_format} if response_format else {}
            start = time.perf_counter()
            try:
                reply = self._client.chat.completions.with_raw_response.create(
                    model=self.model, messages=messages, temperature=0, max_tokens=max_tokens, **options)
            except openai.APITimeoutError:
                raise RequestTimedOut(
                    f"{self.endpoint}: no reply within {self.timeout:g}s; the request is not sent again. A "
                    "local server answering one request at a time may still be busy with it for minutes: "
                    "wait for it to finish (or restart the server) before the next run"
                ) from None
            except openai.APIStatusError as error:
                if not _invalid_request(error) and isinstance(error, retryable):
                    failures = self._retry(error, failures)
                    continue
                if _CONTEXT_WINDOW.search(error.message) and not isinstance(error, openai.InternalServerError):
                    raise ContextTooLong(f"{self.endpoint}: {_describe(error)}") from None
                if response_format is not None and len(usable) > 1 and _invalid_request(error) \
                        and _NAMES_FORMAT.search(error.message):
                    self._refuse(response_format, usable[1], error)
                    continue
                raise UserError(f"{self.endpoint}: the server refused the request: {_describe(error)}"
                                + (" (if it does not take this response_format, try --json-mode object or off)"
                                   if response_format else "")) from None
            except retryable as error:  # a connection error
                failures = self._retry(error, failures)
                continue
            except openai.APIError as error:
                raise UnusableReply(f"unusable reply: {error}") from None
            text, prompt_tokens, completion_tokens = read_completion(reply.content)
            return Completion(text, prompt_tokens, completion_tokens, uuid.uuid4().hex[:16],
                              time.perf_counter() - start)

    def _retry(self, error: Exception, failures: int) -> int:
        """Wait before sending a request again after `error` (a rate limit, a server error, no
        connection), or give up after the last attempt; the failures so far."""
        failures += 1
        if failures >= self._attempts:
            raise UserError(f"{self.endpoint}: no answer after {failures} attempts "
                            f"(last: {_describe(error)})") from None
        delay = self._delay(failures - 1, error)
        self._warn(f"{self.endpoint}: {_describe(error)}; {_advice(error)}; "
                   f"retry {failures} of {self._attempts - 1} in {delay:g}s")
        self._sleep(delay)
        return failures

    def embeddings(self, texts: list[str]) -> list[list[float]]:
        """The vectors of `texts`, in order, from the endpoint's `/embeddings` with this client's model (an
        embedding model). Rate limits, server errors and timeouts are retried by the openai client itself
        (up to the attempts given); any failure left is one line naming the endpoint. A server that gives one
        vector per token (llama-cpp-python serving a model without a pooling layer) has them averaged."""
        import openai

        try:
            reply = self._client.with_options(max_retries=self._attempts - 1).embeddings.create(
                model=self.model, input=texts)
        except openai.APIConnectionError as error:
            raise UserError(f"{self.endpoint}: embeddings: cannot connect ({_cause(error)})") from None
        except openai.APIError as error:
            raise UserError(f"{self.endpoint}: embeddings of model {self.model}: {_describe(error)}") from None
        try:
            vectors = [mean_pooled(item.embedding) for item in sorted(reply.data, key=lambda item: item.index)]
        except (TypeError, ValueError):
            raise UserError(f"{self.endpoint}: embeddings of model {self.model}: a reply that is not vectors of "
                            "numbers") from None
        if len(vectors) != len(texts):
            raise UserError(f"{self.endpoint}: embeddings of model {self.model}: {len(vectors)} vector(s) "
                            f"for {len(texts)} text(s)")
        return vectors


MAX_REPLY_DEPTH = 32  # deeper JSON is not a chat completion (nor an answer): it is not read at all
MAX_USAGE_TOKENS = 10 ** 9  # a token count above this is not one


def read_completion(body: bytes) -> tuple[str, int, int]:
    """(the message's text, prompt tokens, completion tokens) of a chat completion's body, or
    UnusableReply saying why it is not one. Content given in parts is joined; a missing or unreadable
    usage counts as 0 tokens."""
    text = body.decode("utf-8", "replace")
    try:
        envelope = json.loads(text)
    except (ValueError, RecursionError):  # ValueError: not JSON, or an integer too long to read
        start = " ".join(text[:60].split())
        raise UnusableReply(f"unusable reply: not JSON ({start!r}{'...' if len(text) > 60 else ''})") from None
    if not isinstance(envelope, dict) or _depth(envelope) > MAX_REPLY_DEPTH:
        raise UnusableReply("unusable reply: not a chat completion object")
    if "choices" not in envelope and isinstance(envelope.get("error"), (dict, str)):
        error = envelope["error"]
        message = error.get("message") if isinstance(error, dict) else error
        raise UnusableReply(f"unusable reply: an error with status 200: {str(message)[:200]}")
    choices = envelope.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise UnusableReply("unusable reply: no choices")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise UnusableReply("unusable reply: the choice has no message")
    content = message.get("content")
    if isinstance(content, list):  # content parts: their text
        content = "".join(part if isinstance(part, str) else part.get("text", "") if isinstance(part, dict) else ""
                          for part in content)
        content = content if isinstance(content, str) else ""
    if content is not None and not isinstance(content, str):
        raise UnusableReply(f"unusable reply: the message's content is a {type(content).__name__}")
    usage = envelope.get("usage") if isinstance(envelope.get("usage"), dict) else {}
    return content or "", _token_count(usage.get("prompt_tokens")), _token_count(usage.get("completion_tokens"))


def _depth(value, limit: int = MAX_REPLY_DEPTH + 1) -> int:
    """How deep `value` nests lists and objects, counted up to `limit` (level by level, not recursively)."""
    depth, level = 0, [value] if isinstance(value, (list, dict)) else []
    while level and depth < limit:
        depth += 1
        level = [child for item in level for child in (item.values() if isinstance(item, dict) else item)
                 if isinstance(child, (list, dict))]
    return depth


def _token_count(value) -> int:
    """A usage field as a count: a whole number of tokens (an integer, or one written as ASCII digits),
    else 0."""
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 10:
        value = int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_USAGE_TOKENS else 0


def mean_pooled(embedding: list) -> list[float]:
    """One text's vector: the embedding as sent, or the mean of its tokens' vectors where the server sent one
    vector per token.

    >>> mean_pooled([1.0, 2.0]), mean_pooled([[1.0, 2.0], [3.0, 6.0]])
    ([1.0, 2.0], [2.0, 4.0])
    """
    if embedding and all(isinstance(token, list) for token in embedding):
        width = len(embedding[0])
        if any(len(token) != width for token in embedding):
            raise ValueError("token vectors of different lengths")
        return [sum(column) / len(embedding) for column in zip(*embedding)]
    if not all(isinstance(value, (int, float)) and not isinstance(value, bool) for value in embedding):
        raise TypeError("not a vector of numbers")
    return [float(value) for value in embedding]


def image_part(png: bytes) -> dict:
    """An image as one part of a message's content: OpenAI's image_url part holding a base64 PNG data URL."""
    return {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(png).decode("ascii")}}


def content_text(content: str | list[dict]) -> str:
    """The text of a message's content: the string itself, or its text parts (images left out)."""
    if isinstance(content, str):
        return content
    return "\n".join(part["text"] for part in content if part.get("type") == "text")


# How a server says it refused a request as invalid: llama-cpp-python answers a request that fails its
# validation with HTTP 500 and pydantic's message; OpenAI and vLLM say invalid_request_error.
_VALIDATION = re.compile(r"validation error|input should be|field required|extra inputs are not permitted|"
                         r"invalid.?request|is not (valid|supported)|not supported|unsupported|unrecognized",
                         re.IGNORECASE)
# A refusal that names the response_format (or one of its types).
_NAMES_FORMAT = re.compile(r"response.?format|json.?schema|json.?object", re.IGNORECASE)


def _invalid_request(error) -> bool:
    """Whether the server refused the request as invalid: sent again as it is, it would fail again."""
    status = getattr(error, "status_code", None)
    return status in (400, 422) or (status is not None and status >= 500 and bool(_VALIDATION.search(error.message)))


# How servers say a prompt is longer than the model's window (OpenAI, vLLM, llama.cpp, Ollama).
_CONTEXT_WINDOW = re.compile(r"context (length|size|window)|maximum.{0,40}tokens|too many tokens|too long",
                             re.IGNORECASE)


def _cause(error: Exception) -> str:
    """The innermost cause of a connection error, which names what went wrong (refused, unknown host)."""
    while error.__cause__ is not None:
        error = error.__cause__
    return str(error) or type(error).__name__


def _advice(error: Exception) -> str:
    import openai

    if isinstance(error, openai.RateLimitError):
        return "rate limited"
    if isinstance(error, openai.InternalServerError):
        return "the server failed"
    return f"cannot connect ({_cause(error)})"


def _describe(error: Exception) -> str:
    """The error on one line (a server's message may span several)."""
    status = getattr(error, "status_code", None)
    text = f"HTTP {status}: {error.message}" if status else str(error) or type(error).__name__
    return " ".join(text.split())


_FENCE_TAG = re.compile(r"[a-zA-Z]*\s*\n?")  # after an opening fence: its language and line break


def strip_fences(text: str) -> str:
    """A reply without Markdown code fences around its content: each pair of fences, left to right,
    gives its content (after the opening fence's language); an unpaired last fence stays. (Split, not a
    regular expression, so that thousands of fences take linear time.)"""
    pieces = text.split("```")
    kept = []
    for i, piece in enumerate(pieces):
        if i % 2 == 0:
            kept.append(piece)
        elif i < len(pieces) - 1:
            kept.append(piece[_FENCE_TAG.match(piece).end():])
        else:
            kept.append("```" + piece)
    return "".join(kept).strip()


@dataclass(frozen=True)
class RepliedJSON:
    values: list  # every JSON object or array read out of the reply, left to right
    broken: bool  # whether the reply's first object or array was cut off or malformed


def json_values(text: str) -> RepliedJSON:
    """The JSON objects and arrays in a reply: the whole reply when it is JSON, else each whole object
    or array found in its text (so a reply cut off in the middle of an array still yields the objects
    before the cut). Values nested deeper than MAX_REPLY_DEPTH are left out, and a value too deep for
    the decoder ends the search (a pathological reply: every later start would be as deep)."""
    text = strip_fences(text)
    decoder = json.JSONDecoder()
    values, position, broken = [], 0, False
    while True:
        starts = [i for i in (text.find("{", position), text.find("[", position)) if i >= 0]
        if not starts:
            return RepliedJSON(values, broken)
        start = min(starts)
        try:
            value, end = decoder.raw_decode(text, start)
        except RecursionError:
            return RepliedJSON(values, broken or not values)
        except ValueError:  # not JSON, or an integer too long to read
            broken = broken or not values
            position = start + 1
            continue
        if _depth(value) <= MAX_REPLY_DEPTH:
            values.append(value)
        position = end
