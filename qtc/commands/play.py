"""Record episodes of a Jericho story file, of a TextWorld game or of Crafter, one trace file per episode.

Episodes are seeded: episode i uses seed SEED+i, for the game and the agent alike, and is written
to OUT/<game>-<agent>-s<seed>.jsonl (format: docs/trace-format.md). Episodes already complete in
OUT are skipped, so an interrupted run resumes where it stopped. Ctrl-C finishes the episode under
way as `ended_by: interrupted`; it is recorded again on the next run. A step that fails (the game or
the agent raised) finishes it as `ended_by: crashed`, the steps before it kept, and stops the run with
one line naming the step and the error (exit status 2); it too is recorded again on the next run. Crafter's `--frames` keeps every
screen beside the trace (OUT/<id>.frames.npz), written with it; `--vision` shows the llm agent the
screen and the HUD line instead of the text view. --jobs N records N episodes at a time, each in a
worker process (default 1; resuming works the same). TextWorld plays a game file (`--game`), or a game
its generator makes for each episode from the episode's seed (`--make cooking`, options by
`--make-option KEY=VALUE`), written into OUT beside the traces. `--agent package.module:factory` records an agent of
your own: factory(seed) returns an object whose choose(state) returns an action, an (action, reason) pair
or None to stop (docs/recording.md).
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

from qtc.errors import UserError
from qtc.runtime.record.games import GAMES, EpisodeOptions, find_game

COMMAND = "play"
HELP = "record Jericho, TextWorld or Crafter episodes as trace files"
EXAMPLES = """examples:
  qtc play jericho --rom ../shared/roms/zork1.z5 --agent walkthrough --out traces/
  qtc play jericho --rom ../shared/roms/advent.z5 --agent random --seed 1 --episodes 5 --max-steps 100
  qtc play crafter --agent scripted --seed 0 --episodes 10 --max-steps 200 --out traces/
  qtc play crafter --agent scripted --episodes 1000 --jobs 8 --out traces/
  qtc play crafter --agent llm --base-url http://localhost:8000/v1 --model qwen --max-steps 100
  qtc play crafter --agent scripted --frames --episodes 5 --out traces/
  qtc play crafter --agent llm --vision --frames --base-url http://localhost:8000/v1 --model qwen-vl
  qtc play crafter --agent my_agents:make_agent --seed 0 --episodes 5 --out traces/
  qtc play textworld --make cooking --seed 1 --agent walkthrough --out traces/
  qtc play textworld --make treasure_hunter --make-option level=10 --seed 3 --agent random --max-steps 50
  qtc play textworld --game games/my_cooking.z8 --agent random --seed 0
"""

def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game", choices=sorted(GAMES), help=", ".join(GAMES))
    parser.add_argument("--rom", type=Path, help="Jericho story file (.z3/.z5/.z8)")
    parser.add_argument("--game", type=Path, dest="game_file",
                        help="TextWorld game file (.z8/.ulx, with the .json TextWorld writes beside it)")
    parser.add_argument("--make", choices=("cooking", "treasure_hunter", "coin_collector", "simple"),
                        help="TextWorld: generate each episode's game from its seed with this challenge, into --out")
    parser.add_argument("--make-option", action="append", default=[], metavar="KEY=VALUE",
                        help="TextWorld --make: a generator option (recipe=2, go=9, open=false, level=5); repeatable")
    parser.add_argument("--agent", help="walkthrough, random or llm (Jericho, TextWorld); scripted, random or llm "
                                        "(Crafter); or an agent of your own, package.module:factory, where "
                                        "factory(seed) returns an object whose choose(state) returns an "
                                        "action, an (action, reason) pair or None to stop (importable from "
                                        "the working directory); default: walkthrough / scripted")
    parser.add_argument("--agent-name", help="an agent of your own: its name in the trace and the file names "
                                             "(default: the last part of its module's name)")
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


def _is_own(agent: str) -> bool:
    """Whether --agent names an agent of the user's own (package.module:factory)."""
    return ":" in agent


