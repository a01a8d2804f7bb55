"""A real model behind llama-cpp-python's OpenAI-compatible server on 127.0.0.1, for the optional
real-model tests (QTC_REAL_MODEL=1; docs/evaluation.md says what to install)."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Iterator

START_SECONDS = 120  # loading a small model on two cores


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def serving(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except (urllib.error.URLError, OSError):
        return False


@contextlib.contextmanager
def llama_cpp_server(module: str, log: Path, *arguments: str) -> Iterator[str]:
    """Run the server module (`llama_cpp.server`) with `arguments` (the model, its chat format, ...) on a
    free port of 127.0.0.1; yield its base URL once it answers, and stop it afterwards."""
    port = free_port()
    with log.open("w") as stream:  # a file, not a pipe: an unread pipe would fill and stall the server
        server = subprocess.Popen([sys.executable, "-m", module, "--host", "127.0.0.1", "--port", str(port),
                                   *arguments], stdout=stream, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}/v1"
        deadline = time.monotonic() + START_SECONDS
        while not serving(f"{url}/models"):
            assert server.poll() is None and time.monotonic() < deadline, \
                f"llama-cpp-python's server did not start: {log.read_text()[-2000:]}"
            time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)
