"""Whether a function's parameter is per-process: every call of it in the module binds one fixed value.

PC102 reports a parameter interpolated into a system prompt as per-request data. Real code often passes the
same value on every call: a module constant (``_build_agent(secret_name=PERSISTENT_SECRET_NAME)``), a literal,
or a value computed once at module level, such as a script's command-line arguments
(``args = parser.parse_args()`` then ``asyncio.run(main(args.repo))``). Those differ between deployments, not
between requests, and each process warms its own cache once (issue 11). So is a value a script's entry point
computes once, outside any loop (``directory_path = input(...)`` in ``main()`` then ``run(server,
directory_path)``: openai-agents-python's examples). A loop variable, another function's parameter or anything
computed per call is not fixed.

Only functions whose callers are all visible are judged: a private function (``_name``), a function nested in
another, or any function of a script (a module with an ``if __name__ == "__main__":`` block). A public function
of a library module may be called from elsewhere with per-request data, so it keeps the per-request reading.
"""

from __future__ import annotations

import libcst as cst

from promptcache.lint import sources as S
from promptcache.lint.expressions import argument
from promptcache.lint.index import ModuleIndex, Scope
from promptcache.lint.walk import TreeFacts, children, descendants


def is_script(module: cst.Module, path: str = "") -> bool:
    """True when the module has an ``if __name__ == "__main__":`` block at its top level, or is a pytest module
    by its file name (``test_*.py``, ``*_test.py``, ``conftest.py``): nothing imports it, so every call of its
    functions is in it. A ``def test_*`` in a library module does not make it one (issue 11 review)."""
    for statement in module.body:
        if isinstance(statement, cst.If) and isinstance(statement.test, cst.Comparison):
            test = statement.test
            if isinstance(test.left, cst.Name) and test.left.value == "__name__":
                return True
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return name == "conftest.py" or name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


