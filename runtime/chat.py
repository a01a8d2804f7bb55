"""Chat completions from any OpenAI-compatible endpoint, with retries, and JSON read out of the replies.

The openai client's own retries are turned off so that every retry is ours: rate limits (429), server
errors (5xx), timeouts and refused connections are retried with exponential backoff (or after the
server's Retry-After), up to a fixed number of attempts; any other refusal (a bad request, a wrong key,
an unknown model) stops at once. Either way the user gets one line naming the endpoint and the cause.
"""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from dataclasses import dataclass
from typing import Callable

from qtc.errors import InvalidOption, UserError

MAX_BACKOFF_SECONDS = 30.0
MAX_RETRY_AFTER_SECONDS = 60.0


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int
    completion_tokens: int
    request: str  # our id of the request, shared by every answer it gave
    seconds: float


class ChatClient:
    def __init__(self, model: str, base_url: str | None = None, *, timeout: float = 120.0,
                 attempts: int = 6, backoff: float = 1.0, sleep: Callable[[float], None] = time.sleep):
        import openai

        for field, value in (("timeout", timeout), ("attempts", attempts)):
            if value <= 0:
                raise InvalidOption(field, f"must be positive, got {value}")
        key = os.environ.get("OPENAI_API_KEY")
        if not key and base_url is None:
            raise InvalidOption("base_url", "is not given and OPENAI_API_KEY is not set: name a server that "
                                            "needs no key, or set the key")
        # A local server needs no key, but the client insists on one.
        self._client = openai.OpenAI(base_url=base_url, timeout=timeout, max_retries=0, api_key=key or "none")
        self.model = model
        self.endpoint = str(self._client.base_url)
        self._attempts = attempts
        self._backoff = backoff
        self._sleep = sleep

    def _delay(self, attempt: int, error: Exception) -> float:
        response = getattr(error, "response", None)
        retry_after = response.headers.get("retry-after") if response is not None else None
        try:
            return min(float(retry_after), MAX_RETRY_AFTER_SECONDS)
        except (TypeError, ValueError):
            return min(self._backoff * 2 ** attempt, MAX_BACKOFF_SECONDS)

    def complete(self, messages: list[dict], max_tokens: int) -> Completion:
        import openai

        retryable = (openai.RateLimitError, openai.InternalServerError, openai.APITimeoutError,
                     openai.APIConnectionError)
        failures = 0
        while True:
            start = time.perf_counter()
            try:
                reply = self._client.chat.completions.create(
                    model=self.model, messages=messages, temperature=0, max_tokens=max_tokens)
            except retryable as error:
                failures += 1
                if failures >= self._attempts:
                    raise UserError(f"{self.endpoint}: no answer after {failures} attempts "
                                    f"(last: {_describe(error)})") from None
                self._sleep(self._delay(failures - 1, error))
                continue
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
