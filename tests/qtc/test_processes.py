"""Processes end with qtc (qtc/processes.py): a child that asked to die with its parent is gone once the
parent is killed outright, and SIGTERM stops `qtc play --jobs 2` as Ctrl-C does, workers included, with
its one-line message. The children these tests signal get default signal handling from the test itself
(the suite may run with SIGINT ignored)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

WAIT_SECONDS = 180  # guards against a hang only: spawned workers import qtc and a game, slow under load


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (Linux's /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry))
    return found


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def until(condition, seconds: float = WAIT_SECONDS) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


def default_signals() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def test_a_child_dies_with_its_parent_killed_outright():
    # The parent forks a child that asks to die with it, prints the child's pid, and waits.
    parent = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import os, sys, time
        from qtc.processes import die_with_parent
        parent = os.getpid()
        child = os.fork()
        if child == 0:
            die_with_parent(parent)
            while True:
                time.sleep(1)
        print(child, flush=True)
        time.sleep(600)
    """)], stdout=subprocess.PIPE, text=True, preexec_fn=default_signals)
    child = int(parent.stdout.readline())
    assert alive(child)
    parent.kill()
    parent.wait()
    assert until(lambda: not alive(child)), "the child outlived its parent"


def test_sigterm_stops_play_jobs_as_ctrl_c_does(tmp_path):
    # The scripted agent's seeds 4 and 5 live to the step limit (README), so that both episodes are still under
    # way when the second worker starts, however slowly (a random agent dies within a second or two).
    run = subprocess.Popen([sys.executable, "-m", "qtc.cli", "play", "crafter", "--agent", "scripted", "--seed", "4",
                            "--episodes", "2", "--max-steps", "1000000", "--jobs", "2", "--quiet", "--out", str(tmp_path)],
                           stderr=subprocess.PIPE, text=True, preexec_fn=default_signals)
    try:
        # Both workers have started an episode (each writes its partial trace as it goes).
        assert until(lambda: len(list(tmp_path.glob("*.partial"))) == 2), "the workers did not start"
        workers = children(run.pid)
        run.send_signal(signal.SIGTERM)
        assert run.wait(WAIT_SECONDS) == 130
    finally:
        run.kill()
    stderr = run.stderr.read()
    assert "interrupted" in stderr and "Traceback" not in stderr, stderr
    assert until(lambda: not any(alive(pid) for pid in workers))


# A query DuckDB would take hours over, read as `qtc sql` reads it (a relation's Arrow table: a call that
# swallows the KeyboardInterrupt of the signal handler and goes on with its query unless it is interrupted).
ENDLESS_QUERY = "SELECT count(*) FROM range(1000000000000) t(i) WHERE i % 7 = 3"


def test_sigterm_or_ctrl_c_during_a_long_query_stops_qtc_sql_at_once(crafter_trace_dir):
    for stop in (signal.SIGTERM, signal.SIGINT):
        # The child signals itself once it has begun (a second or so later the store is loaded and the
        # query under way), so that no signal meets a process still starting.
        run = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
            import os, signal, sys, threading
            signal.signal(signal.SIGINT, signal.default_int_handler)
            from qtc.cli import main
            threading.Timer(3, os.kill, (os.getpid(), {stop.value})).start()
            sys.exit(main(["sql", {ENDLESS_QUERY!r}, {str(crafter_trace_dir)!r}]))
            """)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, preexec_fn=default_signals)
        try:
            assert run.wait(WAIT_SECONDS) == 130, stop
        finally:
            run.kill()
        assert run.stderr.read() == "qtc sql: interrupted\n"


def test_a_failure_that_a_stop_caused_is_reported_as_interrupted(monkeypatch, capsys):
    # A KeyboardInterrupt raised in a spatial primitive reaches generate as DuckDB's error, which names
    # the template that failed: after SIGTERM or Ctrl-C, that is an interruption, exit 130.
    from qtc import cli, processes
    from qtc.commands import sql
    from qtc.errors import UserError

    def failing(args):
        raise UserError("template crafter.x failed to run: Invalid Input Error: ... KeyboardInterrupt")

    monkeypatch.setattr(sql, "run", failing)
    assert cli.main(["sql", "SELECT 1", "none.duckdb"]) == 2
    assert capsys.readouterr().err.startswith("qtc sql: error: template crafter.x failed to run")
    monkeypatch.setattr(processes, "_stopped", [signal.SIGTERM])
    assert cli.main(["sql", "SELECT 1", "none.duckdb"]) == 130
    assert capsys.readouterr().err == "qtc sql: interrupted\n"
