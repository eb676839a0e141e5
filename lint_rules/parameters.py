"""PC306, PC5xx: request options that change between calls over one conversation.

A provider's cache entry belongs to one model, and Anthropic hashes the tools
into the whole prefix and ``tool_choice`` and the thinking settings into the
message blocks. Two requests over the same history that differ in one of
those options share nothing past it (provider-cache-rules.md, "Invalidation
levels"). The facts (which calls share a history, what an option's value is)
come from :mod:`promptcache.lint.param_churn`.
"""

from __future__ import annotations

import libcst as cst

from promptcache.lint.finding import Severity
from promptcache.lint.index import Scope
from promptcache.lint.param_churn import ABSENT, OptionChurnRule, in_loop, persistent, resolve, together, value_key
from promptcache.lint.rule import Invalid
from promptcache.lint.sinks import Sink
from promptcache.lint.walk import descendants

_CLAUDE = "import anthropic\nclient = anthropic.Anthropic()\n"
_OPENAI = "from openai import OpenAI\nclient = OpenAI()\n"
_TAIL = ": {kw}= is {here} here but {there} {how} over the same history `{history}`; "


def _anthropic(sink) -> bool:
    """A call of Anthropic's API (or a Claude model through LiteLLM)."""
    model = sink.kw("model")
    return sink.api == "anthropic" or sink.api == "litellm" and isinstance(model, cst.SimpleString) and "claude" in model.value.lower()


