"""The built-in functions: every record has all its parts, and the spatial primitives declared in
dsl/primitives.py are the ones the reference evaluator and the runtime implement."""

import inspect

import pytest

from qtc.dsl.functions import FUNCTIONS, OPTION_REASONS, Function
from qtc.dsl.functions.spatial import SpatialFunction
from qtc.dsl.primitives import PRIMITIVES
from qtc.dsl.reference.spatial import EpisodeSpace
from qtc.runtime.spatial.udf import IMPLEMENTATIONS


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_every_function_record_has_all_its_parts(name):
    function = FUNCTIONS[name]
    assert function.name == name
    assert function.arity and all(isinstance(n, int) and n >= 0 for n in function.arity)
    assert function.usage.startswith(f"{name}(")
    for part in ("type", "lower", "reference"):
        assert getattr(type(function), part) is not getattr(Function, part), f"{name} has no {part}"
    for option, values in function.options.items():
        assert values and option in OPTION_REASONS
    assert function.per_row_from is None or 0 < function.per_row_from < max(function.arity)


def test_the_primitives_are_functions():
    assert {n for n, f in FUNCTIONS.items() if isinstance(f, SpatialFunction)} == set(PRIMITIVES)


def test_the_runtime_implements_every_primitive_and_nothing_else():
    assert set(IMPLEMENTATIONS) == set(PRIMITIVES)


@pytest.mark.parametrize("name", sorted(PRIMITIVES))
def test_the_reference_implements_every_primitive_with_its_arguments(name):
    primitive = PRIMITIVES[name]
    method = getattr(EpisodeSpace, name, None)
    assert callable(method), f"dsl/reference/spatial.py has no {name}"
    parameters = list(inspect.signature(method).parameters)[1:]  # after self
    assert len(parameters) == len(primitive.args) + len(primitive.kwargs)
