"""The relational IR of a template: named relations (nodes), each keyed by the episode and the
parameters its rows depend on, in the order they are computed.

A node becomes one CTE of the statement. Its `key` is the set of parameters (besides the episode) that
its rows are keyed by; `card` says how many rows it holds per episode, so that the verifier can check
that the parameter product only ever feeds the sample. Nodes hold their SQL body: lowering builds it
from column references that are always qualified (`c` the context, `t` the row), so nodes compose
without re-aliasing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# How many rows a node holds per episode: constant, linear in the steps, linear in steps x words, the
# product of parameter domains, or bounded by the sampled bindings (demand).
CARD_ONE, CARD_N, CARD_NW, CARD_PRODUCT, CARD_DEMAND = "O(1)", "O(n)", "O(n·w)", "PRODUCT", "O(demand)"

# What a node computes, for --explain and the verifier.
OPS = ("scope", "index", "domain", "component", "bindings", "sample", "demand", "relation", "bag", "aggregate",
       "row", "let", "values", "assemble")


class Unsupported(Exception):
    """The IR cannot lower this construct yet: the template is refused with the reason, at compile time."""


@dataclass
class Node:
    name: str
    op: str
    key: tuple[str, ...]  # parameters the rows are keyed by, in declaration order (the episode always)
    sql: str  # the SELECT body
    inputs: tuple[str, ...]
    card: str
    note: str = ""  # what it is, in the template's words
    fence: bool = False  # emitted MATERIALIZED: shared, an index, or a cardinality fence


@dataclass
class Side:
    """The answerable side, or the false-premise side of one adversarial parameter."""
    name: str  # "main" or the adversarial parameter
    components: list[str]  # component node names, crossed only inside the sample
    sample: str  # the sampled bindings node


@dataclass
class TemplateIR:
    template_id: str
    params: list[str]
    components: list[list[str]]  # parameters of each connected component, in declaration order
    nodes: list[Node] = field(default_factory=list)
    sides: list[Side] = field(default_factory=list)
    tables: dict = field(default_factory=dict)  # template table name -> schema.Table, for the horizon cuts
    final: str = ""  # the closing SELECT
    sampling: str = "top_n"  # sample.py: every, top_n or window
    primitive_calls: list[str] = field(default_factory=list)  # where it calls Python, for the SQL's header
    # For each side, nodes of which one empty on every episode leaves the side without rows (lower.py,
    # guarded components): where every side has one, the template has none. [] where a side has none.
    empty_when: list[list[str]] = field(default_factory=list)

    def node(self, name: str) -> Node:
        return next(n for n in self.nodes if n.name == name)


def read_by(nodes: list[Node], roots: list[str]) -> set[str]:
    """The names of `roots` and of every node they read, directly or through others."""
    by_name = {node.name: node for node in nodes}
    needed, wanted = set(), list(roots)
    while wanted:
        name = wanted.pop()
        if name not in needed:
            needed.add(name)
            wanted += by_name[name].inputs
    return needed
