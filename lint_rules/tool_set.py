"""PC306: a ``tools=`` list rebuilt per call over one conversation.

Anthropic renders the tools first and hashes them into the whole prefix, and OpenAI renders them into the
prompt: a tool set that changes between turns of one conversation (a tool added after the first step, a filter
on per-call data) makes the next request share nothing with the last (provider-cache-rules.md, "Invalidation
levels"). Facts from :mod:`promptcache.lint.param_churn`; reporting from :mod:`lint_rules.option_churn`.
"""

from __future__ import annotations

import libcst as cst

from promptcache.lint.finding import Severity
from promptcache.lint.index import Scope
from promptcache.lint.param_churn import persistent, resolve, value_key
from promptcache.lint.request_view import Request
from promptcache.lint.rule import Invalid
from promptcache.lint.walk import descendants

from lint_rules.option_churn import TAIL as _TAIL
from lint_rules.option_churn import OptionChurnRule

_CLAUDE = "import anthropic\nclient = anthropic.Anthropic()\n"
_OPENAI = "from openai import OpenAI\nclient = OpenAI()\n"


class PerCallToolSet(OptionChurnRule):
    """
    ## What it does
    Finds a ``tools=`` that differs between calls over one history: two calls
    of one function over the same ``messages=`` list with different tool lists
    (one without tools, one with a single tool picked for the step), or one
    call over a kept history whose tools are chosen per call (a conditional
    on per-call data, a name rebound in the loop, a list filtered by per-call
    data: ``[t for t in ALL_TOOLS if t["name"] in allowed]``).

    The request may also be built as a dict and sent as ``**params``: a dict
    literal, ``dict(...)``, ``params["x"] = ...``, ``params.update(...)``, or a
    same-module function that returns the dict.

    ## Why is this bad?
    Tools render first, ahead of the system prompt and the messages, and
    every provider hashes them into the whole prefix. A tool added, removed or
    filtered per call makes that call's prefix new from the first byte: the
    system prompt and the whole history are read again at the full price.

    ## Example
    ```python
    for step in plan:
        tools = [t for t in ALL_TOOLS if t["name"] in step.allowed_tools]
        r = client.messages.create(model=MODEL, tools=tools, messages=messages)
    ```

    ## Use instead
    Send the same tool list on every call of a conversation and steer with
    the prompt (or ``tool_choice`` set once); to stop the model using a tool,
    say so in the messages, or return an error from the tool.

    ## When it does not fire
    One tool list for the conversation (a constant, or chosen before the
    loop); a filter on fixed data (``[t for t in TOOLS if t["enabled"]]``);
    calls over different lists; tool lists not known statically (a parameter
    passed through, also the caller's option taken under a test of the
    parameters only: ``if "tools" in kwargs: params["tools"] = kwargs["tools"]``);
    a call in an ``except`` handler.
    A request dict the code does not fully show (passed to a function of
    another module before the call, merged with the caller's ``**kwargs``):
    the options it may set are not known, so they are not judged.
    """

    code = "PC306"
    name = "per-call-tool-set"
    severity = Severity.WARNING
    keywords = ("tools",)
    message = ("tool set changes over a shared history" + _TAIL + "tools render first, so the whole prefix is "
               "new on that call; send one tool list per conversation")

    def key(self, kw: str, expr: cst.BaseExpression | None, scope: Scope) -> str | None:
        found = value_key(self.flow, expr, scope)
        if found is not None:
            return found
        # Not a literal: the code it is built from (two calls of one builder, `TOOLS` twice, are the same list).
        while isinstance(expr, (cst.Name, cst.Attribute)):
            bindings = self._bindings(expr, scope)
            if len(bindings) != 1 or bindings[0].kind not in ("assign", "import"):
                return None
            if bindings[0].kind == "import":
                return f"`{bindings[0].qualified}`"
            expr, scope = bindings[0].value, bindings[0].scope
        return f"`{self.flow.code(expr)}`"

    def _bindings(self, expr, scope):
        if isinstance(expr, cst.Name):
            return self.flow.index.lookup(expr.value, scope)[1]
        if isinstance(expr.value, cst.Name):
            cls = self.flow.index.class_of_receiver(expr.value, scope)
            return cls.attrs.get(expr.attr.value, []) if cls is not None else []
        return []

    def single_site(self, sink: Request, kw: str) -> list[str]:
        values = super().single_site(sink, kw)
        if values:
            return values
        v = sink.value(kw)
        if v is None or v.expr is None or self.flow.holder_of(v.scope) is not self.flow.holder_of(sink.scope):
            return []
        expr, scope = v.expr, v.scope
        if isinstance(expr, cst.Name):
            found, bindings = self.flow.index.lookup(expr.value, scope)
            if found is not self.flow.holder_of(scope):
                return []
            changed = self._changed_per_call(sink, expr.value, [b for b in bindings if b.kind != "mutate"])
            if changed is not None:
                return ["without it", f"`{expr.value}` as changed by `{self.flow.code(changed)}`"]
            if len(bindings) != 1 or bindings[0].kind != "assign":
                return []
            expr = bindings[0].value
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp)) and self._filtered_per_call(sink, expr):
            return [f"`{self.flow.code(expr.for_in.iter)}`", f"`{self.flow.code(expr)}`"]
        return []

    def _changed_per_call(self, sink: Request, name: str, assigns: list) -> cst.Call | None:
        """A ``tools.append/extend/insert/remove/pop/clear(...)`` that makes the list differ between calls over
        one history: in the loop holding the call on a list built before the loop, or under an ``if`` on
        per-call data (in the loop: names bound in it; over a kept history: a parameter or local)."""
        flow = self.flow
        holder = flow.holder_of(sink.scope)
        loop = flow.facts.loop_of(sink.call)
        if loop is None and not persistent(flow, sink):
            return None
        if len(assigns) != 1 or assigns[0].kind != "assign":
            return None
        for call, scope in flow.index.calls:
            f = call.func
            if not (isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and f.value.value == name
                    and f.attr.value in _LIST_EDITS and flow.holder_of(scope) is holder):
                continue
            if loop is not None:
                if not flow.facts.within(call, loop):
                    continue
                if not flow.facts.within(assigns[0].node, loop):
                    return call  # built once, changed on every turn
            test = _condition(flow, call)
            if test is not None and _reads_per_call(flow, test, sink, loop):
                return call
        return None

    def _filtered_per_call(self, sink: Request, comp: cst.ListComp | cst.GeneratorExp) -> bool:
        """A comprehension over a fixed tool list whose ``if`` reads per-call data (in a loop: a name bound in the
        loop; over a kept history: a parameter or local of the function), not only the element itself."""
        loop = self.flow.facts.loop_of(sink.call)
        if loop is None and not persistent(self.flow, sink):
            return False
        if comp.for_in.inner_for_in is not None or not comp.for_in.ifs:
            return False
        if resolve(self.flow, comp.for_in.iter, sink.scope) is None and not isinstance(comp.for_in.iter, (cst.Name, cst.Attribute)):
            return False
        own = {n.value for n in descendants(comp.for_in.target, cst.Name)}
        holder = self.flow.holder_of(sink.scope)
        for cond in comp.for_in.ifs:
            for n in descendants(cond.test, cst.Name):
                if n.value in own or (holder is not None and n.value == holder.self_name):
                    continue
                found, bindings = self.flow.index.lookup(n.value, sink.scope)
                if found is holder and (loop is None or any(self.flow.facts.within(b.node, loop) for b in bindings)):
                    return True
        return False

    VALID = [
        _CLAUDE + "from .tools import TOOLS\ndef loop(messages):\n    while True:\n        r = client.messages.create(model='m', max_tokens=9, tools=TOOLS, messages=messages)\n        if r.stop_reason != 'tool_use':\n            return r\n        messages.append({'role': 'assistant', 'content': r.content})\n",
        # Issue 11 (TaskWeaver): a wrapper passing on the caller's `tools` / `tool_choice` from `**kwargs` (it edits
        # the caller's messages in place too): whether the tool set changes is the caller's to show.
        _OPENAI + "def chat_completion(messages, **kwargs):\n    tools_kwargs = {}\n    if 'tools' in kwargs and 'tool_choice' in kwargs:\n        tools_kwargs['tools'] = kwargs['tools']\n        tools_kwargs['tool_choice'] = kwargs['tool_choice']\n    for m in messages:\n        if m['role'] == 'system':\n            messages.insert(0, {'role': 'user', 'content': 'hi'})\n    return client.chat.completions.create(model='m', messages=messages, **tools_kwargs)\n",
        # A filter on fixed data, rebuilt on each pass of the loop: the same list every time (the filter reads only
        # the module constant ALL, not anything the loop changes).
        _CLAUDE + "from .tools import ALL\ndef loop(messages):\n    for _ in range(5):\n        tools = [t for t in ALL if t['enabled']]\n        r = client.messages.create(model='m', max_tokens=9, tools=tools, messages=messages)\n        messages.append({'role': 'assistant', 'content': r.content})\n",
        # Tools chosen once per conversation, before the loop.
        _OPENAI + "from .tools import ALL\ndef agent(task, allowed):\n    tools = [t for t in ALL if t['function']['name'] in allowed]\n    messages = [{'role': 'user', 'content': task}]\n    for _ in range(5):\n        r = client.chat.completions.create(model='m', messages=messages, tools=tools)\n        messages.append(r.choices[0].message)\n",
        # A generic wrapper passes tools through.
        _OPENAI + "def call(messages, tools=None):\n    return client.chat.completions.create(model='m', messages=messages, tools=tools)\n",
        # Tools per user, on a history that lives for one call: one tool list per conversation.
        _CLAUDE + "from .tools import BASE, ADMIN\ndef ask(user, q):\n    tools = list(BASE)\n    if user.is_admin:\n        tools.append(ADMIN)\n    return client.messages.create(model='m', max_tokens=9, tools=tools, messages=[{'role': 'user', 'content': q}])\n",
        # Rebuilt the same way on every turn of the loop.
        _CLAUDE + "from .tools import BASE, EXTRA\ndef run(messages):\n    for _ in range(5):\n        tools = list(BASE)\n        tools.extend(EXTRA)\n        r = client.messages.create(model='m', max_tokens=9, tools=tools, messages=messages)\n        messages.append({'role': 'assistant', 'content': r.content})\n",
        # A generic wrapper that builds the request as a dict: tools are passed through (not known statically).
        _CLAUDE + "def call(messages, tools=None):\n    params = {'model': 'm', 'max_tokens': 1024, 'messages': messages}\n    if tools:\n        params['tools'] = tools\n    return client.messages.create(**params)\n",
        # The request dict built once, before the loop, with one tool list.
        _CLAUDE + "from .tools import TOOLS\ndef run(messages):\n    params = dict(model='m', max_tokens=9, tools=TOOLS, messages=messages)\n    for _ in range(5):\n        r = client.messages.create(**params)\n        messages.append({'role': 'assistant', 'content': r.content})\n",
    ]
    INVALID = [
        # A guard on the caller's flag choosing this module's own tool list is no pass-through: reported.
        Invalid(_OPENAI + "from .tools import TOOLS\ndef turn(messages, q, use_tools):\n    params = {}\n    if use_tools:\n        params['tools'] = TOOLS\n    messages.append(q)\n    return client.chat.completions.create(model='m', messages=messages, **params)\n", line=7),
        Invalid(_CLAUDE + "from .tools import TOOLS\ndef run(messages):\n    r = client.messages.create(model='m', max_tokens=9, tools=TOOLS, messages=messages)\n    messages.append({'role': 'assistant', 'content': r.content})\n    return client.messages.create(model='m', max_tokens=9, messages=messages)\n", line=7),
        Invalid(_CLAUDE + "from .tools import ALL\ndef run(messages, plan):\n    for step in plan:\n        tools = [t for t in ALL if t['name'] in step.allowed]\n        r = client.messages.create(model='m', max_tokens=9, tools=tools, messages=messages)\n        messages.append({'role': 'assistant', 'content': r.content})\n", line=7),
        # A tool added on a later turn of the loop.
        Invalid(_CLAUDE + "from .tools import BASE, FINISH\ndef run(messages):\n    tools = list(BASE)\n    for step in range(8):\n        if step == 5:\n            tools.append(FINISH)\n        r = client.messages.create(model='m', max_tokens=9, tools=tools, messages=messages)\n        messages.append({'role': 'assistant', 'content': r.content})\n", line=9),
        # A tool removed once used, over a kept history.
        Invalid(_CLAUDE + "from .tools import BASE\nclass Bot:\n    def __init__(self):\n        self.history = []\n    def ask(self, q, used):\n        tools = list(BASE)\n        if used:\n            tools.remove(used)\n        self.history.append({'role': 'user', 'content': q})\n        return client.messages.create(model='m', max_tokens=9, tools=tools, messages=self.history)\n", line=12),
        # Review (s26): a per-turn choice then passed through a normaliser, or rebound under an `if`.
        Invalid(_CLAUDE + "from .tools import ALL, FINISH, dedupe\ndef run(messages):\n    for step in range(8):\n        tools = [FINISH] if step == 7 else ALL\n        tools = dedupe(tools)\n        r = client.messages.create(model='m', max_tokens=9, tools=tools, messages=messages)\n        messages.append({'role': 'assistant', 'content': r.content})\n", line=8),
        Invalid(_CLAUDE + "from .tools import ALL, FINISH, to_schema\ndef run(messages):\n    for step in range(8):\n        tools = to_schema(ALL)\n        if step == 7:\n            tools = [FINISH]\n        r = client.messages.create(model='m', max_tokens=9, tools=tools, messages=messages)\n        messages.append({'role': 'assistant', 'content': r.content})\n", line=9),
        Invalid(_OPENAI + "from .tools import ALL, FINISH\ndef agent(task):\n    messages = [{'role': 'user', 'content': task}]\n    for step in range(8):\n        r = client.chat.completions.create(model='m', messages=messages, tools=[FINISH] if step == 7 else ALL)\n        messages.append(r.choices[0].message)\n", line=7),
        # The request built as a dict: a tool added by an item assignment on a later turn.
        Invalid(_CLAUDE + "from .tools import FINISH\ndef run(messages):\n    params = {'model': 'm', 'max_tokens': 9, 'messages': messages}\n    for step in range(8):\n        if step == 5:\n            params['tools'] = [FINISH]\n        r = client.messages.create(**params)\n        messages.append({'role': 'assistant', 'content': r.content})\n", line=8),
        # A helper returns the request dict; its parameters read as the caller's arguments.
        Invalid(_CLAUDE + "from .tools import TOOLS, FINISH\ndef _request(messages, tools):\n    return {'model': 'm', 'max_tokens': 9, 'tools': tools, 'messages': messages}\ndef run(messages):\n    r = client.messages.create(**_request(messages, TOOLS))\n    messages.append({'role': 'assistant', 'content': r.content})\n    return client.messages.create(**_request(messages, [FINISH]))\n", line=9),
    ]


_LIST_EDITS = ("append", "extend", "insert", "remove", "pop", "clear")


def _condition(flow, node: cst.CSTNode) -> cst.BaseExpression | None:
    """The test of the innermost ``if`` of its function that ``node`` runs under, or None."""
    child = node
    for anc in flow.facts.ancestors(node):
        if isinstance(anc, (cst.If, cst.IfExp)) and child is not anc.test:
            return anc.test
        if isinstance(anc, (cst.FunctionDef, cst.Lambda)):
            return None
        child = anc
    return None


def _reads_per_call(flow, test: cst.CSTNode, sink: Request, loop: cst.CSTNode | None) -> bool:
    """``test`` reads a name of the function holding ``sink`` (in a loop: one bound in the loop)."""
    holder = flow.holder_of(sink.scope)
    for n in descendants(test, cst.Name):
        found, bindings = flow.index.lookup(n.value, sink.scope)
        if holder is not None and n.value == holder.self_name:
            continue  # `self.x`: set once per object, not per call
        if found is holder and (loop is None or any(flow.facts.within(b.node, loop) for b in bindings)):
            return True
    return False


__all__ = ["PerCallToolSet"]
