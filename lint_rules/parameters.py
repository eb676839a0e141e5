"""PC501-PC503: the model, tool choice or thinking setting changing between calls over one conversation.

A provider's cache entry belongs to one model, and Anthropic hashes the tools
into the whole prefix and ``tool_choice`` and the thinking settings into the
message blocks. Two requests over the same history that differ in one of
those options share nothing past it (provider-cache-rules.md, "Invalidation
levels"). The facts (which calls share a history, what an option's value is)
come from :mod:`promptcache.lint.param_churn`, the reporting from
:mod:`lint_rules.option_churn`; PC306 (the tool set) is in :mod:`lint_rules.tool_set`.
"""

from __future__ import annotations


from promptcache.lint.finding import Severity
from promptcache.lint.param_churn import together
from promptcache.lint.rule import Invalid
from promptcache.lint.request_view import is_anthropic as _anthropic

from lint_rules.option_churn import TAIL as _TAIL
from lint_rules.option_churn import OptionChurnRule

_CLAUDE = "import anthropic\nclient = anthropic.Anthropic()\n"
_OPENAI = "from openai import OpenAI\nclient = OpenAI()\n"


class ModelSwitchOnSharedHistory(OptionChurnRule):
    """
    ## What it does
    Finds two LLM calls of one function that send the same history (the same
    ``messages=`` / ``input=`` list) with different literal ``model=`` values,
    or one call over a kept history whose ``model=`` is chosen per call (a
    conditional on per-call data, a name rebound in the loop that holds the
    call).

    The request may also be built as a dict and sent as ``**params``: a dict
    literal, ``dict(...)``, ``params["x"] = ...``, ``params.update(...)``, or a
    same-module function that returns the dict.

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
    A request dict the code does not fully show (passed to a function of
    another module before the call, merged with the caller's ``**kwargs``):
    the options it may set are not known, so they are not judged.
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
        # The request dict built once per conversation, its model chosen before the loop.
        _CLAUDE + "def chat(first, replies, hard):\n    messages = [{'role': 'user', 'content': first}]\n    params = {'model': 'claude-opus-4-1' if hard else 'claude-haiku-4-5', 'max_tokens': 9, 'messages': messages}\n    for reply in replies:\n        r = client.messages.create(**params)\n        messages.append({'role': 'user', 'content': reply})\n",
        # The dict goes through a function of another module before the second call: its model is not known.
        _CLAUDE + "from .routing import route\ndef answer(history):\n    first = client.messages.create(model='claude-haiku-4-5', max_tokens=9, messages=history)\n    params = {'model': 'claude-haiku-4-5', 'max_tokens': 9, 'messages': history}\n    route(params, first)\n    return client.messages.create(**params)\n",
    ]
    INVALID = [
        Invalid(_CLAUDE + "def answer(history, q):\n    first = client.messages.create(model='claude-haiku-4-5', max_tokens=9, messages=history)\n    if first.content[0].text.startswith('UNSURE'):\n        second = client.messages.create(model='claude-opus-4-1', max_tokens=9, messages=history)\n", line=6),
        Invalid(_OPENAI + "def agent(task):\n    messages = [{'role': 'user', 'content': task}]\n    for step in range(10):\n        model = 'gpt-5' if step == 0 else 'gpt-5-mini'\n        r = client.chat.completions.create(model=model, messages=messages)\n        messages.append(r.choices[0].message)\n", line=7),
        Invalid(_CLAUDE + "class Chat:\n    def __init__(self):\n        self.history = []\n    def ask(self, q, hard):\n        self.history.append({'role': 'user', 'content': q})\n        return client.messages.create(model='claude-opus-4-1' if hard else 'claude-haiku-4-5', max_tokens=9, messages=self.history)\n", line=8),
        # The shared options in a dict spliced into both calls.
        Invalid(_CLAUDE + "def answer(history):\n    base = {'max_tokens': 9, 'messages': history}\n    first = client.messages.create(model='claude-haiku-4-5', **base)\n    if first.content[0].text.startswith('UNSURE'):\n        return client.messages.create(model='claude-opus-4-1', **base)\n", line=7),
        # The model of the request dict switched by an item assignment after the first turn.
        Invalid(_OPENAI + "def agent(task):\n    messages = [{'role': 'user', 'content': task}]\n    kwargs = {'model': 'gpt-5', 'messages': messages}\n    for step in range(10):\n        r = client.chat.completions.create(**kwargs)\n        messages.append(r.choices[0].message)\n        kwargs['model'] = 'gpt-5-mini'\n", line=9),
    ]


class ToolChoiceChurn(OptionChurnRule):
    """
    ## What it does
    Finds two LLM calls of one function over the same history whose
    ``tool_choice=`` differs (a forced tool first, ``auto`` after; leaving
    it out counts as ``auto``), or one call over a kept history whose
    ``tool_choice=`` is chosen per call (a conditional on per-call data, a
    name rebound in the agent loop).

    The request may also be built as a dict and sent as ``**params``: a dict
    literal, ``dict(...)``, ``params["x"] = ...``, ``params.update(...)``, or a
    same-module function that returns the dict.

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
    A request dict the code does not fully show (passed to a function of
    another module before the call, merged with the caller's ``**kwargs``):
    the options it may set are not known, so they are not judged.
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

    def message_for(self, req) -> str:
        """The Anthropic claim is documented; the OpenAI one is not (provider audit 2026-12)."""
        return self.message if _anthropic(req) else self.openai_message

    VALID = [
        _CLAUDE + "TOOL_CHOICE = {'type': 'auto'}\ndef loop(messages, tools):\n    while True:\n        r = client.messages.create(model='m', max_tokens=9, tools=tools, tool_choice=TOOL_CHOICE, messages=messages)\n        if r.stop_reason != 'tool_use':\n            return r\n        messages.append({'role': 'assistant', 'content': r.content})\n",
        # Leaving tool_choice out is auto.
        _CLAUDE + "def loop(messages, tools):\n    r = client.messages.create(model='m', max_tokens=9, tools=tools, tool_choice={'type': 'auto'}, messages=messages)\n    messages.append({'role': 'assistant', 'content': r.content})\n    return client.messages.create(model='m', max_tokens=9, tools=tools, messages=messages)\n",
        # A forced extraction call over its own one-message list.
        _OPENAI + "def extract(history, text, tools):\n    r = client.chat.completions.create(model='m', messages=history, tools=tools)\n    return client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': text}], tools=tools, tool_choice='required')\n",
        # The forced call copies the request dict but sends its own one-message list.
        _OPENAI + "def extract(history, text, tools):\n    chat = {'model': 'm', 'messages': history, 'tools': tools}\n    r = client.chat.completions.create(**chat)\n    one_off = {**chat, 'messages': [{'role': 'user', 'content': text}], 'tool_choice': 'required'}\n    return client.chat.completions.create(**one_off)\n",
        # The caller's **kwargs may carry tool_choice: the second call's value is not known, so not compared.
        _CLAUDE + "def loop(messages, tools, **kwargs):\n    r = client.messages.create(model='m', max_tokens=9, tools=tools, tool_choice={'type': 'any'}, messages=messages)\n    messages.append({'role': 'assistant', 'content': r.content})\n    return client.messages.create(model='m', max_tokens=9, tools=tools, messages=messages, **kwargs)\n",
        # Options merged from the caller's **kwargs may set tool_choice: not known, so not compared.
        _CLAUDE + "def loop(messages, tools, **kwargs):\n    r = client.messages.create(model='m', max_tokens=9, tools=tools, tool_choice={'type': 'any'}, messages=messages)\n    messages.append({'role': 'assistant', 'content': r.content})\n    params = {'model': 'm', 'max_tokens': 9, 'tools': tools, 'messages': messages}\n    params.update(kwargs)\n    return client.messages.create(**params)\n",
    ]
    INVALID = [
        Invalid(_CLAUDE + "def onboard(first, tools):\n    messages = [{'role': 'user', 'content': first}]\n    r = client.messages.create(model='m', max_tokens=9, tools=tools, tool_choice={'type': 'tool', 'name': 'lookup'}, messages=messages)\n    while r.stop_reason == 'tool_use':\n        messages.append({'role': 'assistant', 'content': r.content})\n        r = client.messages.create(model='m', max_tokens=9, tools=tools, tool_choice={'type': 'auto'}, messages=messages)\n", line=8),
        Invalid(_OPENAI + "def agent(task, tools):\n    messages = [{'role': 'user', 'content': task}]\n    for step in range(8):\n        r = client.chat.completions.create(model='m', messages=messages, tools=tools, tool_choice='required' if step == 0 else 'auto')\n        messages.append(r.choices[0].message)\n", line=6),
        Invalid(_OPENAI + "def agent(task, tools):\n    messages = [{'role': 'user', 'content': task}]\n    choice = 'required'\n    for step in range(8):\n        r = client.chat.completions.create(model='m', messages=messages, tools=tools, tool_choice=choice)\n        messages.append(r.choices[0].message)\n        choice = 'auto'\n", line=7),
        # The request dict built before the loop; its tool_choice changed after the first call.
        Invalid(_OPENAI + "def agent(task, tools):\n    messages = [{'role': 'user', 'content': task}]\n    kwargs = {'model': 'm', 'messages': messages, 'tools': tools, 'tool_choice': 'required'}\n    for step in range(8):\n        r = client.chat.completions.create(**kwargs)\n        messages.append(r.choices[0].message)\n        kwargs['tool_choice'] = 'auto'\n", line=9),
        # dict(...) with the forced choice, then .update() to auto for the rest of the conversation.
        Invalid(_CLAUDE + "def onboard(first, tools):\n    messages = [{'role': 'user', 'content': first}]\n    request = dict(model='m', max_tokens=9, tools=tools, messages=messages, tool_choice={'type': 'tool', 'name': 'lookup'})\n    r = client.messages.create(**request)\n    messages.append({'role': 'assistant', 'content': r.content})\n    request.update(tool_choice={'type': 'auto'})\n    return client.messages.create(**request)\n", line=8),
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

    The request may also be built as a dict and sent as ``**params``: a dict
    literal, ``dict(...)``, ``params["x"] = ...``, ``params.update(...)``, or a
    same-module function that returns the dict.

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
    handler; a setting chosen by a test on the model the request sends
    (thinking only for the models that support it: it changes only when the
    model does, which is PC501).
    A request dict the code does not fully show (passed to a function of
    another module before the call, merged with the caller's ``**kwargs``):
    the options it may set are not known, so they are not judged.
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

    def message_for(self, req) -> str:
        """Anthropic's invalidation is documented; OpenAI's is listed but not measured (provider audit 2026-12)."""
        return self.message if _anthropic(req) else self.openai_message

    VALID = [
        _CLAUDE + "THINKING = {'type': 'enabled', 'budget_tokens': 3000}\ndef turn(history, q):\n    history.append({'role': 'user', 'content': q})\n    r = client.messages.create(model='m', max_tokens=9, thinking=THINKING, messages=history)\n    r2 = client.messages.create(model='m', max_tokens=9, thinking=THINKING, messages=history)\n",
        # Leaving thinking out is disabled.
        _CLAUDE + "def turn(history, q):\n    r = client.messages.create(model='m', max_tokens=9, thinking={'type': 'disabled'}, messages=history)\n    history.append({'role': 'assistant', 'content': r.content})\n    return client.messages.create(model='m', max_tokens=9, messages=history)\n",
        # One effort per conversation, chosen before the loop.
        _OPENAI + "def solve(task, hard):\n    effort = 'high' if hard else 'low'\n    messages = [{'role': 'user', 'content': task}]\n    for _ in range(5):\n        r = client.chat.completions.create(model='o3', messages=messages, reasoning_effort=effort)\n        messages.append(r.choices[0].message)\n",
        # Issue 11 review: a nested conditional on a module setting is one value for every call.
        _OPENAI + "DEEP = True\ndef turn(history, q):\n    history.append({'role': 'user', 'content': q})\n    return client.responses.create(model='gpt-5', input=history, reasoning={'effort': 'high' if DEEP else 'low'})\n",
        # Thinking switched on per object (a setting of the bot), in the request dict: one value per conversation.
        _CLAUDE + "class Tutor:\n    def ask(self, q):\n        self.history.append({'role': 'user', 'content': q})\n        params = {'model': 'm', 'max_tokens': 4000, 'messages': self.history}\n        if self.deep:\n            params.update(thinking={'type': 'enabled', 'budget_tokens': 3000})\n        return client.messages.create(**params)\n",
        # Thinking only for the models that support it: it changes only when the model does (that is PC501).
        _CLAUDE + "class Chat:\n    def __init__(self):\n        self.history = []\n    def ask(self, q, model):\n        self.history.append({'role': 'user', 'content': q})\n        params = {'model': model, 'max_tokens': 4000, 'messages': self.history}\n        if model.startswith('claude-sonnet-4'):\n            params['thinking'] = {'type': 'enabled', 'budget_tokens': 2000}\n        return client.messages.create(**params)\n",
        _OPENAI + "def turn(history, q, model):\n    history.append({'role': 'user', 'content': q})\n    return client.chat.completions.create(model=model, messages=history, reasoning_effort='high' if model.startswith('o') else None)\n",
        # A same-module helper returns the request dict with one thinking setting.
        _CLAUDE + "THINKING = {'type': 'enabled', 'budget_tokens': 3000}\ndef _params(history):\n    return {'model': 'm', 'max_tokens': 4000, 'thinking': THINKING, 'messages': history}\ndef turn(history, q):\n    history.append({'role': 'user', 'content': q})\n    r = client.messages.create(**_params(history))\n    history.append({'role': 'assistant', 'content': r.content})\n    return client.messages.create(**_params(history))\n",
    ]
    INVALID = [
        Invalid(_CLAUDE + "def tutor(history, q, hard):\n    history.append({'role': 'user', 'content': q})\n    if hard:\n        r = client.messages.create(model='m', max_tokens=9, thinking={'type': 'enabled', 'budget_tokens': 4000}, messages=history)\n    else:\n        r = client.messages.create(model='m', max_tokens=9, thinking={'type': 'disabled'}, messages=history)\n", line=8),
        Invalid(_OPENAI + "def turn(history, q):\n    history.append({'role': 'user', 'content': q})\n    return client.chat.completions.create(model='o3', messages=history, reasoning_effort='high' if len(q) > 200 else 'low')\n", line=5),
        Invalid(_OPENAI + "def turn(history):\n    r = client.responses.create(model='gpt-5', input=history, reasoning={'effort': 'low'})\n    history.append(r.output)\n    return client.responses.create(model='gpt-5', input=history, reasoning={'effort': 'high'})\n", line=6),
        # Issue 11 review (snips3/v_effort.py): the conditional nested in the reasoning dict.
        Invalid(_OPENAI + "def turn(history, q):\n    history.append({'role': 'user', 'content': q})\n    return client.responses.create(model='gpt-5', input=history, reasoning={'effort': 'high' if 'prove' in q else 'low'})\n", line=5),
        # The request built with dict(...), thinking added by an item assignment for hard questions.
        Invalid(_CLAUDE + "class Bot:\n    def __init__(self):\n        self.history = []\n    def ask(self, q, hard):\n        self.history.append({'role': 'user', 'content': q})\n        params = dict(model='m', max_tokens=9, messages=self.history)\n        if hard:\n            params['thinking'] = {'type': 'enabled', 'budget_tokens': 2000}\n        return client.messages.create(**params)\n", line=10),
        # The effort chosen per turn in a request dict sent over the kept history.
        Invalid(_OPENAI + "def turn(history, q):\n    history.append({'role': 'user', 'content': q})\n    kwargs = {'model': 'o3', 'messages': history}\n    kwargs.update({'reasoning_effort': 'high' if len(q) > 200 else 'low'})\n    return client.chat.completions.create(**kwargs)\n", line=6),
    ]


__all__ = ["ModelSwitchOnSharedHistory", "ThinkingOrEffortChurn", "ToolChoiceChurn"]