class CallSites:
    """One module's calls of its own functions, grouped by callee once (a file's data flow asks per parameter)."""

    def __init__(self, index: ModuleIndex, module: cst.Module, facts: TreeFacts, calls: dict[int, list[tuple[cst.Call, Scope]]],
                 path: str = ""):
        """``calls``: ``{id(callee scope): [(call, calling scope), ...]}`` (:meth:`FlowAnalysis.calls_of`)."""
        self.index = index
        self.facts = facts
        self.script = is_script(module, path)
        self.calls = calls
        self.passed_on = _passed_on(facts, index)
        self._passing: set[int] = set()  # the functions whose parameters _fixed_param is following

    def _judged(self, func: Scope) -> bool:
        """``func``'s callers are all in the module: it is private, nested or a script's, and never handed on
        uncalled (``partial(_answer, name=...)``, a callback: its caller is unseen; issue 11 review)."""
        nested = func.parent is not None and func.parent.kind == "function"
        return (func.name.startswith("_") or nested or self.script) and func.name not in self.passed_on

    def visible_calls(self, func: Scope) -> list[tuple[cst.Call, Scope]] | None:
        """Every call of ``func`` in the module when its callers are all visible (see the module docstring),
        else None."""
        return self.calls.get(id(func), []) if self._judged(func) else None

    def arguments(self, func: Scope, position: int) -> list[tuple[cst.BaseExpression | None, Scope]]:
        """What each call of ``func`` in the module passes for parameter ``position`` (None where it passes
        nothing), with the calling scope; ``[]`` past the parameters."""
        if position >= len(func.params):
            return []
        offset = 1 if func.self_name is not None else 0
        return [(argument(call, position - (offset if isinstance(call.func, cst.Attribute) else 0), func.params[position]), scope)
                for call, scope in self.calls.get(id(func), [])]

    def fixed_everywhere(self, func: Scope, position: int) -> bool:
        """True when ``func`` is judged (see the module docstring), is called at least once in the module, and
        every call binds parameter ``position`` to a fixed value (a literal, or names bound once at module level)."""
        bound = self.arguments(func, position) if self._judged(func) else []
        return bool(bound) and all(value is not None and self._fixed(value, scope) for value, scope in bound)

    def fixed_somewhere(self, func: Scope, position: int) -> bool:
        """True when some call of ``func`` in the module binds parameter ``position`` to a fixed value (whoever
        else may call it): for that call, the text ``func`` builds from it is the same every time."""
        return any(value is not None and self._fixed(value, scope) for value, scope in self.arguments(func, position))

    def default_only(self, func: Scope, position: int) -> bool:
        """True when parameter ``position`` of ``func`` has a literal default and no call in the module passes
        it: the only value the module shows is a constant (``n_examples: int = 3``)."""
        node = func.node
        if not isinstance(node, cst.FunctionDef) or position >= len(func.params) or func.name in self.passed_on:
            return False
        name = func.params[position]
        params = [*node.params.posonly_params, *node.params.params, *node.params.kwonly_params]
        param = next((p for p in params if p.name.value == name), None)
        if param is None or param.default is None or not _fixed(self.index, param.default, func):
            return False
        offset = 1 if func.self_name is not None else 0
        for call, _ in self.calls.get(id(func), []):
            bound_position = position - (offset if isinstance(call.func, cst.Attribute) else 0)
            if argument(call, bound_position, name) is not None or any(a.star for a in call.args):
                return False
        return True

    def fixed_value(self, e: cst.BaseExpression, scope: Scope) -> bool:
        """``e``, passed at a call in ``scope``, is the same on every call (see :meth:`_fixed`)."""
        return self._fixed(e, scope)

    def _fixed(self, e: cst.BaseExpression, scope: Scope) -> bool:
        """A fixed value (:func:`_fixed`), a value built from constants only (:meth:`constant`), the caller's own
        parameter left at its literal default (:meth:`_default_param`), or in a script, names its entry point binds
        once outside any loop."""
        if _fixed(self.index, e, scope) or self.constant(e, scope) or self._default_param(e, scope) \
                or self._fixed_param(e, scope):
            return True
        if not self.script or scope.kind != "function" or not self._entry_point(scope):
            return False
        names = [n for n in _names(e) if n.value not in ("None", "True", "False")]
        for n in names:
            found, bindings = self.index.lookup(n.value, scope)
            if found is None or found.kind == "module":
                if not _fixed(self.index, n, scope):
                    return False
                continue
            if found is not scope or len(bindings) != 1 or bindings[0].kind not in ("assign", "with"):
                return False
            if any(isinstance(a, (cst.For, cst.While, cst.ListComp, cst.GeneratorExp)) for a in self.facts.ancestors(bindings[0].node)):
                return False
        return bool(names)

    def _fixed_param(self, e: cst.BaseExpression, scope: Scope) -> bool:
        """``e`` is a parameter of the calling function ``scope``, never rebound there, that every call of it binds
        to a fixed value (:meth:`fixed_everywhere`), its callers all visible: a script's ``evolve(args.population)``
        passing ``population`` on to the prompt's function (mentat's evolve script). Two calls up at most."""
        if not isinstance(e, cst.Name) or scope.kind != "function" or e.value not in scope.params \
                or id(scope) in self._passing or len(self._passing) >= 2:
            return False
        if not all(b.kind == "param" for b in scope.bindings.get(e.value, [])):
            return False
        self._passing.add(id(scope))
        try:
            return self.fixed_everywhere(scope, scope.params.index(e.value))
        finally:
            self._passing.discard(id(scope))

    def _default_param(self, e: cst.BaseExpression, scope: Scope) -> bool:
        """``e`` is a parameter of the calling function ``scope``, never rebound there, whose only value in the
        module is its literal default (:meth:`default_only`: AI-Scientist's ``perform_writeup(...,
        num_cite_rounds=20)`` passing ``num_cite_rounds`` on in its loop), when the calling function's own callers
        are all visible (:meth:`visible_calls`): a public ``answer(qs, name="guest")`` is called from elsewhere."""
        if not isinstance(e, cst.Name) or scope.kind != "function" or e.value not in scope.params \
                or self.visible_calls(scope) is None:
            return False
        bindings = scope.bindings.get(e.value, [])
        return all(b.kind == "param" for b in bindings) and self.default_only(scope, scope.params.index(e.value))

    def constant(self, e: cst.BaseExpression, scope: Scope, depth: int = 0) -> bool:
        """A value computed from source constants only: literals, module constants, and containers, subscripts,
        f-strings and calls of module-level names over them, through local names bound once outside any loop
        (``steps = [ScenarioStep(tool_name=TOOL_ECHO, ...)]`` then ``run_step(steps[0])``: a task definition,
        the same in every process; openai-agents-python's HITL scenarios)."""
        if depth > 6:
            return False
        if isinstance(e, (cst.SimpleString, cst.Integer, cst.Float)) or isinstance(e, cst.Name) and e.value in ("None", "True", "False"):
            return True
        if isinstance(e, cst.Name):
            found, bindings = self.index.lookup(e.value, scope)
            if found is None or len(bindings) != 1:
                return False
            b = bindings[0]
            if found.kind == "module":
                return b.kind in ("assign", "def", "class", "import")
            if found.kind != "function" or b.kind != "assign" or self.facts.loop_of(b.node, cross_functions=True) is not None:
                return False
            return self.constant(b.value, found, depth + 1)
        if isinstance(e, cst.Attribute):
            return self.constant(e.value, scope, depth + 1)
        if isinstance(e, (cst.List, cst.Tuple, cst.Set)):
            return all(not isinstance(el, cst.StarredElement) and self.constant(el.value, scope, depth + 1) for el in e.elements)
        if isinstance(e, cst.Dict):
            return all(isinstance(el, cst.DictElement) and self.constant(el.key, scope, depth + 1) and self.constant(el.value, scope, depth + 1) for el in e.elements)
        if isinstance(e, cst.Subscript):
            return len(e.slice) == 1 and isinstance(e.slice[0].slice, cst.Index) and self.constant(e.value, scope, depth + 1) and self.constant(e.slice[0].slice.value, scope, depth + 1)
        if isinstance(e, cst.Call):
            qualified = self.index.qualified(e.func, scope) or ""
            if S.volatile_call(qualified, len(e.args)) or S.shuffle_call(qualified) or S.env_call(qualified):
                return False  # `datetime.now()`, `random.choice(...)`, `os.getenv(...)`: not a source constant
            return self.constant(e.func, scope, depth + 1) and all(self.constant(a.value, scope, depth + 1) for a in e.args)
        if isinstance(e, (cst.FormattedString, cst.ConcatenatedString, cst.BinaryOperation)):
            return all(self.constant(n, scope, depth + 1) for n in _names(e))
        return False

    def _entry_point(self, func: Scope) -> bool:
        """A top-level function no function of the module calls (``main``, run by ``asyncio.run(main())``)."""
        if func.parent is None or func.parent.kind != "module":
            return False
        return all(scope.kind == "module" for _, scope in self.calls.get(id(func), []))


