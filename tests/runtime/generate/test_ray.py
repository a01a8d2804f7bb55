"""`qtc generate --ray ADDRESS` against a real local Ray cluster of 2 CPUs that the test starts: the
shards as Ray tasks give the bytes of one process; a trace that fails in a task, and an address
nothing answers at, are messages (fixtures: conftest.py, the cluster tests/conftest.py's; skipped without
Ray: pip install 'qtc[ray]').

The command runs in a process of its own, as a user runs it: Ray reads its settings (the cluster's
token) from the environment once, when it is imported. It runs in the repository's folder, and the
cluster's workers have qtc installed from a wheel, not editable: Ray puts the driver's folder first on
the workers' sys.path, where a checkout's qtc/ folder (without qtc.runtime) would hide the installed one.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from support.paths import REPO
from support.recordings import SMALL_RUN_FLAGS

pytest.importorskip("ray", reason="Ray is not installed (pip install 'qtc[ray]'): the --ray tests need it")


# A line Ray's C++ core writes to the driver's stderr on its own ("[2026-11-28 10:50:00,123 E 1234 5678]
# task_manager.cc:1545: Failed to push error to driver", on a loaded machine): Ray's, not qtc's message.
RAY_OWN_LINE = re.compile(r"^\[\d{4}-\d\d-\d\d [\d:,]+ [A-Z] \d+ \d+\] \w+\.cc:\d+: .*\n", re.MULTILINE)


def qtc(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "qtc.cli", *args], env={**os.environ, **(env or {})},
                          capture_output=True, text=True, cwd=REPO)


def test_shards_as_ray_tasks_write_the_bytes_of_one_process(tmp_path, ray_cluster, small_traces,
                                                           one_process_output):
    out = tmp_path / "qa.jsonl"
    run = qtc("generate", "--traces", *map(str, reversed(small_traces)), "--out", str(out), "--ray",
              ray_cluster.address, *SMALL_RUN_FLAGS, env=ray_cluster.env)
    assert run.returncode == 0, run.stderr
    assert (out.read_bytes(), out.with_name("qa.summary.json").read_bytes()) == one_process_output


def test_a_trace_that_fails_in_a_task_is_the_message_of_one_process(tmp_path, ray_cluster, broken_traces):
    folder, broken = broken_traces
    runs = [qtc("generate", "--traces", str(folder), "--out", str(tmp_path / "qa.jsonl"), *flags, *SMALL_RUN_FLAGS,
                env=ray_cluster.env) for flags in (["--jobs", "1"], ["--ray", ray_cluster.address])]
    assert [run.returncode for run in runs] == [2, 2]
    messages = [RAY_OWN_LINE.sub("", run.stderr) for run in runs]
    assert messages[0] == messages[1]
    assert messages[0].startswith(f"qtc generate: error: {broken}:5: not valid JSON")


@pytest.mark.parametrize("address, message", [
    ("127.0.0.1:1", "cannot reach the Ray cluster at 127.0.0.1:1: Connection refused"),
    ("head-node", "--ray: expected auto or HOST:PORT (the head node's GCS address), got 'head-node'"),
])
def test_an_address_nothing_answers_at_is_a_message(address, message, crafter_trace_dir, tmp_path):
    run = qtc("generate", "--traces", str(crafter_trace_dir), "--out", str(tmp_path / "qa.jsonl"), "--ray", address)
    assert (run.returncode, run.stderr) == (2, f"qtc generate: error: {message}\n")


@pytest.mark.parametrize("reply", [b"HTTP/1.1 400 Bad Request\r\n\r\n", b""], ids=["http", "silent"])
def test_an_address_where_something_else_listens_is_a_message_not_a_hang(reply, crafter_trace_dir, tmp_path):
    import socket
    import threading

    server = socket.create_server(("127.0.0.1", 0))

    def answer():
        with server:
            connection, _ = server.accept()
            with connection:
                connection.sendall(reply)
                connection.recv(1024)

    threading.Thread(target=answer, daemon=True).start()
    address = f"127.0.0.1:{server.getsockname()[1]}"
    run = qtc("generate", "--traces", str(crafter_trace_dir), "--out", str(tmp_path / "qa.jsonl"), "--ray", address)
    assert (run.returncode, run.stderr) == (2, f"qtc generate: error: --ray {address}: what listens there is not a Ray "
                                               "cluster (it does not speak gRPC); give the head node's GCS address, "
                                               "printed by `ray start --head`\n")


def test_sigterm_after_connecting_stops_the_driver_as_ctrl_c_does(ray_cluster):
    # Ray's driver sets its own SIGTERM handler when it connects (found by the kill campaign: `*** SIGTERM
    # received ***`, exit 1); qtc's is put back. The child sets its handlers as qtc's command line does.
    code = ("import os, signal, ray; from qtc.processes import interrupt_on_sigterm; "
            "from qtc.runtime.generate.ray_cluster import _connect; "
            "signal.signal(signal.SIGINT, signal.default_int_handler); interrupt_on_sigterm(); "
            f"_connect(ray, {ray_cluster.address!r})\n"
            "try:\n    os.kill(os.getpid(), signal.SIGTERM); signal.pause()\n"
            "except KeyboardInterrupt:\n    print('interrupted')")
    done = subprocess.run([sys.executable, "-c", code], env={**os.environ, **ray_cluster.env}, capture_output=True,
                          text=True, cwd=REPO, timeout=300)
    assert (done.returncode, done.stdout) == (0, "interrupted\n"), done.stderr
