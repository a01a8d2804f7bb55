"""The shards as tasks on a Ray cluster (`qtc generate --ray ADDRESS`; pip install 'qtc[ray]').

Each task is shards.run_shard: it loads its episodes from the trace files, by path, into a DuckDB of
its own, runs the compiled statements and returns Arrow tables; this process (the driver) samples and
writes as one process does. So a worker needs qtc installed and the trace files at the same absolute
paths (a shared file system); nothing else travels but the statements and the rows (docs/scale.md).
"""

from __future__ import annotations

import os
import signal
import socket
import tempfile
import threading
from dataclasses import replace
from pathlib import Path

from qtc.errors import UserError

from .runners import OnDone, Rows, join_shards
from .shards import Request, Settings, plan_shards, read_episodes, run_shard

CONNECT_SECONDS = 5  # how long the address is tried before it is called unreachable (Ray itself retries for minutes)
# A Ray cluster's address (GCS, or the Ray Client server) speaks gRPC, so HTTP/2: sent a client's preface,
# it answers with a SETTINGS frame (RFC 9113, 3.4). Anything else listening there would leave ray.init
# waiting for minutes.
HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
HTTP2_SETTINGS = 4  # the frame type, the fourth byte of the frame header
RETRIES = 1  # a task whose worker died (killed, out of memory) is run once more before the run stops


class RayCluster:
    """Each shard a Ray task of one CPU, as many shards as the cluster has CPUs (at least)."""
    fetch_ahead = True

    def __init__(self, address: str, sources: tuple[Path, ...], settings: Settings):
        try:
            import ray
        except ImportError:
            raise UserError("--ray needs Ray, which is not installed: pip install 'qtc[ray]'") from None
        self.ray = ray
        self.episodes, files = read_episodes(sources)
        _check_reachable(address)
        try:
            _connect(ray, address)
        except (ConnectionError, RuntimeError, ValueError) as error:
            raise UserError(f"cannot connect to the Ray cluster at {address}: {str(error).splitlines()[0]}") from None
        cpus = int(ray.cluster_resources().get("CPU", 1))
        self.shards = plan_shards(files, cpus)
        self.how = f"on Ray ({len(self.shards)} shards)"
        self.settings = replace(settings, threads=1)
        self.task = ray.remote(num_cpus=1, max_retries=RETRIES)(run_shard)

    def rows(self, requests: list[Request], on_done: OnDone | None = None) -> Rows:
        ray = self.ray
        tasks = {}
        for number, shard in enumerate(self.shards):
            own = [request for request in requests if shard.runs(request)]
            if own:
                files = tuple(str(Path(f).resolve()) for f in shard.files)  # workers start elsewhere
                tasks[self.task.remote(files, self.settings, own)] = number
        results: dict[int, Rows] = {}
        pending = list(tasks)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            number = tasks[done[0]]
            try:
                results[number] = ray.get(done[0])
            except ray.exceptions.RayTaskError as error:
                if isinstance(error.cause, UserError):
                    raise UserError(str(error.cause)) from None
                if isinstance(error.cause, ray.exceptions.RaySystemError):  # the task's arguments not read
                    raise UserError(f"the Ray workers cannot read qtc's tasks ({str(error.cause).splitlines()[0]}): "
                                    "every node needs qtc installed, the version this driver runs") from None
                raise
            except ray.exceptions.RayError as error:  # the worker or its node died, twice
                raise UserError(f"a Ray worker died running shard {number + 1} of {len(self.shards)} "
                                f"({type(error).__name__}), also when retried: run again, or give the "
                                f"workers more memory") from None
            if on_done:
                on_done(sum(self.shards[number].runs(request) for request in requests))
        return join_shards(results, requests)

    def close(self) -> None:
        self.ray.shutdown()  # this driver's connection; the cluster stays up


def _connect(ray, address: str) -> None:
    """ray.init from an empty folder. Ray puts the driver's working directory first on every worker's
    sys.path (for a script's own modules): run in a checkout's folder, the workers would import its qtc/
    folder (the command line only: pyproject.toml maps dsl/ and runtime/ into the package) instead of the
    installed qtc, and fail with "No module named 'qtc.runtime'". Ray's driver sets its own handler of
    SIGTERM (a log line, exit 1), put back to qtc's, which stops the run as Ctrl-C does."""
    home = os.getcwd()
    handlers = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    with tempfile.TemporaryDirectory(prefix="qtc-ray-driver-") as empty:
        os.chdir(empty)
        try:
            ray.init(address=address, logging_level="ERROR", log_to_driver=False)
        finally:
            os.chdir(home)
            if threading.current_thread() is threading.main_thread():
                for number, handler in handlers.items():
                    if handler is not None:
                        signal.signal(number, handler)


def _check_reachable(address: str) -> None:
    """A UserError if nothing listens at host:port (auto is left to Ray, which finds the cluster)."""
    if address == "auto":
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise UserError(f"--ray: expected auto or HOST:PORT (the head node's GCS address), got {address!r}")
    try:
        connection = socket.create_connection((host, int(port)), timeout=CONNECT_SECONDS)
    except OSError as error:
        raise UserError(f"cannot reach the Ray cluster at {address}: {error.strerror or error}") from None
    with connection:
        try:
            connection.sendall(HTTP2_PREFACE)
            answer = connection.recv(9)
        except OSError:  # silent, or closed on us
            answer = b""
    if len(answer) < 4 or answer[3] != HTTP2_SETTINGS:
        raise UserError(f"--ray {address}: what listens there is not a Ray cluster (it does not speak gRPC); "
                        "give the head node's GCS address, printed by `ray start --head`")
