"""What the commands that ask a model share: the flags naming the model and its endpoint, the client
made from them, and the progress bar of requests. Also the flag of a library option, for messages."""

from __future__ import annotations

import argparse


def flag(field: str) -> str:
    """The flag of a library option named `field`: argparse's rule from flag to field, backwards
    (--max-per-template sets max_per_template)."""
    return "--" + field.replace("_", "-")


def add_endpoint_arguments(parser: argparse.ArgumentParser, model_required: bool = True) -> None:
    """The flags that name a model and its endpoint, shared by the commands that ask one."""
    parser.add_argument("--model", required=model_required, help="model name sent to the endpoint")
    parser.add_argument("--base-url", help="OpenAI-compatible API base URL (default: the openai client's: "
                                           "OPENAI_BASE_URL, else OpenAI's); the key is read from OPENAI_API_KEY")
    parser.add_argument("--timeout", type=float, default=600.0, metavar="SECONDS",
                        help="time limit of one request (default 600: a local model on a CPU may take "
                             "minutes a request; a request that timed out is not sent again)")
    parser.add_argument("--attempts", type=int, default=6, metavar="N",
                        help="tries per request on rate limits, server errors and timeouts (default 6)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def client_from_args(args: argparse.Namespace):
    """The ChatClient of the endpoint flags."""
    from qtc.runtime.chat import ChatClient

    return ChatClient(args.model, args.base_url, timeout=args.timeout, attempts=args.attempts)


def request_progress(label: str, unit: str, quiet: bool):
    """A progress bar of done / total, with the recent rate in `unit`s per second."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn
    from rich.text import Text

    class RateColumn(ProgressColumn):
        def render(self, task) -> Text:
            return Text(f"{task.speed:.2f} {unit}/s" if task.speed else f"- {unit}/s")

    return Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), RateColumn(), TimeElapsedColumn(),
                    disable=quiet)
