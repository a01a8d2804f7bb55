"""Commands that run other commands: one subcommand run in-process, and a pipeline of them whose stages
are checkpointed, so that a rerun resumes at the first stage not yet done (`qtc run`; `qtc demo` runs
commands too).

A stage is a qtc command with its arguments, the files it reads and the files it writes. The pipeline
keeps, in a JSON file beside the outputs, each stage's arguments, a digest of what it read and whether
it finished. A stage is done when it finished with the same arguments on the same inputs and its
outputs are all there; it is then reused, not run. A stage whose inputs changed (an earlier stage ran
again) runs again, its old outputs first moved under `previous/`; a finished stage asked with other
arguments is redone only when the user says so (`force`), its outputs moved aside likewise (one whose
outputs are cheap to make, a score or a page, is simply redone): nothing already written is lost. A stage that did not finish (a crash, Ctrl-C) runs again with the same
arguments, and the resumable commands (`play`, `answer`) resume where they stopped.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from qtc.errors import UserError

STATE_FILE = "run.json"
PREVIOUS = "previous"  # where the outputs of a stage run again are moved


def command_line(module: ModuleType, argv: list[str]) -> str:
    """The stage's command as a user would type it."""
    return f"qtc {module.COMMAND} {shlex.join(argv)}"


def run_command(module: ModuleType, argv: list[str]) -> None:
    """Run a qtc subcommand in-process, parsed by its own parser, after printing it as a user would type it."""
    print(f"\n$ {command_line(module, argv)}", flush=True)
    parser = argparse.ArgumentParser(prog=f"qtc {module.COMMAND}")
    module.add_arguments(parser)
    status = module.run(parser.parse_args(argv))
    if status:
        raise UserError(f"qtc {module.COMMAND} exited with status {status}")


@dataclass(frozen=True)
class Stage:
    name: str  # unique within a pipeline: the key of its record in the state file
    module: ModuleType  # the qtc command it runs
    argv: list[str]
    inputs: tuple[Path, ...] = ()  # files or folders it reads, whose contents decide whether it is done
    outputs: tuple[Path, ...] = ()  # what it writes; all there when it is done
    # Whether its outputs cost something to make again (episodes, a QA set, a model's answers): run with
    # other options than the finished run before, it stops the pipeline unless forced. Others (scores, a
    # page) are made again whenever their options change.
    guarded: bool = True


def digest(paths: tuple[Path, ...]) -> str:
    """A digest of the contents of `paths` (a folder: every file under it, by relative name), wherever they are."""
    total = hashlib.sha256()
    for path in paths:
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for file in files:
            if file.name.startswith(".") and file.name.endswith(".tmp"):
                continue  # a write under way (qtc.files.atomic_path)
            total.update((str(file.relative_to(path)) if path.is_dir() else "").encode() + b"\0")
            with open(file, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    total.update(block)
            total.update(b"\0")
    return total.hexdigest()


@dataclass
class Plan:
    """What a pipeline will do with each stage: 'reuse', 'run' (never run, or resumed after a stop) or
    'redo' (run again, its old outputs moved aside), and why."""
    actions: list[tuple[Stage, str, str]] = field(default_factory=list)


class Pipeline:
    """Stages run in order in `folder`, each checkpointed in folder/run.json."""

    def __init__(self, folder: Path, stages: list[Stage]):
        names = [stage.name for stage in stages]
        if len(set(names)) != len(names):
            raise UserError(f"two stages of one run share a name: {', '.join(sorted(names))}")
        self.folder = folder
        self.stages = stages
        self._state_path = folder / STATE_FILE
        self._state = self._read_state()

    def _read_state(self) -> dict:
        if not self._state_path.exists():
            return {}
        try:
            state = json.loads(self._state_path.read_text(encoding="utf-8"))
            records = state["stages"]
            if not isinstance(records, dict):
                raise TypeError
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
            raise UserError(f"{self._state_path} is not the state file of a qtc run; give another folder, "
                            "or remove it to start this run afresh") from None
        return records

    def _write_state(self) -> None:
        from qtc.files import write_text_atomic

        write_text_atomic(self._state_path, json.dumps({"stages": self._state}, indent=1) + "\n")

    def _action(self, stage: Stage, inputs: str | None) -> tuple[str, str]:
        record = self._state.get(stage.name)
        if record is None:
            return "run", "not run yet"
        if record["argv"] != stage.argv:
            return ("redo-options" if stage.guarded else "redo"), "asked with other options than before"
        if not record["finished"]:
            return "run", "stopped before its end: resumed"
        if inputs is not None and record["inputs"] != inputs:
            return "redo", "its inputs changed since it ran"
        missing = [str(path) for path in stage.outputs if not path.exists()]
        if missing:
            return "redo", f"{', '.join(missing)} missing"
        return "reuse", "done with the same options and inputs"

    def plan(self) -> Plan:
        """What a run would do now. Inputs an earlier stage will write are not read yet: a stage after one
        that runs is planned as redone."""
        plan = Plan()
        earlier_runs = False
        for stage in self.stages:
            inputs = None if earlier_runs else digest(tuple(p for p in stage.inputs if p.exists()))
            action, why = self._action(stage, inputs)
            if earlier_runs and action == "reuse":
                action, why = "redo", "if an earlier stage that runs changes its inputs"
            plan.actions.append((stage, action, why))
            earlier_runs = earlier_runs or action != "reuse"
        return plan

    def run(self, force: bool = False) -> None:
        """Run every stage not done, in order. A stage asked with other options than the finished run before
        stops the run unless `force`."""
        for number, stage in enumerate(self.stages, start=1):
            inputs = digest(tuple(p for p in stage.inputs if p.exists()))
            action, why = self._action(stage, inputs)
            heading = f"[{number}/{len(self.stages)}] {stage.name}"
            if action == "reuse":
                print(f"{heading}: reused ({why})", flush=True)
                continue
            if action == "redo-options":
                if not force:
                    previous = command_line(stage.module, self._state[stage.name]["argv"])
                    raise UserError(f"{self.folder} holds stage '{stage.name}' run with other options "
                                    f"({previous}); give --force to run it again from there (its outputs "
                                    f"are moved to {self.folder / PREVIOUS}/), or another folder")
                action = "redo"
            if action == "redo":
                self._move_aside(stage)
            print(f"{heading}: {why}", flush=True)
            self._state[stage.name] = {"argv": stage.argv, "inputs": inputs, "finished": False}
            self._write_state()
            run_command(stage.module, stage.argv)
            self._state[stage.name]["finished"] = True
            self._write_state()

    def _move_aside(self, stage: Stage) -> None:
        """The stage's outputs moved under previous/<time>/, kept, not deleted."""
        present = [path for path in stage.outputs if path.exists()]
        if not present:
            return
        target = self.folder / PREVIOUS / time.strftime("%Y%m%d-%H%M%S")
        target.mkdir(parents=True, exist_ok=True)
        for path in present:
            path.rename(target / path.name)
        print(f"moved the earlier outputs of '{stage.name}' to {target}/", flush=True)
