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
