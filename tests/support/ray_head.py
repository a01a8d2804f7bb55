"""A local Ray cluster for the tests and bench/bench_scale.py: `LocalRayCluster(cpus)` starts one (its
own temporary folder, no usage reporting, token authentication with a token of its own) in a child
process, which prints the cluster's address, and returns at once: reading `address` waits for the
cluster, so the caller does other work while it starts; `stop()` ends that process, and Ray's processes
with it.
Its workers run the Python that started it: `regular_install(folder)` gives one with qtc installed as pip
installs it from a wheel (not editable), as on a real cluster's nodes.

Run as a script it is that child process: it starts the cluster, prints the address and waits for
SIGTERM.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import site
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

START_SECONDS = 90  # a cold start on a busy 2-core machine takes about 10 s
STOP_SECONDS = 30


class LocalRayCluster:
    def __init__(self, cpus: int = 2, python: str = sys.executable):
        # What both the cluster and a driver connecting to it need: the same token, and nothing sent out.
        self.env = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": uuid.uuid4().hex}
        self.process = subprocess.Popen([python, __file__, str(cpus)], env={**os.environ, **self.env},
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                        start_new_session=True)

    @functools.cached_property
    def address(self) -> str:
        """The cluster's address (its GCS's), once it has started."""
        line = _read_line(self.process, START_SECONDS)
        if not line:
            self.stop()
            raise RuntimeError(f"the local Ray cluster did not start within {START_SECONDS} s")
        return line.strip()

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)  # its own session: only what it started
            self.process.wait()


def regular_install(folder: Path) -> Path:
    """A virtual environment in `folder` holding qtc as a wheel installs it (setuptools' build_py lays out the
    wheel's files: qtc/ with dsl/, runtime/... mapped in), and this Python's packages for the dependencies:
    their folders are listed in a .pth file, which adds them to sys.path without running their own .pth
    files, so an editable install of qtc there is not seen. Returns its Python."""
    from support.paths import PACKAGE_DIRS, REPO  # not at the top: this file also runs as a script

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder / "venv")], check=True)
    python = folder / "venv" / "bin" / "python"
    packages = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                   capture_output=True, text=True, check=True).stdout.strip())
    dependencies = [p for p in [*site.getsitepackages(), *sys.path] if p.endswith("-packages")]
    (packages / "dependencies.pth").write_text("\n".join(dict.fromkeys(dependencies)) + "\n")

    source = folder / "source"  # a copy, so that the build's own files stay out of the repository
    source.mkdir()
    for name in ["pyproject.toml", "README.md"]:
        shutil.copy(REPO / name, source / name)
    for name in PACKAGE_DIRS.values():
        shutil.copytree(REPO / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-c", "from setuptools import setup; setup()", "-q", "build_py",
                    "--build-lib", str(packages)], cwd=source, check=True, capture_output=True)
    return python


def _read_line(process: subprocess.Popen, seconds: float) -> str:
    import selectors

    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(seconds):
            return ""
    return process.stdout.readline()


def _serve(cpus: int) -> None:
    import ray

    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    folder = tempfile.mkdtemp(prefix="qtc-ray-")  # sockets, logs: the cluster's own, removed after it
    ray.init(num_cpus=cpus, include_dashboard=False, _temp_dir=folder, logging_level="ERROR")
    print(ray.get_runtime_context().gcs_address, flush=True)
    signal.sigwait({signal.SIGTERM})
    ray.shutdown()
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    _serve(int(sys.argv[1]))
