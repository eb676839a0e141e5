"""The module index: scopes, bindings and the facts the data-flow helpers need.

Built by :class:`Indexer`, the first visitor of the batched walk. It records,
flow-insensitively (every binding of a name counts, in any order):

- scopes (module, class, function) and, per scope, every binding of every
  name: assignments, augmented assignments, unpacking, walrus, ``for`` and
  comprehension targets, ``with ... as``, parameters, imports, definitions;
- container mutations as bindings of the container (``h.append(v)``,
  ``h.extend(v)``, ``h.insert(i, v)``, ``d[k] = v``, ``d.update(v)``), so
  a value appended to a list taints the list;
- ``self.attr`` bindings per class, from every method and the class body;
- every call, every return, subscript/attribute stores and ``del`` targets.

Names are resolved through :mod:`promptcache.lint.imports` (a light alias
resolver), never through libcst's scope provider.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from promptcache.lint.imports import import_aliases, imported_modules, is_langchain_module, is_llm_module

# method name -> index of the argument whose value enters the container
MUTATORS: dict[str, int] = {"append": 0, "extend": 0, "add": 0, "update": 0, "insert": 1, "appendleft": 0, "extendleft": 0}


@dataclass(eq=False)
class Binding:
    """One way a name (or ``self.attr``) gets a value.

    ``kind`` is one of: assign, aug, for, with, walrus, param, import, def,
    class, mutate. ``value`` is the expression providing the value (for
    ``for``: the iterable; for ``mutate``: the inserted element), ``node`` the
    statement or call that binds.
    """

    kind: str
    value: cst.CSTNode | None
    node: cst.CSTNode
    scope: Scope
    qualified: str | None = None
    index: int = -1
    op: str = ""
    element: int = -1  # the position of the name in a flat unpacking target (`a, b = ...`: 0, 1), else -1


@dataclass(eq=False)
class ClassInfo:
    """A class: its scope, its attributes (``self.X`` and class-body ``X``) and methods."""

    name: str
    node: cst.ClassDef
    scope: Scope
    attrs: dict[str, list[Binding]] = field(default_factory=dict)
    methods: dict[str, Scope] = field(default_factory=dict)


@dataclass(eq=False)
class Scope:
    """A module, class or function scope with its bindings.

    For a method, ``cls`` is its class and ``self_name`` its first parameter
    (``self`` / ``cls``), so ``self.x`` resolves to the class's attributes.
    """

    kind: str
    node: cst.CSTNode
    parent: Scope | None
    name: str = ""
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    params: list[str] = field(default_factory=list)
    returns: list[cst.BaseExpression] = field(default_factory=list)
    cls: ClassInfo | None = None
    self_name: str | None = None
    sorted_names: set[str] = field(default_factory=set)

    def bind(self, name: str, binding: Binding) -> None:
        self.bindings.setdefault(name, []).append(binding)


@dataclass(eq=False)
class Store:
    """A store into part of a value: ``target = value`` where target is a subscript or attribute."""

    target: cst.BaseExpression
    value: cst.BaseExpression | None
    node: cst.CSTNode
    scope: Scope


class ModuleIndex:
    """Everything :class:`Indexer` recorded about one module."""

    def __init__(self) -> None:
        self.scopes: list[Scope] = []
        self.classes: list[ClassInfo] = []
        self.calls: list[tuple[cst.Call, Scope]] = []
        self.role_dicts: list[tuple[cst.Dict, Scope]] = []
        self.role_tuples: list[tuple[cst.Tuple, Scope]] = []
        self.stores: list[Store] = []
        self.deletes: list[tuple[cst.Del, Scope]] = []
        self.imports: list[str] = []
        self.scope_of_node: dict[cst.CSTNode, Scope] = {}
        # (expression, scope) -> qualified name, filled once the index is complete (see :meth:`complete`):
        # the rules ask for the callee of every call several times (slots, sinks, summaries, markers).
        self._qualified: dict[tuple[cst.CSTNode, Scope], str | None] | None = None
        self._functions: dict[tuple[cst.CSTNode, Scope], Scope | None] = {}  # function_named's answers, likewise

    def complete(self) -> None:
        """Called when the walk has recorded every binding: from now on the answers cannot change."""
        self._qualified = {}

    @property
    def is_complete(self) -> bool:
        """True once every binding is recorded (answers about names may be memoised)."""
        return self._qualified is not None

    def release(self) -> None:
        """Break the scope <-> binding and class <-> scope reference cycles once the file is done, so
        reference counting frees the tree at once instead of the cyclic collector walking it (about 2 s of
        CPU on pydantic-ai's 555 parsed files, 2026-12-02)."""
        for scope in self.scopes:
            scope.bindings.clear()
            scope.cls = None
        for info in self.classes:
            info.attrs.clear()
            info.methods.clear()
        self.scopes.clear()
        self.classes.clear()
        self.scope_of_node.clear()
        self._qualified = None
        self._functions.clear()

    @property
    def imports_llm(self) -> bool:
        """True when the module imports an LLM SDK or framework."""
        return any(is_llm_module(m) for m in self.imports)

    @property
    def imports_langchain(self) -> bool:
        return any(is_langchain_module(m) for m in self.imports)

    # -- name resolution -------------------------------------------------
    def imported(self, name: str, scope: Scope) -> bool:
        """True when every binding of ``name`` seen from ``scope`` is an import (and there is one)."""
        bindings = self.lookup(name, scope)[1]
        return bool(bindings) and all(b.kind == "import" for b in bindings)

    def lookup(self, name: str, scope: Scope) -> tuple[Scope | None, list[Binding]]:
        """The scope that binds ``name`` as seen from ``scope`` (LEGB, class bodies skipped)."""
        current: Scope | None = scope
        first = True
        while current is not None:
            if current.kind != "class" or first:
                found = current.bindings.get(name)
                if found:
                    return current, found
            first = False
            current = current.parent
        return None, []

    def qualified(self, expr: cst.BaseExpression, scope: Scope, _depth: int = 0) -> str | None:
        """The qualified name of a Name/Attribute chain, through imports and simple aliases.

        ``datetime.now`` after ``from datetime import datetime`` gives
        ``datetime.datetime.now``; an unbound name (a builtin) gives itself;
        a name bound to something other than an import or an alias gives None.
        """
        memo = self._qualified
        if memo is not None and _depth == 0:
            key = (expr, scope)
            if key in memo:
                return memo[key]
            found = memo[key] = self._qualify(expr, scope, 0)
            return found
        return self._qualify(expr, scope, _depth)

    def _qualify(self, expr: cst.BaseExpression, scope: Scope, _depth: int) -> str | None:
        if isinstance(expr, cst.Attribute):
            base = self.qualified(expr.value, scope, _depth)
            return None if base is None else f"{base}.{expr.attr.value}"
        if not isinstance(expr, cst.Name):
            return None
        _, bindings = self.lookup(expr.value, scope)
        if not bindings:
            return expr.value
        for binding in bindings:
            if binding.kind == "import":
                return binding.qualified
        if (
            _depth < 4
            and len(bindings) == 1
            and bindings[0].kind == "assign"
            and isinstance(bindings[0].value, (cst.Name, cst.Attribute))
        ):
            return self.qualified(bindings[0].value, bindings[0].scope, _depth + 1)
        return None

    def bindings_of(self, expr: cst.BaseExpression, scope: Scope) -> list[Binding] | None:
        """The bindings of a name (LEGB from ``scope``) or of ``self.attr`` / ``Class.attr`` (every method's and
        the class body's); None for any other expression, or an attribute of something not a known class."""
        if isinstance(expr, cst.Name):
            return self.lookup(expr.value, scope)[1]
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
            cls = self.class_of_receiver(expr.value, scope)
            if cls is not None:
                return cls.attrs.get(expr.attr.value, [])
        return None

    def function_named(self, expr: cst.BaseExpression, scope: Scope) -> Scope | None:
        """The module-local function (or method, for ``self.m``) that ``expr`` names, if any."""
        if self._qualified is None:  # the index is not complete: nothing is memoised
            return self._function_named(expr, scope)
        key = (expr, scope)
        if key in self._functions:
            return self._functions[key]
        found = self._functions[key] = self._function_named(expr, scope)
        return found

    def _function_named(self, expr: cst.BaseExpression, scope: Scope) -> Scope | None:
        if isinstance(expr, cst.Name):
            _, bindings = self.lookup(expr.value, scope)
            for binding in bindings:
                if binding.kind == "def":
                    return self.scope_of_node.get(binding.value)
            return None
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
            cls = self.class_of_receiver(expr.value, scope)
            if cls is not None:
                return cls.methods.get(expr.attr.value)
        return None

    def class_written(self, name: str) -> bool:
        """The module writes an attribute of class ``name`` (``State.user = u``, ``setattr(State, "user", u)``)."""
        return any(isinstance(st.target, cst.Attribute) and isinstance(st.target.value, cst.Name) and st.target.value.value == name
                   for st in self.stores) or any(isinstance(c.func, cst.Name) and c.func.value == "setattr" and c.args
                                                 and isinstance(c.args[0].value, cst.Name) and c.args[0].value.value == name for c, _ in self.calls)

    def class_of_receiver(self, name: cst.Name, scope: Scope) -> ClassInfo | None:
        """The class whose attributes ``name.x`` reads: ``self``/``cls`` in a method, or a class name."""
        current: Scope | None = scope
        while current is not None:
            if current.kind == "function" and current.self_name == name.value and current.cls is not None:
                return current.cls
            current = current.parent
        _, bindings = self.lookup(name.value, scope)
        for binding in bindings:
            if binding.kind == "class":
                return next((c for c in self.classes if c.node is binding.value), None)
        return None


class Indexer:
    """The batched-walk visitor that fills a :class:`ModuleIndex`."""

    def __init__(self) -> None:
        self.index = ModuleIndex()
        self._stack: list[Scope] = []
        self._shuffles: list[tuple[cst.Call, Scope]] = []

    @property
    def scope(self) -> Scope:
        return self._stack[-1]

    def _push(self, scope: Scope) -> None:
        self.index.scopes.append(scope)
        self.index.scope_of_node[scope.node] = scope
        self._stack.append(scope)

    # -- scopes ----------------------------------------------------------
    def visit_Module(self, node: cst.Module) -> None:
        scope = Scope("module", node, None, name="<module>")
        self._push(scope)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        outer = self.scope
        scope = Scope("class", node, outer, name=node.name.value)
        info = ClassInfo(node.name.value, node, scope)
        scope.cls = info
        self.index.classes.append(info)
        outer.bind(node.name.value, Binding("class", node, node, outer))
        self._push(scope)

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self._stack.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        outer = self.scope
        outer.bind(node.name.value, Binding("def", node, node, outer))
        scope = Scope("function", node, outer, name=node.name.value)
        p = node.params
        positional = [*p.posonly_params, *p.params]
        others = [*p.kwonly_params]
        if isinstance(p.star_arg, cst.Param):
            others.append(p.star_arg)
        if isinstance(p.star_kwarg, cst.Param):
            others.append(p.star_kwarg)
        for i, param in enumerate([*positional, *others]):
            name = param.name.value
            scope.params.append(name)
            scope.bind(name, Binding("param", param.default, param, scope, index=i))
        if outer.kind == "class" and outer.cls is not None:
            is_static = any(
                isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod" for d in node.decorators
            )
            if not is_static and positional:
                scope.self_name = positional[0].name.value
            scope.cls = outer.cls
            outer.cls.methods[node.name.value] = scope
        self._push(scope)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._stack.pop()

    # -- bindings --------------------------------------------------------
    def _bind_target(self, target: cst.BaseExpression, kind: str, value, stmt: cst.CSTNode, op: str = "",
                     element: int = -1) -> None:
        scope = self.scope
        if isinstance(target, cst.Name):
            binding = Binding(kind, value, stmt, scope, op=op, element=element)
            scope.bind(target.value, binding)
            if scope.kind == "class" and scope.cls is not None:
                scope.cls.attrs.setdefault(target.value, []).append(binding)
        elif isinstance(target, (cst.Tuple, cst.List)):
            flat = element == -1 and not any(isinstance(el, cst.StarredElement) for el in target.elements)
            for i, item in enumerate(target.elements):
                self._bind_target(item.value, kind, value, stmt, op, i if flat and isinstance(item.value, (cst.Name, cst.Attribute)) else -2)
        elif isinstance(target, cst.StarredElement):
            self._bind_target(target.value, kind, value, stmt, op)
        elif isinstance(target, cst.Attribute):
            cls = self._self_class(target.value)
            if cls is not None:
                cls.attrs.setdefault(target.attr.value, []).append(Binding(kind, value, stmt, scope, op=op, element=element))
            else:
                self.index.stores.append(Store(target, value, stmt, scope))
        elif isinstance(target, cst.Subscript):
            self.index.stores.append(Store(target, value, stmt, scope))
            self._bind_container(target.value, Binding("mutate", value, stmt, scope, op="setitem"))

    def _self_class(self, expr: cst.BaseExpression) -> ClassInfo | None:
        if isinstance(expr, cst.Name):
            for scope in reversed(self._stack):
                if scope.kind == "function":
                    if scope.self_name == expr.value and scope.cls is not None:
                        return scope.cls
                    return None
        return None

    def _bind_container(self, container: cst.BaseExpression, binding: Binding) -> None:
        """Record ``binding`` on the name or ``self.attr`` that holds ``container``."""
        while isinstance(container, cst.Subscript):
            container = container.value
        if isinstance(container, cst.Name):
            scope, _ = self.index.lookup(container.value, self.scope)
            (scope or self.scope).bind(container.value, binding)
        elif isinstance(container, cst.Attribute):
            cls = self._self_class(container.value)
            if cls is not None:
                cls.attrs.setdefault(container.attr.value, []).append(binding)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind_target(target.target, "assign", node.value, node)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind_target(node.target, "assign", node.value, node)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind_target(node.target, "aug", node.value, node, op=type(node.operator).__name__)

    def visit_For(self, node: cst.For) -> None:
        self._bind_target(node.target, "for", node.iter, node)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bind_target(node.target, "for", node.iter, node)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind_target(node.asname.name, "with", node.item, node)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind_target(node.target, "walrus", node.value, node)

    def visit_Import(self, node: cst.Import) -> None:
        self._imports(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._imports(node)

    def _imports(self, node: cst.Import | cst.ImportFrom) -> None:
        self.index.imports.extend(imported_modules(node))
        for local, qualified in import_aliases(node):
            self.scope.bind(local, Binding("import", None, node, self.scope, qualified=qualified))

    def visit_Return(self, node: cst.Return) -> None:
        for scope in reversed(self._stack):
            if scope.kind == "function":
                if node.value is not None:
                    scope.returns.append(node.value)
                return

    def visit_Del(self, node: cst.Del) -> None:
        self.index.deletes.append((node, self.scope))

    def visit_Call(self, node: cst.Call) -> None:
        scope = self.scope
        self.index.calls.append((node, scope))
        func = node.func
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in MUTATORS and len(node.args) > MUTATORS[method]:
                arg = node.args[MUTATORS[method]]
                op = "extend" if method in ("extend", "update", "extendleft") or arg.star else method
                self._bind_container(func.value, Binding("mutate", arg.value, node, scope, op=op))
            elif method == "sort" and isinstance(func.value, cst.Name):
                scope.sorted_names.add(func.value.value)
            elif method == "shuffle" and node.args:
                self._shuffles.append((node, scope))

    def visit_Dict(self, node: cst.Dict) -> None:
        for element in node.elements:
            if (
                isinstance(element, cst.DictElement)
                and isinstance(element.key, cst.SimpleString)
                and element.key.value[1:-1] == "role"
            ):
                self.index.role_dicts.append((node, self.scope))
                return

    def visit_Tuple(self, node: cst.Tuple) -> None:
        elements = node.elements
        if len(elements) == 2 and isinstance(elements[0].value, cst.SimpleString):
            if elements[0].value.value[1:-1] in ("system", "developer"):
                self.index.role_tuples.append((node, self.scope))

    def leave_Module(self, node: cst.Module) -> None:
        # Shuffles need qualified names, known only once every import is seen.
        for call, scope in self._shuffles:
            name = self.index.qualified(call.func, scope) or ""
            if name in ("random.shuffle", "numpy.random.shuffle") or name.endswith(".random.shuffle"):
                target = call.args[0].value
                self._stack.append(scope)
                self._bind_container(target, Binding("shuffle", call, call, scope))
                self._stack.pop()
        self.index.complete()
