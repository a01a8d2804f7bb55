"""`qtc compile` end to end, as a user runs it, and the standard templates run on hand-made traces."""

import subprocess
import sys
from pathlib import Path

import duckdb

from support.handmade import make_db
from support.paths import REPO as ROOT
from qtc.dsl.library import load_library

TEMPLATES = ROOT / "templates"


def qtc(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "qtc.cli", *args], cwd=cwd, capture_output=True, text=True)


def test_compile_the_standard_library():
    result = qtc("compile", "templates/")
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[-1].endswith("ok, 0 failed")
    ok_lines = [line for line in lines if line.startswith("OK ")]
    categories = {(line.split()[2], line.split()[3]) for line in ok_lines}
    for env in ("jericho", "crafter"):
        for category in ("single_hop", "multi_hop", "induction", "spatial", "temporal", "logical"):
            assert (env, category) in categories


def test_every_library_template_runs_on_handmade_traces():
    con = make_db()
    library = load_library([TEMPLATES])
    assert library.ok
    results = {}
    for compiled in library.compiled:
        relation = con.sql(compiled.sql)
        results[compiled.id] = [dict(zip(relation.columns, row)) for row in relation.fetchall()]
    gains = {(r["p_item"], r["p_k"], r["adversarial"]): r["answer"] for r in results["jericho.item_gain_step"]}
    assert gains == {("lamp", 1, False): 4, ("lamp", -1, False): 4, ("leaflet", 1, False): 1,
                     ("leaflet", -1, False): 1, ("sword", 1, True): None, ("sword", -1, True): None}
    after = {(r["p_item"], r["p_delta"]): r["answer"] for r in results["jericho.after_gain_action"] if not r["adversarial"]}
    assert after == {("leaflet", 1): "north", ("leaflet", 2): "east", ("leaflet", 3): "take lamp",
                     ("leaflet", 4): "west", ("leaflet", 5): "drop leaflet", ("lamp", 1): "west", ("lamp", 2): "drop leaflet"}
    assert [(r["answer"], r["evidence"]) for r in results["jericho.fullest_inventory_step"]] == [(4, [4])]
    assert {r["p_room"]: r["answer"] for r in results["jericho.room_visit_step"]} == {20: 5, 21: 3}
    assert [r["answer"] for r in results["crafter.attack_count"]] == [1]
    assert {r["p_t"]: r["answer"] for r in results["crafter.inventory_at"]} == {t: ["wood"] for t in range(3, 9)}


def test_errors_are_printed_with_positions_and_exit_1(tmp_path):
    bad = tmp_path / "bad.qtpl"
    bad.write_text("template crafter.bad {\n  env crafter\n  category single_hop\n  answer_type step\n"
                   "  param t: steps.step\n  question \"{{ t }}\"\n  answer steps[$t].stepp\n  evidence $t\n}\n")
    result = qtc("compile", str(bad))
    assert result.returncode == 1
    assert "FAIL  crafter.bad  1 error" in result.stdout
    assert f"{bad}:7:20: error: unknown column 'stepp' in steps" in result.stderr
    assert "= hint: did you mean 'step'?" in result.stderr
    assert "Traceback" not in result.stderr


def test_bad_paths_and_ids_are_user_errors(tmp_path):
    result = qtc("compile", str(tmp_path / "nowhere"))
    assert result.returncode == 2 and "no such file or folder" in result.stderr and "Traceback" not in result.stderr
    result = qtc("compile", "templates/", "--explain", "crafter.nope")
    assert result.returncode == 2 and "no compiled template 'crafter.nope'" in result.stderr


def test_explain_prints_the_sql_alone_on_stdout():
    result = qtc("compile", "templates/crafter", "--explain", "crafter.action_at")
    assert result.returncode == 0
    assert "-- qtc template crafter.action_at" in result.stdout and "WITH h_" in result.stdout
    assert "OK    crafter.action_at" in result.stderr and "templates:" in result.stderr
    # Only SQL on stdout: DuckDB reads it as one statement (the IR lines are comments), with a store's
    # tables, as printed: without qtc_max_candidates set (its default once overflowed INT64).
    con = make_db()
    (statement,) = con.extract_statements(result.stdout)
    assert con.sql(statement.query).fetchall()


def test_select_picks_templates_by_id(tmp_path):
    result = qtc("compile", "templates/", "--select", "jericho.choice*", "--select", "crafter.action_at",
                 "--emit-sql", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert sorted(p.stem for p in tmp_path.glob("*.sql")) == ["crafter.action_at", "jericho.choice_first_gain_after",
                                                             "jericho.choice_room_before"]
    assert "3 templates: 3 ok" in result.stdout
    result = qtc("compile", "templates/", "--select", "nethack.*")
    assert result.returncode == 2 and "no template id matches --select nethack.*" in result.stderr


def test_emitted_sql_runs_as_is_against_a_database_file(tmp_path):
    database = tmp_path / "traces.duckdb"
    con = make_db()
    con.execute(f"ATTACH '{database}' AS disk")
    con.execute("COPY FROM DATABASE memory TO disk")
    con.close()
    result = qtc("compile", "templates/", "--emit-sql", str(tmp_path / "sql"))
    assert result.returncode == 0, result.stderr
    files = sorted((tmp_path / "sql").glob("*.sql"))
    assert len(files) == len(load_library([TEMPLATES]).compiled)
    disk = duckdb.connect(str(database), read_only=True)
    disk.execute("SET VARIABLE qtc_horizon = 3")
    relation = disk.sql((tmp_path / "sql" / "jericho.item_gain_step.sql").read_text())
    rows = [dict(zip(relation.columns, row)) for row in relation.fetchall()]
    assert {"episode_id": "j1", "p_item": "leaflet", "p_k": 1, "adversarial": False, "answer": 1,
            "accepted": [1], "evidence": [1]} in rows
