"""One side of bench/bench_compiler.py: a process that loads the traces into a store, compiles the
standard library with the qtc it imports (the working tree, or an earlier revision put first on
PYTHONPATH) and times the statements it is asked for, one line per request on stdin:

    ids             -> the ids of the templates this qtc compiles, on one line
    run ID          -> "ID SECONDS ROWS": the template's statement as generate runs it (cap, seed 42)
    long N          -> "ok": the store becomes one Crafter episode of N steps (long_episode below)
    quit

The statement is `qtc.dsl.compile.statement(compiled, cap)` where the tree has it (the relational IR),
else the tree's `compiled.sql`, which honours the cap variable itself (the emitter before the IR).
"""

from __future__ import annotations

import itertools
import sys
import time

from qtc.dsl import schema
from qtc.dsl.library import load_library
from qtc.dsl.sql import ident
from qtc.runtime.trace.store import open_store

try:
    from qtc.dsl.compile import statement
except ImportError:  # a revision before the IR: its compiled SQL is the statement
    statement = None


def long_episode(traces: list[str], n_steps: int):
    """A store holding one Crafter episode of `n_steps`: the recorded Crafter episodes' steps one after
    another (cycling through them), renumbered."""
    con = open_store(*traces)
    episodes = [e for e, in con.execute("SELECT episode_id FROM episodes WHERE env = 'crafter' ORDER BY episode_id")
                .fetchall()]
    lengths = {e: con.execute("SELECT coalesce(max(step), 0) FROM crafter_steps WHERE episode_id = ?", [e]).fetchone()[0]
               for e in episodes}
    offset, parts = 0, []
    for episode in itertools.cycle([e for e in episodes if lengths[e]]):  # as often as the length needs
        parts.append((episode, offset))
        offset += lengths[episode]
        if offset >= n_steps:
            break
    stepped = [t for t in schema.TABLES if t.env == "crafter" and t.has_step]
    for table in stepped:
        columns = [c.name for c in table.columns]
        selects = " UNION ALL ".join(
            f"SELECT 'long' AS episode_id, {', '.join(f'step + {off} AS step' if c == 'step' else ident(c) for c in columns)} "
            f"FROM {table.sql_name} WHERE episode_id = '{episode}' AND (step >= 1 OR {off} = 0)"
            for episode, off in parts)
        con.execute(f"INSERT INTO {table.sql_name} (episode_id, {', '.join(map(ident, columns))}) "
                    f"SELECT * FROM ({selects}) WHERE step <= {n_steps}")
    first = parts[0][0]
    con.execute(f"INSERT INTO crafter_map_init SELECT 'long', x, y, material FROM crafter_map_init WHERE episode_id = '{first}'")
    con.execute(f"INSERT INTO episodes SELECT 'long', env, game, seed, agent, {n_steps}, 'step_limit', NULL, NULL, "
                f"format_version FROM episodes WHERE episode_id = '{first}'")
    for table in [*stepped, schema.CRAFTER_MAP_INIT, schema.EPISODES]:
        con.execute(f"DELETE FROM {table.sql_name} WHERE episode_id <> 'long'")
    return con


def main() -> None:
    templates, cap, traces = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    library = {c.id: c for c in load_library([templates]).compiled}
    con = open_store(*traces)

    def prepare(c) -> None:
        c.execute("SET VARIABLE qtc_seed = 42")
        c.execute(f"SET VARIABLE qtc_max_candidates = {cap}")
    prepare(con)
    sql = {i: statement(c, cap) if statement else c.sql for i, c in library.items()}
    for line in sys.stdin:
        request = line.split()
        if request[0] == "ids":
            print(" ".join(sorted(sql)), flush=True)
        elif request[0] == "run":
            started = time.perf_counter()
            rows = len(con.execute(sql[request[1]]).fetchall())
            print(request[1], time.perf_counter() - started, rows, flush=True)
        elif request[0] == "long":
            con.close()
            con = long_episode(traces, int(request[1]))
            prepare(con)
            print("ok", flush=True)
        else:
            return


if __name__ == "__main__":
    main()
