"""The trace store: loading, derived tables, malformed input, the CLI, resume and interruption."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb
import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.hypothesis_profiles import examples
from support.strategies import crafter_episodes, jericho_episodes, write_episodes

from qtc.cli import main
from qtc.dsl import schema
from qtc.errors import UserError
from qtc.runtime.record.agents import Choice
from qtc.runtime.record.crafter import CrafterSession
from qtc.runtime.record.episodes import EpisodeSpec, RecordingCrashed, record_episode, record_episodes
from qtc.runtime.trace import store
from qtc.runtime.trace.store import load_traces, open_store
from qtc.runtime.trace.format import EpisodeWriter, is_complete, read_episode


def test_every_schema_table_exists_with_its_columns(trace_db):
    for table in schema.TABLES:
        columns = [row[0] for row in trace_db.execute(f"DESCRIBE {table.sql_name}").fetchall()]
        assert columns == [c.name for c in table.all_columns]


def test_loaded_rows_match_the_traces(trace_db, jericho_trace_dir):
    episode = read_episode(next(jericho_trace_dir.glob("*.jsonl")))
    eid = episode.header["episode_id"]
    assert trace_db.execute("SELECT count(*) FROM jericho_steps WHERE episode_id = ?", [eid]).fetchone()[0] \
        == len(episode.steps)
    # zork1's walkthrough takes the egg up the tree at step 4.
    assert trace_db.execute("SELECT step, change FROM jericho_item_events WHERE item = 'jewel-encrusted egg' "
                            "ORDER BY step LIMIT 1").fetchone() == (4, "gained")
    entered = trace_db.execute("SELECT room FROM jericho_room_events WHERE step = 0 AND change = 'entered'")
    assert entered.fetchone()[0] == episode.header["initial"]["room"]
    moves = trace_db.execute("SELECT count(*) FROM jericho_steps WHERE moved").fetchone()[0]
    assert trace_db.execute("SELECT count(*) FROM jericho_room_events WHERE step > 0").fetchone()[0] == 2 * moves
    kinds = dict(trace_db.execute("SELECT kind, count(*) FROM vocab WHERE game = 'crafter' GROUP BY kind").fetchall())
    assert kinds["material"] == 12 and kinds["achievement"] == 22 and kinds["action"] == 17
    assert trace_db.execute("SELECT count(*) FROM crafter_inventory WHERE step = 0").fetchone()[0] == 16


def test_a_database_file_reopens_read_only(tmp_path, crafter_trace_dir):
    db = tmp_path / "t.duckdb"
    assert main(["load", str(crafter_trace_dir), "--db", str(db)]) == 0
    con = open_store(db)
    assert con.execute("SELECT count(*) FROM episodes").fetchone()[0] == 1
    with pytest.raises(duckdb.Error):
        con.execute("DELETE FROM episodes")


def _copy(source_dir: Path, tmp_path: Path) -> tuple[Path, list[str]]:
    source = next(source_dir.glob("*.jsonl"))
    target = tmp_path / source.name
    shutil.copy(source, target)
    return target, target.read_text().splitlines()


def _write(path: Path, lines: list[str]) -> None:
    path.write_text("\n".join(lines) + "\n")


def _edit(line: str, **changes) -> str:
    record = json.loads(line)
    for key, value in changes.items():
        if value is KeyError:
            del record[key]
        else:
            record[key] = value
    return json.dumps(record)


def _load_error(path: Path) -> str:
    with pytest.raises(UserError) as error:
        load_traces(duckdb.connect(), [path])
    return str(error.value)


def test_truncated_file(tmp_path, jericho_trace_dir):
    path, lines = _copy(jericho_trace_dir, tmp_path)
    _write(path, lines[:-1] + [lines[-1][:40]])
    cut = lines[-1][:40]
    try:
        json.loads(cut)
    except json.JSONDecodeError as error:
        reason = f"{error.msg} at column {error.colno}"
    assert _load_error(path) == f"{path}:{len(lines)}: not valid JSON ({reason}); the file may be truncated"


def test_missing_lines(tmp_path, jericho_trace_dir):
    path, lines = _copy(jericho_trace_dir, tmp_path)
    _write(path, lines[:-2])
    assert _load_error(path) == (f"{path}:1: field 'n_steps': header says {len(lines) - 1} steps, "
                                 f"the file holds {len(lines) - 3} (truncated?)")


def test_missing_field(tmp_path, crafter_trace_dir):
    path, lines = _copy(crafter_trace_dir, tmp_path)
    _write(path, [lines[0], _edit(lines[1], terrain_after=KeyError), *lines[2:]])
    assert _load_error(path) == f"{path}:2: missing field 'terrain_after'"


def test_wrong_type(tmp_path, crafter_trace_dir):
    path, lines = _copy(crafter_trace_dir, tmp_path)
    step = json.loads(lines[3])
    step["inventory"]["wood"] = "3"
    _write(path, [*lines[:3], json.dumps(step), *lines[4:]])
    assert _load_error(path) == f"{path}:4: field 'inventory.wood': expected integer, got string"


def test_unknown_format_version(tmp_path, jericho_trace_dir):
    path, lines = _copy(jericho_trace_dir, tmp_path)
    _write(path, [_edit(lines[0], format_version=99), *lines[1:]])
    assert _load_error(path) == (f"{path}:1: field 'format_version': unsupported version 99 "
                                 "(this qtc reads version 1)")


def test_a_bad_file_loads_nothing(tmp_path, jericho_trace_dir, crafter_trace_dir):
    bad, lines = _copy(jericho_trace_dir, tmp_path)
    _write(bad, [lines[0], _edit(lines[1], moved="yes"), *lines[2:]])
    con = duckdb.connect()
    with pytest.raises(UserError, match=r":2: field 'moved': expected boolean, got string"):
        load_traces(con, [crafter_trace_dir, bad])
    assert con.execute("SELECT count(*) FROM information_schema.tables").fetchone()[0] == 0


def test_a_load_killed_while_it_makes_the_tables_leaves_none(tmp_path, crafter_trace_dir):
    """SIGKILL between two of load's CREATE TABLE statements (the kills of the deep run, seed 20261215):
    the database is left with no table, and loading again fills it, not refused as an earlier qtc's."""
    killed_midway = ("import os, signal, sys\n"
                     "from qtc.dsl import schema\n"
                     "statements = schema.ddl()\n"
                     "def ddl():\n"
                     "    yield from statements[:3]\n"
                     "    os.kill(os.getpid(), signal.SIGKILL)\n"
                     "schema.ddl = ddl\n"
                     "from qtc.cli import main\n"
                     "main(sys.argv[1:])\n")
    db = tmp_path / "store.duckdb"
    argv = ["load", str(crafter_trace_dir), "--db", str(db)]
    assert subprocess.run([sys.executable, "-c", killed_midway, *argv]).returncode == -signal.SIGKILL
    with duckdb.connect(str(db)) as con:
        assert con.execute("SELECT count(*) FROM duckdb_tables()").fetchone()[0] == 0
    assert main(argv) == 0