def _fixed(index: ModuleIndex, e: cst.BaseExpression, scope: Scope) -> bool:
    """A literal, or an expression whose every name is bound once, by an assignment at module level."""
    if isinstance(e, (cst.SimpleString, cst.Integer, cst.Float)):
        return True
    names = [n for n in _names(e) if n.value not in ("None", "True", "False")]
    if not names:
        return isinstance(e, (cst.ConcatenatedString, cst.FormattedString, cst.Tuple, cst.List))
    for n in names:
        found, bindings = index.lookup(n.value, scope)
        if found is None or found.kind != "module" or len(bindings) != 1 or bindings[0].kind != "assign":
            return False
    return True


_OPAQUE = cst.Name("__promptcache_comprehension__")  # stands for a lambda or comprehension in _names


def _names(e: cst.CSTNode) -> list[cst.Name]:
    """The free names an expression reads (``args.repo`` reads ``args``; attribute names are not names)."""
    if isinstance(e, cst.Name):
        return [e]
    if isinstance(e, cst.Attribute):
        return _names(e.value)
    out: list[cst.Name] = []
    for child in e.children:
        if isinstance(child, (cst.Lambda, cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)):
            out.append(_OPAQUE)  # its own bindings: not judged as fixed (a name no scope binds)
        elif isinstance(child, cst.CSTNode):
            out += _names(child)
    return out


def _passed_on(facts: TreeFacts, index: ModuleIndex) -> frozenset[str]:
    """The names the module reads other than as a call's callee: a function among them is handed on
    (``partial(f, ...)``, ``callbacks=[f]``, ``self.handler = self._f``) and may be called where it is not seen. Not
    names that only label something: a ``def`` / ``class`` / parameter name, a keyword, a store target, an
    attribute of anything but ``self`` / ``cls`` (``args.translate``), an import; nor names inside a lambda.
    Read off the walk's nodes by type (``facts.of_type``)."""
    skip = {id(call.func.attr if isinstance(call.func, cst.Attribute) else call.func) for call, _ in index.calls}
    for node in facts.of_type(cst.Attribute):
        if not (type(node.value) is cst.Name and node.value.value in ("self", "cls")):
            skip.add(id(node.attr))
    skip.update(id(node.keyword) for node in facts.of_type(cst.Arg) if node.keyword is not None)
    skip.update(id(node.name) for node in facts.of_type(cst.FunctionDef, cst.ClassDef, cst.Param))
    for node in facts.of_type(cst.AssignTarget, cst.Import, cst.ImportFrom, cst.Lambda):
        skip.update(id(n) for child in children(node) for n in descendants(child, cst.Name))
    return frozenset(n.value for n in facts.of_type(cst.Name) if id(n) not in skip)


__all__ = ["CallSites", "is_script"]
