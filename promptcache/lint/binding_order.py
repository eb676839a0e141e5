"""Statement order inside one function body: which bindings of a name cannot reach a read of it.

The taint engine is flow-insensitive (a name carries the union of its bindings); this narrows it for the one
shape where that is plainly wrong: ``meta = None; prepare(meta=meta); meta = Meta(created=now())`` (onyx's
``process_with_prompt_cache``): the clock assigned *after* the use does not reach it. Conservative: only a
plain rebinding (``=``, ``:=``, ``with ... as``, a ``for`` target; never ``+=`` or a mutation, which can change
an object shared with the read),
only when the binding statement comes after the read in source order under their closest common ancestor,
and no loop (``for``, ``while``, a comprehension) inside the function encloses both. And for its mirror image
(:func:`overwritten`): a binding that a plain ``x = ...`` statement replaces on every path before the read.
"""

from __future__ import annotations

import libcst as cst

from promptcache.lint.walk import children as syntax_children

_BOUNDARIES = (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.Module)
_LOOPS = (cst.For, cst.While, cst.CompFor)


def unreached(binding: cst.CSTNode, read: cst.CSTNode, parents: dict) -> bool:
    """True when the statement ``binding`` cannot run before ``read`` in one call of their function: it is later
    in the source, and no loop of the function encloses both. False whenever that is not certain (the read is
    inside the binding, the two are in different functions, a parent is unknown)."""
    chain = [read]
    while not isinstance(chain[-1], _BOUNDARIES):
        parent = parents.get(chain[-1])
        if parent is None:
            return False
        chain.append(parent)
    position = {id(n): i for i, n in enumerate(chain)}
    node, below = binding, None
    while id(node) not in position:
        if isinstance(node, _BOUNDARIES):
            return False  # the binding is in another function than the read
        below, node = node, parents.get(node)
        if node is None:
            return False
    at = position[id(node)]
    if below is None or at == 0 or isinstance(node, _BOUNDARIES):
        return False  # the read is inside the binding statement (`x = f(x)`), or they meet at the function
    if any(isinstance(n, _LOOPS) for n in chain[at:]):
        return False
    children = list(node.children)
    mine = next((i for i, c in enumerate(children) if c is below), None)
    theirs = next((i for i, c in enumerate(children) if c is chain[at - 1]), None)
    # `global x` / `nonlocal x`: the later binding reaches the next call (issue 11 review)
    return mine is not None and theirs is not None and mine > theirs and not _declared_shared(read, parents)


def overwritten(bindings: list[cst.CSTNode], rebindings: list[cst.CSTNode], read: cst.CSTNode, parents: dict) -> set[int]:
    """The ids of the ``bindings`` (binding statements of one name) that one of its ``rebindings`` (the ``x = ...``
    statements among them, not ``x[k] = ...``) replaces on every path before ``read`` in one call of their function: the rebinding is a
    statement of a block that holds ``read`` further down, and the binding is not between them in that block
    (quivr's ``system_message_template = f"...{today}"`` then ``system_message_template = "Given the input..."``
    for the next prompt). None is, when that is not certain: a binding in a nested function or class, a rebinding
    on the read's own line or under an ``if``, a name declared ``global``."""
    chain, up = [], read
    while up is not None and not isinstance(up, _BOUNDARIES):
        chain.append(up)
        up = parents.get(up)
    home = up
    chain.append(home)
    at_depth = {id(n): i for i, n in enumerate(chain)}
    killers = []  # (rebinding statement, its block, its position there, the read's position there)
    for by in rebindings:
        line = parents.get(by)
        block = parents.get(line)
        if not isinstance(by, (cst.Assign, cst.AnnAssign)) or not isinstance(line, cst.SimpleStatementLine) \
                or id(block) not in at_depth or at_depth[id(block)] == 0:
            continue
        body = block.body
        at = next(i for i, stmt in enumerate(body) if stmt is line)
        until = next(i for i, stmt in enumerate(body) if stmt is chain[at_depth[id(block)] - 1])
        if at < until:
            killers.append((by, block, at, until))
    if not killers or _declared_shared(read, parents):
        return set()
    out: set[int] = set()
    for binding in bindings:
        held: dict[int, cst.CSTNode] = {}  # block id -> the statement of that block holding the binding
        node = binding
        while node is not None and not isinstance(node, _BOUNDARIES):
            parent = parents.get(node)
            held[id(parent)] = node
            node = parent
        if node is not home:  # in a nested function or class (a parameter's home is its function)
            continue
        for by, block, at, until in killers:
            if binding is by:
                continue
            stmt = held.get(id(block))
            position = None if stmt is None else next(i for i, s in enumerate(block.body) if s is stmt)
            if position is None or position < at or position > until:  # not on the rebinding's own line either
                out.add(id(binding))
                break
    return out


def _declared_shared(read: cst.CSTNode, parents: dict) -> bool:
    """The name read is declared ``global`` or ``nonlocal`` in a function enclosing the read."""
    name = read.value if isinstance(read, cst.Name) else None
    node = parents.get(read)
    while node is not None and name is not None:
        if isinstance(node, cst.FunctionDef) and _declares(node.body, name):
            return True
        node = parents.get(node)
    return False


def _declares(body: cst.CSTNode, name: str) -> bool:
    """A ``global`` / ``nonlocal`` statement of ``body`` names ``name`` (nested functions and classes are their
    own scopes; expressions and other small statements cannot hold one, so they are not entered)."""
    stack = [body]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.Global, cst.Nonlocal)):
            if any(n.name.value == name for n in node.names):
                return True
        elif not isinstance(node, (cst.BaseExpression, cst.BaseSmallStatement, cst.FunctionDef, cst.ClassDef)):
            stack.extend(syntax_children(node))
    return False
