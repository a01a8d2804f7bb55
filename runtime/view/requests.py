"""Request logs (`qtc answer --log-requests FILE`: each request's messages with its raw reply or error),
read for the report: the request each answer came from, and the steps its log actually showed.
"""

from __future__ import annotations

import re
from pathlib import Path

from qtc.errors import UserError
from qtc.runtime.evaluate.context import Shown
from qtc.runtime.qa.appendlog import read_log

# The heading of a block of a rendered log (runtime/evaluate/context.py): a step, or the state before one.
BLOCK_HEADING = re.compile(r"^(Step|Before step) (\d+)", re.MULTILINE)


def read_requests(paths: list[Path]) -> dict[str, dict]:
    """Every logged request that had a reply, by its id (the answer records' `request`)."""
    requests = {}
    for path in paths:
        if not path.is_file():
            raise UserError(f"{path}: no such request log")
        for where, record in read_log(path).records:
            if not isinstance(record, dict) or not isinstance(record.get("messages"), list):
                raise UserError(f"{where}: not a request of qtc answer --log-requests (no 'messages')")
            if record.get("request"):
                requests[record["request"]] = record
    return requests


def user_text(record: dict) -> str:
    """The text of a logged request's user message (its image parts left out)."""
    content = record["messages"][-1]["content"]
    return content if isinstance(content, str) else "\n".join(
        part["text"] for part in content if part.get("type") == "text")


def logged_steps(record: dict) -> Shown:
    """The steps a logged request's log showed, read from its blocks' headings."""
    actions, states = set(), set()
    for kind, step in BLOCK_HEADING.findall(user_text(record)):
        if kind == "Step":
            actions.add(int(step))
            states.add(int(step))
        else:
            states.add(int(step) - 1)
    return Shown(frozenset(actions), frozenset(states))