def test_cli_reports_errors_without_traceback(tmp_path, crafter_trace_dir, capsys):
    path, lines = _copy(crafter_trace_dir, tmp_path)
    _write(path, [_edit(lines[0], env="nethack"), *lines[1:]])
    assert main(["load", str(path), "--db", str(tmp_path / "x.duckdb")]) == 2
    err = capsys.readouterr().err
    assert err == (f"qtc load: error: {path}:1: field 'env': unknown environment 'nethack' "
                   "(expected one of jericho, crafter, textworld)\n")
    assert main(["sql", "SELECT nope FROM episodes", str(crafter_trace_dir)]) == 2
    assert capsys.readouterr().err.startswith("qtc sql: error: SQL error: Binder Error")


def test_a_database_without_the_trace_tables_is_refused(tmp_path, capsys):
    path = tmp_path / "other.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE notes (a INTEGER)")
    assert main(["generate", "--traces", str(path), "--out", str(tmp_path / "qa.jsonl")]) == 2
    assert capsys.readouterr().err == (f"qtc generate: error: {path}: not a trace store (it has no table episodes): "
                                       "make one with `qtc load`\n")


@pytest.mark.parametrize("reward, message", [
    ("1e400", "field 'reward': inf is not a finite number"),
    ("NaN", "field 'reward': nan is not a finite number"),
    ("[" * 5000 + "]" * 5000, "JSON nested too deeply to be a trace record"),
])
def test_a_number_out_of_range_or_deep_nesting_is_refused_with_its_line(crafter_trace_dir, tmp_path, capsys,
                                                                          reward, message):
    path, lines = _copy(crafter_trace_dir, tmp_path)
    record = json.loads(lines[3])
    text = json.dumps(record).replace(f'"reward": {json.dumps(record["reward"])}', f'"reward": {reward}', 1)
    _write(path, [*lines[:3], text, *lines[4:]])
    assert main(["load", str(path), "--db", str(tmp_path / "x.duckdb")]) == 2
    assert capsys.readouterr().err == f"qtc load: error: {path}:4: {message}\n"