class ModelSwitchOnSharedHistory(OptionChurnRule):
    """
    ## What it does
    Finds two LLM calls of one function that send the same history (the same
    ``messages=`` / ``input=`` list) with different literal ``model=`` values,
    or one call over a kept history whose ``model=`` is chosen per call (a
    conditional on per-call data, a name rebound in the loop that holds the
    call).

    ## Why is this bad?
    A cached prefix belongs to one model: every provider keys its cache by
    model. Escalating to a bigger model, or routing each turn to a cheaper
    one, re-sends the whole conversation to a model that has never seen it,
    so that call pays for every token of the history at the full input price
    (and writes a second copy of the cache).

    ## Example
    ```python
    first = client.messages.create(model="claude-haiku-4-5", system=PROMPT, messages=history)
    if first.content[0].text.startswith("UNSURE"):
        second = client.messages.create(model="claude-opus-4-1", system=PROMPT, messages=history)
    ```

    ## Use instead
    Pick one model per conversation (route on the first message, then keep
    it), or send the escalated call a short new request (the question and
    the facts it needs) rather than the whole history.

    ## When it does not fire
    One model per conversation (a constant, or one value chosen before the
    conversation loop); calls over different lists (a one-off summary request
    built as a new literal list); two calls that both run on every turn, each
    over its own list (a cheap model titles ``history + [ask]``, the main
    model answers over ``history``: each model sees every turn and keeps its
    own cache warm); a call in an ``except`` handler (a fallback
    on error); two branches of one ``if`` over a history that lives only for
    the call; values that are not known statically (two different names are
    not assumed to hold different models).
    """

    code = "PC501"
    name = "model-switch-mid-conversation"
    severity = Severity.WARNING
    keywords = ("model",)
    message = ("model switch on a shared history" + _TAIL + "a provider's cache belongs to one model, so this call "
               "re-reads the whole history at the full input price; keep one model per conversation")

    def skip_pair(self, pair) -> bool:
        """A consistent two-model pattern (:func:`promptcache.lint.param_churn.together`): not a switch."""
        return together(self.flow, pair)

    VALID = [
        _CLAUDE + "MODEL = 'claude-sonnet-4-5'\ndef turn(history, q):\n    history.append({'role': 'user', 'content': q})\n    r = client.messages.create(model=MODEL, max_tokens=9, messages=history)\n    r2 = client.messages.create(model=MODEL, max_tokens=9, messages=history)\n",
        # A summary of the history goes to a cheap model as a new one-message request: not the same list.
        _CLAUDE + "def turn(history, q):\n    r = client.messages.create(model='claude-opus-4-1', max_tokens=9, messages=history)\n    s = client.messages.create(model='claude-haiku-4-5', max_tokens=9, messages=[{'role': 'user', 'content': f'Summarise: {r}'}])\n",
        # One model per conversation: routed once, before the loop.
        _OPENAI + "def chat(first, replies):\n    model = 'gpt-5' if len(first) > 500 else 'gpt-5-mini'\n    messages = [{'role': 'user', 'content': first}]\n    for reply in replies:\n        r = client.chat.completions.create(model=model, messages=messages)\n        messages.append({'role': 'user', 'content': reply})\n",
        # A fallback on error is not a switch on the normal path.
        _CLAUDE + "def ask(history):\n    try:\n        return client.messages.create(model='claude-sonnet-4-5', max_tokens=9, messages=history)\n    except anthropic.APIStatusError:\n        return client.messages.create(model='claude-haiku-4-5', max_tokens=9, messages=history)\n",
        # A per-process choice of provider (a self attribute), not a per-call one.
        _CLAUDE + "class Bot:\n    def ask(self, history, q):\n        history.append({'role': 'user', 'content': q})\n        if self.fast:\n            return client.messages.create(model='claude-haiku-4-5', max_tokens=9, messages=history)\n        else:\n            return client.messages.create(model='claude-opus-4-1', max_tokens=9, messages=history)\n",
        # Issue 11 review: each turn a cheap model titles `history + [ask]` and the main model answers over `history`:
        # both run every turn, each keeps its own cache warm.
        _CLAUDE + "def turn(history, q):\n    history.append({'role': 'user', 'content': q})\n    title = client.messages.create(model='claude-haiku-4-5', max_tokens=20, messages=history + [{'role': 'user', 'content': 'Give this chat a title.'}])\n    return client.messages.create(model='claude-sonnet-4-5', max_tokens=512, messages=history)\n",
        # Fresh history per call, one branch runs: one model per conversation.
        _CLAUDE + "def ask(q, hard):\n    messages = [{'role': 'user', 'content': q}]\n    if hard:\n        return client.messages.create(model='claude-opus-4-1', max_tokens=9, messages=messages)\n    else:\n        return client.messages.create(model='claude-haiku-4-5', max_tokens=9, messages=messages)\n",
    ]
    INVALID = [
        Invalid(_CLAUDE + "def answer(history, q):\n    first = client.messages.create(model='claude-haiku-4-5', max_tokens=9, messages=history)\n    if first.content[0].text.startswith('UNSURE'):\n        second = client.messages.create(model='claude-opus-4-1', max_tokens=9, messages=history)\n", line=6),
        Invalid(_OPENAI + "def agent(task):\n    messages = [{'role': 'user', 'content': task}]\n    for step in range(10):\n        model = 'gpt-5' if step == 0 else 'gpt-5-mini'\n        r = client.chat.completions.create(model=model, messages=messages)\n        messages.append(r.choices[0].message)\n", line=7),
        Invalid(_CLAUDE + "class Chat:\n    def __init__(self):\n        self.history = []\n    def ask(self, q, hard):\n        self.history.append({'role': 'user', 'content': q})\n        return client.messages.create(model='claude-opus-4-1' if hard else 'claude-haiku-4-5', max_tokens=9, messages=self.history)\n", line=8),
    ]


