"""The Crafter fixture episode as a trace store, shared by the evaluation tests of a module."""

import pytest

from qtc.runtime.trace.store import open_store


@pytest.fixture(scope="module")
def crafter_db(crafter_trace_dir):
    con = open_store(crafter_trace_dir)
    yield con
    con.close()
