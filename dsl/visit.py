"""One dispatch rule for every pass over expressions: a method named after the node's class.

The checker, the compiler and the reference evaluator each subclass `Visitor` and define
`visit_Literal`, `visit_Call` ... (as Python's own `ast.NodeVisitor` names them); `visit(node, context)`
calls the one for the node's class with what the pass needs at that node (a scope, a row alias). The
method is looked up once per class and node type. The context is one fixed argument, not `*args`: the
reference evaluator visits every node of every row, and a call through `*args` made it a third slower.
"""

from __future__ import annotations

from typing import Any, Callable


class Visitor:
    _methods: dict[type, Callable]

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._methods = {}

    def visit(self, node: Any, context: Any) -> Any:
        try:
            method = self._methods[type(node)]
        except KeyError:
            method = self._methods[type(node)] = self._method_for(type(node))
        return method(self, node, context)

    @classmethod
    def _method_for(cls, node_type: type) -> Callable:
        name = f"visit_{node_type.__name__}"
        method = getattr(cls, name, None)
        if method is None:
            raise NotImplementedError(f"{cls.__name__} cannot visit a {node_type.__name__} node: "
                                      f"it has no method {name}")
        return method