class ToolChoiceChurn(OptionChurnRule):
    """
    ## What it does
    Finds two LLM calls of one function over the same history whose
    ``tool_choice=`` differs (a forced tool first, ``auto`` after; leaving
    it out counts as ``auto``), or one call over a kept history whose
    ``tool_choice=`` is chosen per call (a conditional on per-call data, a
    name rebound in the agent loop).

    ## Why is this bad?
    Anthropic hashes ``tool_choice`` into the message blocks: changing it
    invalidates every cached message, so the call after the change re-reads
    the whole conversation at the full price (tools and system stay cached;
    provider-cache-rules.md, "Invalidation levels"). OpenAI's caching guide
    does not list ``tool_choice`` among the settings that change the cached
    prefix (provider audit 2026-12, [O-G]): on OpenAI the finding says the
    cost is assumed, not documented.

    ## Example
    ```python
    r = client.messages.create(..., tool_choice={"type": "tool", "name": "lookup"}, messages=messages)
    while r.stop_reason == "tool_use":
        ...
        r = client.messages.create(..., tool_choice={"type": "auto"}, messages=messages)
    ```

    ## Use instead
    Keep one ``tool_choice`` for the whole conversation (``auto``, and ask for
    the first tool in the system prompt), or put the forced step in its own
    short request.

    ## When it does not fire
    One constant ``tool_choice`` for every call; calls over different lists;
    values not known statically; a call in an ``except`` handler.
    """

    code = "PC502"
    name = "tool-choice-churn"
    severity = Severity.WARNING
    keywords = ("tool_choice",)
    defaults = {"tool_choice": ('"auto"', '{"type": "auto"}')}
    default_name = {"tool_choice": "auto"}
    message = ("tool_choice changes over a shared history" + _TAIL + "a different tool_choice invalidates every "
               "cached message block; keep one tool_choice per conversation")
    openai_message = ("tool_choice changes over a shared history" + _TAIL + "Anthropic invalidates the cached message "
                      "blocks on this change; OpenAI's caching guide does not list tool_choice among the settings that "
                      "change the prefix, so a cost here is assumed; keep one tool_choice per conversation")

    def message_for(self, sink) -> str:
        """The Anthropic claim is documented; the OpenAI one is not (provider audit 2026-12)."""
        return self.message if _anthropic(sink) else self.openai_message

    VALID = [
        _CLAUDE + "TOOL_CHOICE = {'type': 'auto'}\ndef loop(messages, tools):\n    while True:\n        r = client.messages.create(model='m', max_tokens=9, tools=tools, tool_choice=TOOL_CHOICE, messages=messages)\n        if r.stop_reason != 'tool_use':\n            return r\n        messages.append({'role': 'assistant', 'content': r.content})\n",
        # Leaving tool_choice out is auto.
        _CLAUDE + "def loop(messages, tools):\n    r = client.messages.create(model='m', max_tokens=9, tools=tools, tool_choice={'type': 'auto'}, messages=messages)\n    messages.append({'role': 'assistant', 'content': r.content})\n    return client.messages.create(model='m', max_tokens=9, tools=tools, messages=messages)\n",
        # A forced extraction call over its own one-message list.
        _OPENAI + "def extract(history, text, tools):\n    r = client.chat.completions.create(model='m', messages=history, tools=tools)\n    return client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': text}], tools=tools, tool_choice='required')\n",
    ]
    INVALID = [
        Invalid(_CLAUDE + "def onboard(first, tools):\n    messages = [{'role': 'user', 'content': first}]\n    r = client.messages.create(model='m', max_tokens=9, tools=tools, tool_choice={'type': 'tool', 'name': 'lookup'}, messages=messages)\n    while r.stop_reason == 'tool_use':\n        messages.append({'role': 'assistant', 'content': r.content})\n        r = client.messages.create(model='m', max_tokens=9, tools=tools, tool_choice={'type': 'auto'}, messages=messages)\n", line=8),
        Invalid(_OPENAI + "def agent(task, tools):\n    messages = [{'role': 'user', 'content': task}]\n    for step in range(8):\n        r = client.chat.completions.create(model='m', messages=messages, tools=tools, tool_choice='required' if step == 0 else 'auto')\n        messages.append(r.choices[0].message)\n", line=6),
        Invalid(_OPENAI + "def agent(task, tools):\n    messages = [{'role': 'user', 'content': task}]\n    choice = 'required'\n    for step in range(8):\n        r = client.chat.completions.create(model='m', messages=messages, tools=tools, tool_choice=choice)\n        messages.append(r.choices[0].message)\n        choice = 'auto'\n", line=7),
    ]


