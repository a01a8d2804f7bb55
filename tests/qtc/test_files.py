"""Atomic writes: the whole new file or the old one, with the permissions the umask gives."""

from __future__ import annotations

import os
import stat

import pytest

from qtc.files import atomic_path, write_text_atomic


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_a_written_file_has_the_mode_the_umask_gives(tmp_path, umask, mode):
    previous = os.umask(umask)
    try:
        write_text_atomic(tmp_path / "out" / "qa.jsonl", "{}\n")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "out" / "qa.jsonl").stat().st_mode) == mode


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "qa.jsonl"
    path.write_text("old\n")
    with pytest.raises(RuntimeError), atomic_path(path) as temporary:
        temporary.write_text("half")
        raise RuntimeError("interrupted")
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["qa.jsonl"]


def test_a_writer_killed_outright_leaves_a_temporary_the_next_write_removes(tmp_path):
    """A real process, killed with SIGKILL while its file is half written; another writer's file stays."""
    import signal
    import subprocess
    import sys

    path = tmp_path / "qa.jsonl"
    script = ("import sys, time\nfrom qtc.files import atomic_path\n"
              f"with atomic_path({str(path)!r}) as t:\n    t.write_text('half')\n    print('writing', flush=True)\n"
              "    time.sleep(60)\n")
    writer = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline() == "writing\n"
        writer.send_signal(signal.SIGKILL)
    finally:
        writer.wait(timeout=30)
    (orphan,) = tmp_path.glob(".qa.jsonl.*.tmp")
    alive = tmp_path / f".qa.jsonl.{os.getpid()}.x.tmp"  # a writer still at work (this process)
    alive.write_text("")
    write_text_atomic(path, "new\n")
    assert not orphan.exists() and alive.exists() and path.read_text() == "new\n"
