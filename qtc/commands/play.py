"""Record episodes of a Jericho story file or of Crafter, one trace file per episode.

Episodes are seeded: episode i uses seed SEED+i, for the game and the agent alike, and is written
to OUT/<game>-<agent>-s<seed>.jsonl (format: docs/trace-format.md). Episodes already complete in
OUT are skipped, so an interrupted run resumes where it stopped. Ctrl-C finishes the episode under
way as `ended_by: interrupted`; it is recorded again on the next run. A step that fails (the game or
the agent raised) finishes it as `ended_by: crashed`, the steps before it kept, and stops the run with
one line naming the step and the error (exit status 2); it too is recorded again on the next run. Crafter's `--frames` keeps every
screen beside the trace (OUT/<id>.frames.npz), written with it; `--vision` shows the llm agent the
screen and the HUD line instead of the text view. --jobs N records N episodes at a time, each in a
worker process (default 1; resuming works the same).
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

from qtc.errors import UserError

COMMAND = "play"
HELP = "record Jericho or Crafter episodes as trace files"
EXAMPLES = """examples:
  qtc play jericho --rom ../shared/roms/zork1.z5 --agent walkthrough --out traces/
  qtc play jericho --rom ../shared/roms/advent.z5 --agent random --seed 1 --episodes 5 --max-steps 100
  qtc play crafter --agent scripted --seed 0 --episodes 10 --max-steps 200 --out traces/
  qtc play crafter --agent scripted --episodes 1000 --jobs 8 --out traces/
  qtc play crafter --agent llm --base-url http://localhost:8000/v1 --model qwen --max-steps 100
  qtc play crafter --agent scripted --frames --episodes 5 --out traces/
  qtc play crafter --agent llm --vision --frames --base-url http://localhost:8000/v1 --model qwen-vl