def test_cli_sql_prints_a_table(crafter_trace_dir, capfd):
    assert main(["sql", "SELECT episode_id, ended_by FROM episodes", str(crafter_trace_dir)]) == 0
    out = capfd.readouterr().out
    assert "crafter-scripted-s0" in out and "step_limit" in out and "varchar" in out  # DuckDB's rendering, with types


def test_cli_sql_runs_every_statement_in_every_format(crafter_trace_dir, tmp_path, capfd):
    query = "SET VARIABLE k = 2; SELECT episode_id, getvariable('k') AS k FROM episodes; SELECT 1 AS one"
    assert main(["sql", query, str(crafter_trace_dir), "--format", "csv"]) == 0
    assert capfd.readouterr().out == "episode_id,k\ncrafter-scripted-s0,2\none\n1\n"
    assert main(["sql", "SELECT step, action FROM crafter_steps ORDER BY step", str(crafter_trace_dir),
                 "--format", "json", "--limit", "2"]) == 0
    captured = capfd.readouterr()
    assert [json.loads(line)["step"] for line in captured.out.splitlines()] == [1, 2]
    assert "more rows not shown" in captured.err
    assert main(["sql", "SELECT 'a|b' AS x", str(crafter_trace_dir), "--format", "markdown"]) == 0
    assert capfd.readouterr().out == "| x |\n|---|\n| a\\|b |\n\n"
    assert main(["sql", str(tmp_path / "missing.sql"), str(crafter_trace_dir)]) == 2
    assert f"{tmp_path / 'missing.sql'}: no such file" in capfd.readouterr().err


class Stopping:
    """Plays noop, then raises `error` at step `at` (Ctrl-C or a crash)."""
    name = "test"

    def __init__(self, at: int, error: BaseException):
        self.at, self.error, self.calls = at, error, 0

    def choose(self, state):
        self.calls += 1
        if self.calls == self.at:
            raise self.error
        return Choice("noop")