def _agent_name(args: argparse.Namespace) -> str:
    game = GAMES[args.game]
    agent = args.agent or game.agents[0]
    if args.vision and (agent != "llm" or not game.vision):
        raise UserError("--vision is for Crafter's llm agent")
    if _is_own(agent):
        _import_factory(agent)  # a factory that does not import is refused before anything is recorded
        return args.agent_name or agent.partition(":")[0].rpartition(".")[2]
    if args.agent_name:
        raise UserError("--agent-name is for an agent of your own (--agent package.module:factory)")
    if agent not in game.agents:
        raise UserError(f"unknown agent '{agent}' for {args.game} (choose from {', '.join(game.agents)}, "
                        "or package.module:factory)")
    if agent == "llm" and not (args.base_url and args.model):
        raise UserError("the llm agent needs --base-url and --model")
    return agent


def _import_factory(spec: str):
    """The factory that `package.module:factory` names, imported from the working directory."""
    from qtc.runtime.user_code import import_named

    factory = import_named(spec, "--agent")
    if not callable(factory):
        raise UserError(f"--agent {spec}: {spec.partition(':')[2]} is not a function or class")
    return factory


def _options(args: argparse.Namespace, agent_name: str):
    from qtc.runtime.record.textworld import parse_make_options

    return EpisodeOptions(agent=agent_name, seed=args.seed, rom=args.rom, max_steps=args.max_steps,
                          frames=args.frames, valid_actions=not args.no_valid_actions,
                          ordered_objects=not args.unordered_objects, game_file=args.game_file, make=args.make,
                          make_options=tuple(parse_make_options(args.make_option).items()), games_dir=args.out)


def _specs(args: argparse.Namespace, agent_name: str):
    from qtc.runtime.record.episodes import EpisodeSpec
    from qtc.runtime.trace.format import episode_id

    options = _options(args, agent_name)
    game = find_game(args.game, options)
    note = game.note(options)
    if note:
        print(note, file=sys.stderr, flush=True)
    first = game.first_seed(options)
    return [EpisodeSpec(episode_id(game.name(options, seed), agent_name, seed),
                        functools.partial(_episode, args, agent_name, seed))
            for seed in range(first, first + args.episodes)]


# The sessions and agents are made by a module function, so that a worker process can make them (--jobs).
def _episode(args: argparse.Namespace, agent_name: str, seed: int):
    agent = args.agent or GAMES[args.game].agents[0]
    own = _own_agent(agent, seed) if _is_own(agent) else None  # before the game: a broken factory fails fast
    options = _options(args, agent_name)
    session = find_game(args.game, options).start(options, seed)
    return session, own if own is not None else _built_in_agent(args, agent, seed, session)


def _own_agent(spec: str, seed: int):
    """The agent `package.module:factory` makes for the episode at `seed`."""
    from qtc.runtime.user_code import one_line

    try:
        own = _import_factory(spec)(seed)
    except UserError:
        raise
    except Exception as error:  # the user's factory: anything it raises is its fault
        raise UserError(f"--agent {spec}: the factory failed for seed {seed} ({one_line(error)})") from None
    if not callable(getattr(own, "choose", None)):
        raise UserError(f"--agent {spec}: what it made ({type(own).__name__}) has no method choose(state)")
    return own


def _built_in_agent(args: argparse.Namespace, agent: str, seed: int, session):
    from qtc.runtime.record.agents import LLMAgent, RandomAgent, ScriptedCrafterAgent, WalkthroughAgent
    from qtc.runtime.record.crafter import vision_prompt

    actions = session.actions or ()
    if agent == "walkthrough":  # the game's own winning commands (TextWorld's: at reset)
        return WalkthroughAgent(session.walkthrough)
    if agent == "scripted":
        return ScriptedCrafterAgent(seed)
    if agent == "random":
        return RandomAgent(seed, actions)
    return LLMAgent(args.base_url, args.model, session.env_name, actions,
                    vision_prompt(actions) if args.vision else None)


def run(args: argparse.Namespace) -> int:
    from qtc.runtime.record.episodes import record_episodes

    if args.episodes < 1 or args.max_steps < 1 or args.jobs < 1:
        raise UserError("--episodes, --max-steps and --jobs must be at least 1")
    agent_name = _agent_name(args)
    specs = _specs(args, agent_name)
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
