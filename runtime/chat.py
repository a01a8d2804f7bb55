"""Chat completions from any OpenAI-compatible endpoint, with retries, and JSON read out of the replies.

The openai client's own retries are turned off so that every retry is ours: rate limits (429), server
errors (5xx) and refused connections are retried with exponential backoff (or after the server's
Retry-After), up to a fixed number of attempts, each retry announced on one line with its cause. A
request that timed out is never sent again: a local server answering one request at a time would still
be generating the first reply, and a second copy would only queue behind it. Any other refusal (a bad
request, a wrong key, an unknown model) stops at once. Either way the user gets one line naming the
endpoint and the cause.
"""

from __future__ import annotations

import base64
import json
import os
import re
import sys
import time
import uuid
from dataclasses import dataclass
from typing import Callable
from urllib.parse import urlparse

from qtc.errors import InvalidOption, UserError

MAX_BACKOFF_SECONDS = 30.0
MAX_RETRY_AFTER_SECONDS = 60.0
CHECK_TIMEOUT_SECONDS = 10.0  # the endpoint check before the first request


class RequestTimedOut(UserError):
    """A request got no reply within the time limit; it is not sent again."""


class ContextTooLong(UserError):
    """The server refused a request for being longer than the model's context window."""


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

    def _delay(self, attempt: int, error: Exception) -> float:
        response = getattr(error, "response", None)
        retry_after = response.headers.get("retry-after") if response is not None else None
        try:
            return min(float(retry_after), MAX_RETRY_AFTER_SECONDS)
        except (TypeError, ValueError):
            return min(self._backoff * 2 ** attempt, MAX_BACKOFF_SECONDS)

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

    def complete(self, messages: list[dict], max_tokens: int, response_format: dict | None = None) -> Completion:
        import openai

        retryable = (openai.RateLimitError, openai.InternalServerError, openai.APIConnectionError)
        options = {"response_format": response_format} if response_format else {}
        failures = 0
        while True:
            start = time.perf_counter()
            try:
                reply = self._client.chat.completions.create(
                    model=self.model, messages=messages, temperature=0, max_tokens=max_tokens, **options)
            except openai.APITimeoutError:
                raise RequestTimedOut(
                    f"{self.endpoint}: no reply within {self.timeout:g}s; the request is not sent again, since "
                    "the server may still be generating it (a local server answers one request at a time)"
                ) from None
            except retryable as error:
                failures += 1
                if failures >= self._attempts:
                    raise UserError(f"{self.endpoint}: no answer after {failures} attempts "
                                    f"(last: {_describe(error)})") from None
                delay = self._delay(failures - 1, error)
                self._warn(f"{self.endpoint}: {_describe(error)}; {_advice(error)}; "
                           f"retry {failures} of {self._attempts - 1} in {delay:g}s")
                self._sleep(delay)
                continue
            except openai.BadRequestError as error:
                if _CONTEXT_WINDOW.search(error.message):
                    raise ContextTooLong(f"{self.endpoint}: {_describe(error)}") from None
                raise UserError(f"{self.endpoint}: the server refused the request: {_describe(error)}"
                                + (" (if it does not support response_format, try --json-mode object or off)"
                                   if response_format else "")) from None
            except openai.APIStatusError as error:
                raise UserError(f"{self.endpoint}: the server refused the request: {_describe(error)}") from None
            except openai.APIError as error:  # a reply that is not a chat completion
                raise UserError(f"{self.endpoint}: unusable reply: {error}") from None
            usage = reply.usage
            choices = reply.choices or []
            return Completion(
                text=(choices[0].message.content or "") if choices else "",
                prompt_tokens=usage.prompt_tokens if usage else 0,
                completion_tokens=usage.completion_tokens if usage else 0,
                request=uuid.uuid4().hex[:16], seconds=time.perf_counter() - start)


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
    status = getattr(error, "status_code", None)
    return f"HTTP {status}: {error.message}" if status else str(error) or type(error).__name__


_FENCE = re.compile(r"```[a-zA-Z]*\s*\n?(.*?)```", re.DOTALL)


def strip_fences(text: str) -> str:
    """A reply without Markdown code fences around its content."""
    return _FENCE.sub(lambda m: m.group(1), text).strip()


@dataclass(frozen=True)
class RepliedJSON:
    values: list  # every JSON object or array read out of the reply, left to right
    broken: bool  # whether the reply's first object or array was cut off or malformed


def json_values(text: str) -> RepliedJSON:
    """The JSON objects and arrays in a reply: the whole reply when it is JSON, else each whole object
    or array found in its text (so a reply cut off in the middle of an array still yields the objects
    before the cut)."""
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
        except json.JSONDecodeError:
            broken = broken or not values
            position = start + 1
            continue
        values.append(value)
        position = end