class ThinkingOrEffortChurn(OptionChurnRule):
    """
    ## What it does
    Finds two LLM calls of one function over the same history whose
    ``thinking=`` (Anthropic; leaving it out counts as disabled),
    ``reasoning_effort=`` / ``reasoning=`` / ``verbosity=`` (OpenAI) or
    ``output_config=`` (Anthropic effort) differ, or one call over a kept
    history whose setting is chosen per call (a conditional on per-call data,
    a name rebound in the loop).

    ## Why is this bad?
    Anthropic hashes the thinking settings into the message blocks: turning
    thinking on for hard questions and off for the rest makes consecutive
    turns of one conversation miss the cached messages and re-read the whole
    history (provider-cache-rules.md, "Invalidation levels"). OpenAI's
    caching guide (GPT-5.6 era) lists ``reasoning.effort`` and
    ``text.verbosity`` among the settings that change the cached prefix
    (provider audit 2026-12, [O-G]); a probe in that audit still read the
    cached prefix after a change, so how much an OpenAI call re-reads is not
    settled, and the finding says so.

    ## Example
    ```python
    thinking = {"type": "enabled", "budget_tokens": 4000} if hard else {"type": "disabled"}
    client.messages.create(..., thinking=thinking, messages=history)
    ```

    ## Use instead
    Choose the thinking / effort setting once per conversation and keep it;
    a budget that is unused on easy turns costs nothing.

    ## When it does not fire
    One constant setting for every call of the conversation; calls over
    different lists; values not known statically; a call in an ``except``
    handler.
    """

    code = "PC503"
    name = "thinking-or-effort-churn"
    severity = Severity.WARNING
    keywords = ("thinking", "reasoning_effort", "reasoning", "verbosity", "output_config")
    defaults = {"thinking": ('{"type": "disabled"}',)}
    default_name = {"thinking": "disabled"}
    message = ("thinking / effort setting changes over a shared history" + _TAIL + "changing it invalidates the "
               "cached message blocks; keep one setting per conversation")
    openai_message = ("reasoning setting changes over a shared history" + _TAIL + "OpenAI's caching guide lists "
                      "reasoning effort and verbosity among the settings that change the cached prefix (how much is "
                      "re-read is not settled); keep one setting per conversation")

    def message_for(self, sink) -> str:
        """Anthropic's invalidation is documented; OpenAI's is listed but not measured (provider audit 2026-12)."""
        return self.message if _anthropic(sink) else self.openai_message

    VALID = [
        _CLAUDE + "THINKING = {'type': 'enabled', 'budget_tokens': 3000}\ndef turn(history, q):\n    history.append({'role': 'user', 'content': q})\n    r = client.messages.create(model='m', max_tokens=9, thinking=THINKING, messages=history)\n    r2 = client.messages.create(model='m', max_tokens=9, thinking=THINKING, messages=history)\n",
        # Leaving thinking out is disabled.
        _CLAUDE + "def turn(history, q):\n    r = client.messages.create(model='m', max_tokens=9, thinking={'type': 'disabled'}, messages=history)\n    history.append({'role': 'assistant', 'content': r.content})\n    return client.messages.create(model='m', max_tokens=9, messages=history)\n",
        # One effort per conversation, chosen before the loop.
        _OPENAI + "def solve(task, hard):\n    effort = 'high' if hard else 'low'\n    messages = [{'role': 'user', 'content': task}]\n    for _ in range(5):\n        r = client.chat.completions.create(model='o3', messages=messages, reasoning_effort=effort)\n        messages.append(r.choices[0].message)\n",
    ]
    INVALID = [
        Invalid(_CLAUDE + "def tutor(history, q, hard):\n    history.append({'role': 'user', 'content': q})\n    if hard:\n        r = client.messages.create(model='m', max_tokens=9, thinking={'type': 'enabled', 'budget_tokens': 4000}, messages=history)\n    else:\n        r = client.messages.create(model='m', max_tokens=9, thinking={'type': 'disabled'}, messages=history)\n", line=8),
        Invalid(_OPENAI + "def turn(history, q):\n    history.append({'role': 'user', 'content': q})\n    return client.chat.completions.create(model='o3', messages=history, reasoning_effort='high' if len(q) > 200 else 'low')\n", line=5),
        Invalid(_OPENAI + "def turn(history):\n    r = client.responses.create(model='gpt-5', input=history, reasoning={'effort': 'low'})\n    history.append(r.output)\n    return client.responses.create(model='gpt-5', input=history, reasoning={'effort': 'high'})\n", line=6),
    ]


