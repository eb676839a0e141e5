"""Code that runs once, when its module is imported: a clock read there is fixed per process (PC101 says so, as a
warning), and a helper called there once reads it once (:class:`~promptcache.lint.call_taint.CallTaint`)."""

from __future__ import annotations

import libcst as cst

from promptcache.lint.index import ModuleIndex
from promptcache.lint.walk import ancestors, descendants

# What runs a statement more than once, or later than the module's import: a function, a loop, a comprehension.
_REPEATING = (cst.FunctionDef, cst.Lambda, cst.For, cst.While, cst.CompFor, cst.ListComp, cst.SetComp, cst.DictComp,
              cst.GeneratorExp)


class ImportTime:
    """Asks of one module (``parents``: each node's parent, :class:`~promptcache.lint.flow_facts.TreeFacts`)."""

    def __init__(self, index: ModuleIndex, parents: dict):
        self.index = index
        self.parents = parents
        self._memo: dict[int, bool] = {}

    def at_import(self, node: cst.CSTNode) -> bool:
        """``node`` runs when its module is imported, and only then: no function, lambda or ``while`` encloses it (a
        module-level ``while True:`` chat loop runs per turn; a ``for`` over data runs at import), or the function
        enclosing it, with no loop in between, is a private function of the module called only at import
        (``_REGISTRY = _define_prompts()``, quivr; issue 11)."""
        if any(m == "streamlit" or m.startswith("streamlit.") for m in self.index.imports):
            return False  # Streamlit runs the whole script again on every interaction
        looped = turns = False
        for anc in ancestors(self.parents, node):
            if isinstance(anc, cst.Lambda):
                return False
            if isinstance(anc, cst.FunctionDef):
                return not looped and self._import_only(anc)
            looped = looped or isinstance(anc, (cst.For, cst.While, cst.CompFor))
            turns = turns or isinstance(anc, cst.While)
        return not turns  # module level: a `for` over data runs at import, a `while` is a script's turn loop

    def _import_only(self, func: cst.FunctionDef) -> bool:
        """``func`` is a private module-level function, not a generator, that the module calls only once at import
        (no loop around the calls) and names nowhere else (not passed as a callback, nor listed in ``__all__``)."""
        found = self._memo.get(id(func))
        if found is None:
            found = self._memo[id(func)] = self._called_at_import_only(func)
        return found

    def _called_at_import_only(self, func: cst.FunctionDef) -> bool:
        name = func.name.value
        scope = self.index.scope_of_node.get(func)
        if scope is None or scope.parent is None or scope.parent.kind != "module" or not name.startswith("_") or name.startswith("__"):
            return False
        calls = [c for c, s in self.index.calls if self.index.function_named(c.func, s) is scope]
        if not calls or not all(isinstance(c.func, cst.Name) and self.once(c) for c in calls):
            return False
        if next(descendants(func.body, (cst.Yield, cst.Await)), None) is not None:
            return False  # a generator or coroutine: run (and read) when driven, not when made
        named = sum(1 for n in self.parents if isinstance(n, cst.Name) and n.value == name)
        return named == len(calls) + 1  # the calls and the `def`

    def once(self, call: cst.Call) -> bool:
        """``call`` is a module-level statement's, in no loop or comprehension (``for line in sys.stdin:`` is a
        script's turn loop as much as ``while True:``; ``[_ask(q) for q in QUESTIONS]`` calls it once per item)."""
        return not any(isinstance(anc, _REPEATING) for anc in ancestors(self.parents, call))

    def once_at_import(self, call: cst.Call) -> bool:
        """``call`` runs once, when the module is imported (a helper that reads the clock called there)."""
        return self.at_import(call) and self.once(call)
