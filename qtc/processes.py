"""Child processes that end with qtc, and SIGTERM taken as Ctrl-C.

A worker process (`qtc play --jobs`, `qtc generate --jobs`) and Jericho's forked object lister ask
Linux to kill them when the process that started them ends (prctl's parent-death signal), so killing
qtc, even with SIGKILL, leaves nothing running. SIGTERM stops a command as Ctrl-C does: it is passed on
to the worker processes as SIGINT and raised here as KeyboardInterrupt. Either interrupts the DuckDB
queries under way on the connections registered with `interruptible`: DuckDB runs the handler while it
works, but some of its calls (a relation's Arrow table, `df()`, `fetchmany()`) swallow the
KeyboardInterrupt and finish their query first, minutes later on a large store.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import weakref
from typing import Iterator

_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def die_with_parent(parent: int) -> None:
    """In a child of process `parent`: be killed when it ends; end now if it already has."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):  # no libc to ask: the worker ends with its task queue instead
            pass
    if os.getppid() != parent:  # the parent ended before the request was made
        os._exit(1)


@contextlib.contextmanager
def interrupts_left_to_parent() -> Iterator[None]:
    """Processes started within ignore Ctrl-C (SIGINT, which a terminal sends its whole group, reaching a
    worker even as it starts), which their parent handles by stopping them. Ctrl-C in this process is
    ignored meanwhile: a process starts in milliseconds."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def stop_pool(executor) -> None:
    """Shut a ProcessPoolExecutor down now: queued work cancelled, workers under way killed, not waited for."""
    processes = list((getattr(executor, "_processes", None) or {}).values())
    manager = getattr(executor, "_executor_manager_thread", None)
    executor.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.terminate()
    for process in processes:
        process.join()
    if manager is not None:  # done with its pipes before the interpreter's exit wakes it (Python 3.11 races)
        manager.join()


_stopped: list[int] = []  # the signals that asked this process to stop
_connections: weakref.WeakSet = weakref.WeakSet()  # DuckDB connections a stop interrupts


def interruptible(con):
    """Register the DuckDB connection `con` (returned) so that Ctrl-C or SIGTERM interrupts its query."""
    _connections.add(con)
    return con


def _interrupted(signum, frame) -> None:
    _stopped.append(signum)
    for con in list(_connections):
        with contextlib.suppress(Exception):  # closed already
            con.interrupt()
    raise KeyboardInterrupt


def _terminated(signum, frame) -> None:
    for child in multiprocessing.active_children():
        if child.pid is not None:
            os.kill(child.pid, signal.SIGINT)
    _interrupted(signum, frame)


def interrupt_on_sigterm() -> None:
    """From now on, SIGTERM stops this process as Ctrl-C does (where it can be set: the main thread), and
    both are remembered (`interrupted`). A Ctrl-C that a process was started to ignore stays ignored."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminated)
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, _interrupted)


def interrupted() -> bool:
    """Whether Ctrl-C or SIGTERM asked this process to stop: a library may catch the KeyboardInterrupt
    raised then and raise something else (DuckDB's 'Query interrupted', a RuntimeError)."""
    return bool(_stopped)