def test_interrupt_and_crash_leave_marked_episodes_and_a_kill_a_partial_one(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        record_episode(CrafterSession(1, "test", 20), Stopping(5, KeyboardInterrupt()), tmp_path, 20)
    path = tmp_path / "crafter-test-s1.jsonl"
    episode = read_episode(path)
    assert (episode.header["ended_by"], episode.header["n_steps"]) == ("interrupted", 4)
    assert not is_complete(path) and not list(tmp_path.glob("*.partial"))
    with pytest.raises(RecordingCrashed):
        record_episode(CrafterSession(2, "test", 20), Stopping(3, RuntimeError("crash")), tmp_path, 20)
    assert read_episode(tmp_path / "crafter-test-s2.jsonl").header["ended_by"] == "crashed"
    # A recorder killed outright (no exception to catch) leaves the stream of the steps it wrote.
    writer = EpisodeWriter(tmp_path, "crafter-test-s3", {"episode_id": "crafter-test-s3"})
    writer.write_step({"step": 1})
    writer.write_step({"step": 2})
    partial = tmp_path / "crafter-test-s3.jsonl.partial"
    assert len(partial.read_text().splitlines()) == 3  # the marked header and two steps
    report = load_traces(duckdb.connect(), [tmp_path])
    assert (report.episodes, report.partial_skipped) == (2, [partial])
    with pytest.raises(UserError, match="partial recording"):
        read_episode(partial)


def test_recording_many_episodes_resumes(tmp_path):
    made = []

    def spec(seed: int) -> EpisodeSpec:
        def make():
            made.append(seed)
            return CrafterSession(seed, "test", 5), Stopping(0, RuntimeError())
        return EpisodeSpec(f"crafter-test-s{seed}", make)

    recorded, skipped = record_episodes([spec(1), spec(2)], tmp_path, 5, show_progress=False)
    assert (len(recorded), skipped, made) == (2, [], [1, 2])
    recorded, skipped = record_episodes([spec(1), spec(2), spec(3)], tmp_path, 5, show_progress=False)
    assert (len(recorded), len(skipped), made) == (1, 2, [1, 2, 3])


def _tables(con) -> dict[str, list[tuple]]:
    # The vocabulary is inserted DISTINCT, in no particular order.
    return {t.sql_name: con.execute(f"SELECT * FROM {t.sql_name}{' ORDER BY ALL' if t.per_game else ''}").fetchall()
            for t in schema.TABLES}


def test_the_careful_reader_loads_what_duckdb_reads(monkeypatch, crafter_trace_dir, jericho_trace_dir):
    """Every table, row for row and in order, is the same whether DuckDB reads the step lines as
    written or they go through the careful reader (Python's json) first."""
    fast = duckdb.connect()
    load_traces(fast, [crafter_trace_dir, jericho_trace_dir])
    monkeypatch.setattr(store, "read_text", lambda path: None)
    careful = duckdb.connect()
    load_traces(careful, [crafter_trace_dir, jericho_trace_dir])
    assert _tables(fast) == _tables(careful)


def test_lines_only_pythons_json_reads_load_as_it_reads_them(tmp_path, jericho_trace_dir):
    """A key given twice (Python keeps the last), CRLF line ends and keys in another order: DuckDB is
    not trusted with them, and the file loads as Python's json reads it."""
    path, lines = _copy(jericho_trace_dir, tmp_path)
    reordered = json.dumps(dict(reversed(json.loads(lines[2]).items())))
    _write(path, [lines[0], lines[1][:-1] + ', "action": "twice"}', reordered, *lines[3:]])
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    con = duckdb.connect()
    load_traces(con, [path])
    expected = [json.loads(line) for line in lines[1:]]
    expected[0]["action"] = "twice"
    columns = [c.name for c in schema.JERICHO_STEPS.recorded_columns]
    assert con.execute(f"SELECT {', '.join(columns)} FROM jericho_steps ORDER BY step").fetchall() == \
        [tuple(step[c] for c in columns) for step in expected]


def test_what_only_duckdb_reads_is_refused_with_its_place(tmp_path, jericho_trace_dir):
    """DuckDB's reader takes a trailing comma and NaN spelled its ways, even in a field nobody reads;
    Python's json does not, and neither does the loader."""
    path, lines = _copy(jericho_trace_dir, tmp_path)
    for edited in (lines[2][:-1] + ', "extra": [1,]}', lines[2][:-1] + ', "extra": nan}'):
        _write(path, [*lines[:2], edited, *lines[3:]])
        assert _load_error(path).startswith(f"{path}:3: not valid JSON (")


def test_values_the_store_cannot_hold_are_refused_with_their_place(tmp_path, jericho_trace_dir, crafter_trace_dir):
    path, lines = _copy(jericho_trace_dir, tmp_path)
    _write(path, [lines[0], _edit(lines[1], score=2**63), *lines[2:]])
    assert _load_error(path) == f"{path}:2: field 'score': integer out of range (64 bits)"
    path, lines = _copy(crafter_trace_dir, tmp_path)
    _write(path, [lines[0], _edit(lines[1], achievements=["collect_wood", "collect_cloud"]), *lines[2:]])
    assert _load_error(path) == f"{path}:2: field 'achievements[1]': unknown collection 'collect_cloud'"


# ---- DuckDB's reading against the careful reader, on corrupted traces of both games ----

JSON_VALUES = (st.none() | st.booleans() | st.integers(-2**65, 2**65) | st.floats() | st.text(max_size=4)
               | st.lists(st.integers(0, 3) | st.text(max_size=2), max_size=2)
               | st.dictionaries(st.text(max_size=3), st.integers(0, 3), max_size=2))
NON_NUMBERS = ("nan", "NaN", "-NaN", "Infinity", "-Infinity", "inf", "-INF", "infinity", "1e3", "-0", "1.0",
               "18446744073709551616")
TEXT_EDITS = (",", '"x":1,', " ", "\r", "\x85", "\u2028", "\\", '"\\ud800"')


@st.composite
def places(draw, value) -> tuple:
    """A path to a member or item inside a JSON value, each level as likely as the one below it."""
    path: tuple = ()
    while isinstance(value, (dict, list)) and value and (not path or draw(st.booleans())):
        key = draw(st.sampled_from(list(value) if isinstance(value, dict) else range(len(value))))
        path, value = path + (key,), value[key]
    return path


NUMBER = re.compile(r"(?<=[:,\[])-?[0-9]+(?:\.[0-9]+)?")


@st.composite
def lenient(draw, line: str) -> str:
    """The line with what only some JSON readers take, or read otherwise: a trailing comma, NaN or
    Infinity spelled one of many ways, or a member given twice."""
    closing = [i for i, c in enumerate(line) if c in "]}" and i and line[i - 1] not in "[{"]
    numbers = list(NUMBER.finditer(line))
    kind = draw(st.sampled_from(["comma", "number", "twice"]))
    if kind == "comma" and closing:
        at = draw(st.sampled_from(closing))
        return line[:at] + "," + line[at:]
    if kind == "number" and numbers:
        number = draw(st.sampled_from(numbers))
        return line[:number.start()] + draw(st.sampled_from(NON_NUMBERS)) + line[number.end():]
    key = draw(st.sampled_from(sorted(json.loads(line))))
    return line[:-1] + f", {json.dumps(key)}: {json.dumps(draw(JSON_VALUES))}}}"


@st.composite
def corrupted(draw, text: str) -> str:
    """The text of a trace with one value replaced, one member removed, a piece of text put in or cut,
    or something only some JSON readers take; anywhere in any line, nested members included."""
    lines = text.splitlines()
    number = draw(st.integers(0, len(lines) - 1))
    kind = draw(st.sampled_from(["value", "remove", "text", "cut", "lenient", "lenient"]))
    if kind in ("value", "remove"):
        record = json.loads(lines[number])
        path = draw(places(record))
        *parents, last = path
        holder = record
        for key in parents:
            holder = holder[key]
        if kind == "remove":
            del holder[last]
        else:
            holder[last] = draw(JSON_VALUES)
        lines[number] = json.dumps(record, ensure_ascii=draw(st.booleans()))
    elif kind == "lenient":
        lines[number] = draw(lenient(lines[number]))
    else:
        at = draw(st.integers(0, len(lines[number])))
        cut = draw(st.integers(0, 3)) if kind == "cut" else 0
        lines[number] = lines[number][:at] + (draw(st.sampled_from(TEXT_EDITS)) if kind == "text" else "") \
            + lines[number][at + cut:]
    return "\n".join(lines) + "\n"


def _outcome(path: Path):
    """What loading gives: every table, or the error."""
    con = duckdb.connect()
    try:
        load_traces(con, [path])
    except UserError as error:
        return str(error)
    return _tables(con)


@examples(40)
@given(data=st.data(), env=st.sampled_from(["jericho", "crafter"]))
def test_a_corrupted_trace_loads_as_the_careful_reader_loads_it(data, env):
    """Whatever the corruption, DuckDB's reading refuses the file with the careful reader's message, or
    loads exactly what the careful reader (Python's json and the field specs) loads."""
    episodes = jericho_episodes(max_steps=4) if env == "jericho" else crafter_episodes(max_steps=4)
    with tempfile.TemporaryDirectory() as directory:
        (path,) = write_episodes([data.draw(episodes, label="episode")], Path(directory))
        path.write_text(data.draw(corrupted(path.read_text(encoding="utf-8")), label="corrupted"), encoding="utf-8")
        fast = _outcome(path)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(store, "read_text", lambda path: None)
            careful = _outcome(path)
        assert fast == careful


def test_the_rooms_table_holds_the_rooms_a_question_can_name_and_older_traces_load_without_unvisited_ones(
        tmp_path, jericho_trace_dir, capsys):
    """An episode's rooms are those it entered and those of the game it did not, by object number and
    display name, each name once; a trace recorded before unvisited_rooms existed loads with its visited
    rooms only, and qtc load says what it lacks. Rooms are no vocab kind (older headers' room names
    joined nothing)."""
    con = open_store(jericho_trace_dir)
    assert con.execute("SELECT count(DISTINCT display_name) = count(*), count(*) FILTER (NOT visited) > 0 "
                       "FROM jericho_rooms").fetchone() == (True, True)
    assert con.execute("SELECT count(*) FROM vocab WHERE kind = 'room'").fetchone()[0] == 0
    [trace] = sorted(jericho_trace_dir.glob("*.jsonl"))
    lines = trace.read_text().split("\n")
    header = json.loads(lines[0])
    del header["unvisited_rooms"]
    header["vocab"]["room"] = ["West of House", "Loud"]  # older headers' room names, which joined nothing
    (tmp_path / trace.name).write_text("\n".join([json.dumps(header), *lines[1:]]))
    assert main(["load", str(tmp_path / trace.name), "--db", str(tmp_path / "old.duckdb")]) == 0
    assert "recorded before the header field 'unvisited_rooms' existed" in capsys.readouterr().out
    old = duckdb.connect(str(tmp_path / "old.duckdb"))
    assert old.execute("SELECT bool_and(visited), count(*) FROM jericho_rooms").fetchone() == (True, len(header["rooms"]))
    assert old.execute("SELECT count(*) FROM vocab WHERE kind = 'room'").fetchone()[0] == 0

def test_a_store_or_corpus_derived_by_an_earlier_qtc_is_refused_not_read(tmp_path, crafter_trace_dir, jericho_trace_dir,
                                                                         capsys):
    """Its tables and columns may be this qtc's while what they hold is not (0.8.0: room titles in
    introduced_items): every load stamps the store with `DERIVATIONS`, and a store or corpus of another
    stamp is refused by the commands that read it and by a load that would add to it."""
    database, corpus = tmp_path / "old.duckdb", tmp_path / "old-corpus"
    assert main(["load", "--db", str(database), str(crafter_trace_dir)]) == 0
    assert main(["load", "--parquet", str(corpus), str(crafter_trace_dir)]) == 0
    assert main(["sql", "SELECT count(*) FROM episodes", str(database)]) == 0
    con = duckdb.connect(str(database))
    con.execute("COMMENT ON TABLE episodes IS 'qtc derivations 1'")
    con.close()
    marker = corpus / "qtc-corpus.json"
    marker.write_text(marker.read_text().replace(f'"derivations": {store.DERIVATIONS}', '"derivations": 1'))
    capsys.readouterr()
    for command in (["sql", "SELECT count(*) FROM episodes", str(database)],
                    ["load", "--db", str(database), str(jericho_trace_dir)],
                    ["sql", "SELECT count(*) FROM episodes", str(corpus)]):
        assert main(command) == 2, command
        assert "made by an earlier qtc, whose tables derived from the traces differ from this one's" in \
            capsys.readouterr().err
    assert duckdb.connect(str(database), read_only=True).execute("SELECT count(*) FROM episodes").fetchall() == [(1,)]