class PerCallToolSet(OptionChurnRule):
    """
    ## What it does
    Finds a ``tools=`` that differs between calls over one history: two calls
    of one function over the same ``messages=`` list with different tool lists
    (one without tools, one with a single tool picked for the step), or one
    call over a kept history whose tools are chosen per call (a conditional
    on per-call data, a name rebound in the loop, a list filtered by per-call
    data: ``[t for t in ALL_TOOLS if t["name"] in allowed]``).

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
    passed through); a call in an ``except`` handler.
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

    def single_site(self, sink: Sink, kw: str) -> list[str]:
        values = super().single_site(sink, kw)
        if values:
            return values
        expr, scope = sink.kw(kw), sink.scope
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

    def _changed_per_call(self, sink: Sink, name: str, assigns: list) -> cst.Call | None:
        """A ``tools.append/extend/insert/remove/pop/clear(...)`` that makes the list differ between calls over
        one history: in the loop holding the call on a list built before the loop, or under an ``if`` on
        per-call data (in the loop: names bound in it; over a kept history: a parameter or local)."""
        flow = self.flow
        holder = flow.holder_of(sink.scope)
        loop = in_loop(flow, sink.call)
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
                if not _within(flow, call, loop):
                    continue
                if not _within(flow, assigns[0].node, loop):
                    return call  # built once, changed on every turn
            test = _condition(flow, call)
            if test is not None and _reads_per_call(flow, test, sink, loop):
                return call
        return None

    def _filtered_per_call(self, sink: Sink, comp: cst.ListComp | cst.GeneratorExp) -> bool:
        """A comprehension over a fixed tool list whose ``if`` reads per-call data (in a loop: a name bound in the
        loop; over a kept history: a parameter or local of the function), not only the element itself."""
        loop = in_loop(self.flow, sink.call)
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
                if found is holder and (loop is None or any(_within(self.flow, b.node, loop) for b in bindings)):
                    return True
        return False

    VALID = [
        _CLAUDE + "from .tools import TOOLS\ndef loop(messages):\n    while True:\n        r = client.messages.create(model='m', max_tokens=9, tools=TOOLS, messages=messages)\n        if r.stop_reason != 'tool_use':\n            return r\n        messages.append({'role': 'assistant', 'content': r.content})\n",
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
    ]
    INVALID = [
        Invalid(_CLAUDE + "from .tools import TOOLS\ndef run(messages):\n    r = client.messages.create(model='m', max_tokens=9, tools=TOOLS, messages=messages)\n    messages.append({'role': 'assistant', 'content': r.content})\n    return client.messages.create(model='m', max_tokens=9, messages=messages)\n", line=7),
        Invalid(_CLAUDE + "from .tools import ALL\ndef run(messages, plan):\n    for step in plan:\n        tools = [t for t in ALL if t['name'] in step.allowed]\n        r = client.messages.create(model='m', max_tokens=9, tools=tools, messages=messages)\n        messages.append({'role': 'assistant', 'content': r.content})\n", line=7),
        # A tool added on a later turn of the loop.
        Invalid(_CLAUDE + "from .tools import BASE, FINISH\ndef run(messages):\n    tools = list(BASE)\n    for step in range(8):\n        if step == 5:\n            tools.append(FINISH)\n        r = client.messages.create(model='m', max_tokens=9, tools=tools, messages=messages)\n        messages.append({'role': 'assistant', 'content': r.content})\n", line=9),
        # A tool removed once used, over a kept history.
        Invalid(_CLAUDE + "from .tools import BASE\nclass Bot:\n    def __init__(self):\n        self.history = []\n    def ask(self, q, used):\n        tools = list(BASE)\n        if used:\n            tools.remove(used)\n        self.history.append({'role': 'user', 'content': q})\n        return client.messages.create(model='m', max_tokens=9, tools=tools, messages=self.history)\n", line=12),
        Invalid(_OPENAI + "from .tools import ALL, FINISH\ndef agent(task):\n    messages = [{'role': 'user', 'content': task}]\n    for step in range(8):\n        r = client.chat.completions.create(model='m', messages=messages, tools=[FINISH] if step == 7 else ALL)\n        messages.append(r.choices[0].message)\n", line=7),
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


def _reads_per_call(flow, test: cst.CSTNode, sink: Sink, loop: cst.CSTNode | None) -> bool:
    """``test`` reads a name of the function holding ``sink`` (in a loop: one bound in the loop)."""
    holder = flow.holder_of(sink.scope)
    for n in descendants(test, cst.Name):
        found, bindings = flow.index.lookup(n.value, sink.scope)
        if holder is not None and n.value == holder.self_name:
            continue  # `self.x`: set once per object, not per call
        if found is holder and (loop is None or any(_within(flow, b.node, loop) for b in bindings)):
            return True
    return False


def _within(flow, node: cst.CSTNode, outer: cst.CSTNode) -> bool:
    return node is outer or any(anc is outer for anc in flow.facts.ancestors(node))


__all__ = ["ModelSwitchOnSharedHistory", "PerCallToolSet", "ThinkingOrEffortChurn", "ToolChoiceChurn", "ABSENT"]
