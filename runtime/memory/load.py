"""Finding a memory provider by the name `qtc answer --memory` is given, and making it with its options.

A name is a built-in (`none`, `last:N`, `full`, `bm25`, `embed`), `package.module:Class` (imported from
the working directory or the installed packages), or the name of an entry point of the group
`qtc.providers` (how a package installed beside qtc adds providers). Options (`--memory-option
key=value`) are passed to the class as keyword arguments, as text. A name that does not import, a class
that does not take its options or lacks a method of the protocol is a one-line UserError.
"""

from __future__ import annotations

from dataclasses import dataclass

from qtc.errors import InvalidOption, UserError
from qtc.runtime.evaluate.context import ContextMode
from qtc.runtime.user_code import import_named, one_line

from .builtin import BM25Provider, ContextProvider
from .embed import EmbedProvider

ENTRY_POINTS = "qtc.providers"
BUILTIN = ("none", "last:N", "full", "bm25", "embed")


@dataclass(frozen=True)
class MemorySpec:
    """A provider's name and options; its text (`memory:bm25 k=5`) is the answer records' `context`."""
    name: str
    options: tuple[tuple[str, str], ...] = ()

    @classmethod
    def parse(cls, name: str, options: list[str] = ()) -> "MemorySpec":
        pairs: dict[str, str] = {}
        for text in options:
            key, equals, value = text.partition("=")
            if not equals or not key.isidentifier():
                raise InvalidOption("memory_option", f"{text!r}: expected key=value, the key a Python name")
            if key in pairs:
                raise InvalidOption("memory_option", f"{key} is given twice")
            pairs[key] = value
        return cls(name, tuple(sorted(pairs.items())))

    def __str__(self) -> str:
        return "memory:" + " ".join([self.name, *(f"{key}={value}" for key, value in self.options)])


@dataclass(frozen=True)
class Endpoint:
    """What the command line says of qtc's model endpoint, for the built-ins that call one (embed)."""
    base_url: str | None = None
    timeout: float = 120.0
    attempts: int = 6


@dataclass(frozen=True)
class LoadedProvider:
    spec: MemorySpec
    instance: object
    retrieval: bool  # it retrieves steps and qtc's chat model answers from them; else it answers itself

    @property
    def name(self) -> str:
        return self.spec.name


def _builtin(name: str, options: dict[str, str], endpoint: Endpoint):
    if name in ("none", "full") or name.startswith("last:"):
        if options:
            raise InvalidOption("memory_option", f"--memory {name} takes no options")
        if name.startswith("last:"):
            count = name.partition(":")[2]
            if not count.isdigit() or int(count) <= 0:
                raise InvalidOption("memory", f"{name!r}: expected last:N with N a positive whole number")
            return ContextProvider(ContextMode("last", last=int(count)))
        return ContextProvider(ContextMode(name))
    if name == "bm25":
        return BM25Provider(**options)
    return EmbedProvider(**{"base_url": endpoint.base_url, "timeout": endpoint.timeout,
                            "attempts": endpoint.attempts, **options})


def _entry_point(name: str):
    from importlib.metadata import entry_points

    found = entry_points(group=ENTRY_POINTS, name=name)
    if not found:
        raise UserError(f"--memory {name}: no such provider: expected one of {', '.join(BUILTIN)}, "
                        f"package.module:Class, or a provider installed under the entry points {ENTRY_POINTS}")
    point = next(iter(found))
    try:
        return point.load()
    except Exception as error:
        raise UserError(f"--memory {name}: cannot load the entry point {point.value} ({one_line(error)})") from None


def load_provider(spec: MemorySpec, endpoint: Endpoint = Endpoint()) -> LoadedProvider:
    """The provider `spec` names, made with its options and checked to have the protocol's methods."""
    options = dict(spec.options)
    builtin = spec.name in BUILTIN or spec.name.startswith("last:")
    try:
        if builtin:
            instance = _builtin(spec.name, options, endpoint)
        else:
            factory = import_named(spec.name, "--memory") if ":" in spec.name else _entry_point(spec.name)
            instance = factory(**options)
    except UserError:
        raise
    except Exception as error:  # options the class does not take, or its constructor failing
        raise UserError(f"--memory {spec.name}: cannot make the provider with options {options} "
                        f"({one_line(error)})") from None
    lacking = [method for method in ("reset", "observe") if not callable(getattr(instance, method, None))]
    answers, retrieves = (callable(getattr(instance, method, None)) for method in ("answer", "retrieve"))
    if not answers and not retrieves:
        lacking.append("answer (or retrieve)")
    if lacking:
        raise UserError(f"--memory {spec.name}: {type(instance).__name__} lacks the method(s) {', '.join(lacking)} "
                        "of a memory provider (docs/memory.md)")
    return LoadedProvider(spec, instance, retrieval=not answers)