"""

AGENTS = {"jericho": ("walkthrough", "random", "llm"), "crafter": ("scripted", "random", "llm")}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game", choices=sorted(AGENTS), help="jericho or crafter")
    parser.add_argument("--rom", type=Path, help="Jericho story file (.z3/.z5/.z8)")
    parser.add_argument("--agent", help="walkthrough, random or llm (Jericho); scripted, random or llm "
                                        "(Crafter); default: walkthrough / scripted")
    parser.add_argument("--seed", type=int, help="seed of the first episode (default: Jericho's "
                                                 "walkthrough seed, or 0)")
    parser.add_argument("--episodes", type=int, default=1, help="number of episodes (default 1)")
    parser.add_argument("--max-steps", type=int, default=200, help="step limit per episode (default 200)")
    parser.add_argument("--out", type=Path, default=Path("traces"), help="output folder (default traces/)")
    parser.add_argument("--no-valid-actions", action="store_true",
                        help="Jericho: do not run the valid-action finder (the column is null); faster")
    parser.add_argument("--unordered-objects", action="store_true",
                        help="Crafter: keep Crafter's set-ordered chunk objects (runs then differ from process "
                             "to process; see docs/trace-format.md)")
    parser.add_argument("--frames", action="store_true",
                        help="Crafter: keep every step's 64x64 screen beside the trace, <id>.frames.npz "
                             "(0.4-0.9 KB a step by day, about 6 KB at night), for --context frames or "
                             "mosaic in qtc answer")
    parser.add_argument("--vision", action="store_true",
                        help="Crafter, llm agent: show the model the screen (an image) and the HUD line "
                             "instead of the text view (a vision model)")
    parser.add_argument("--base-url", help="llm agent: OpenAI-compatible API base URL")
    parser.add_argument("--model", help="llm agent: model name")
    parser.add_argument("--jobs", type=int, default=1, metavar="N",
                        help="episodes recorded at a time, each by a worker process (default 1)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def _agent_name(args: argparse.Namespace) -> str:
    agent = args.agent or AGENTS[args.game][0]
    if agent not in AGENTS[args.game]:
        raise UserError(f"unknown agent '{agent}' for {args.game} (choose from {', '.join(AGENTS[args.game])})")
    if agent == "llm" and not (args.base_url and args.model):
        raise UserError("the llm agent needs --base-url and --model")
    if args.game != "crafter" and (args.frames or args.vision):
        raise UserError("--frames and --vision are for Crafter (Jericho has no screen)")
    if args.vision and agent != "llm":
        raise UserError("--vision is for the llm agent")
    return agent


def _jericho_specs(args: argparse.Namespace, agent_name: str):
    from qtc.runtime.record.jericho import resolve_seed
    from qtc.runtime.record.episodes import EpisodeSpec
    from qtc.runtime.trace.format import episode_id

    if args.rom is None:
        raise UserError("qtc play jericho needs --rom PATH (a Jericho story file)")
    if not args.rom.is_file():
        raise UserError(f"{args.rom}: no such story file")
    if not args.no_valid_actions:
        print(f"the valid-action finder takes 1-3 s a step (up to {args.max_steps} steps an episode: "
              f"{args.max_steps}-{3 * args.max_steps} s); --no-valid-actions skips it",
              file=sys.stderr, flush=True)
    first = resolve_seed(args.rom, args.seed)
    for seed in range(first, first + args.episodes):
        yield EpisodeSpec(episode_id(args.rom.stem, agent_name, seed),
                          functools.partial(_jericho_episode, args, agent_name, seed))


# The sessions and agents are made by module functions, so that a worker process can make them (--jobs).
def _jericho_episode(args: argparse.Namespace, agent_name: str, seed: int):
    from qtc.runtime.record.agents import LLMAgent, RandomAgent, WalkthroughAgent
    from qtc.runtime.record.jericho import JerichoSession

    session = JerichoSession(args.rom, seed, agent_name, not args.no_valid_actions)
    if agent_name == "walkthrough":
        agent = WalkthroughAgent(session.env.get_walkthrough())
    elif agent_name == "random":
        agent = RandomAgent(seed)
    else:
        agent = LLMAgent(args.base_url, args.model, "jericho")
    return session, agent


def _crafter_specs(args: argparse.Namespace, agent_name: str):
    from qtc.runtime.record.episodes import EpisodeSpec
    from qtc.runtime.trace.format import episode_id

    first = 0 if args.seed is None else args.seed
    for seed in range(first, first + args.episodes):
        yield EpisodeSpec(episode_id("crafter", agent_name, seed),
                          functools.partial(_crafter_episode, args, agent_name, seed))


def _crafter_episode(args: argparse.Namespace, agent_name: str, seed: int):
    from qtc.dsl import crafter_data
    from qtc.runtime.record.agents import LLMAgent, RandomAgent, ScriptedCrafterAgent
    from qtc.runtime.record.crafter import CrafterSession, vision_prompt

    session = CrafterSession(seed, agent_name, args.max_steps, not args.unordered_objects, args.frames)
    if agent_name == "scripted":
        agent = ScriptedCrafterAgent(seed)
    elif agent_name == "random":
        agent = RandomAgent(seed, crafter_data.ACTIONS)
    else:
        agent = LLMAgent(args.base_url, args.model, "crafter", crafter_data.ACTIONS,
                         vision_prompt(crafter_data.ACTIONS) if args.vision else None)
    return session, agent


def run(args: argparse.Namespace) -> int:
    from qtc.runtime.record.episodes import record_episodes

    if args.episodes < 1 or args.max_steps < 1 or args.jobs < 1:
        raise UserError("--episodes, --max-steps and --jobs must be at least 1")
    agent_name = _agent_name(args)
    specs = (_jericho_specs if args.game == "jericho" else _crafter_specs)(args, agent_name)
    recorded, skipped = record_episodes(specs, args.out, args.max_steps, show_progress=not args.quiet,
                                        jobs=args.jobs)
    print(f"recorded {len(recorded)} episode(s), skipped {len(skipped)} already complete, in {args.out}")
    if args.frames:
        from qtc.runtime.trace.frames import frames_path

        lacking = [path.name for path in skipped if not frames_path(path).exists()]
        if lacking:
            print(f"{len(lacking)} complete episode(s) were recorded without frames and keep none: "
                  f"{', '.join(lacking)}; delete them to record them again with frames", file=sys.stderr)
    return 0
