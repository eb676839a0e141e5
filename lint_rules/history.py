"""PC2xx: conversation history rewritten instead of appended.

A conversation caches well when each request is the previous one plus new
messages. Summarising, sliding or editing the history on every turn rewrites
the prefix after the system prompt, so each turn pays for the whole
conversation again.
"""

from __future__ import annotations

import libcst as cst

from promptcache.lint import sources as S
from promptcache.lint.finding import Severity
from promptcache.lint.prompt_uses import EXPORTED, PREFIX, returned_landings
from promptcache.lint.rule import FlowRule, LintRule

from lint_rules.history_cases import (
    PC201_INVALID, PC202_BUILDER_VALID, PC202_INVALID, PC203_HYSTERESIS_VALID, PC203_INVALID, PC204_INVALID, PC204_NORMALISED_VALID, PC204_VALID)

_CLAUDE = "import anthropic\nclient = anthropic.Anthropic()\n"
_OPENAI = "from openai import OpenAI\nclient = OpenAI()\n"
_SDK = "from promptcache import Conversation, PromptBuilder\n"


class _SiteRule(LintRule):
    """Reports the ``(node, detail)`` sites that :meth:`sites` takes from the shared turn analysis."""

    def sites(self) -> list:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def leave_Module(self, node: cst.Module) -> None:
        if self.flow.is_llm_file:
            for site, detail in self.sites():
                self.report(site, self.message.format(detail=detail))


class PerTurnSummarization(_SiteRule):
    """
    ## What it does
    Finds conversation summarisation on every turn: a call to a
    ``summarize``/``compress``/``condense``/``compact`` function over the
    history (or such a method that reassigns the history attribute:
    ``self.condense()`` setting ``self.messages``), or an LLM call asking to summarise the chat, on the per-turn path
    (a loop body or a request handler) with no size guard; and LangChain's
    ``ConversationSummaryMemory`` / ``ConversationSummaryBufferMemory`` (and
    LlamaIndex's ``ChatSummaryMemoryBuffer``).

    ## Why is this bad?
    A fresh summary replaces the messages the provider has cached, so the
    prefix after the system prompt is new on every turn: every turn pays for
    the summarising call and a full uncached prefill of the conversation.

    ## Example
    ```python
    def on_message(event):
        history.append({"role": "user", "content": event["text"]})
        history = compress_history(history, keep_recent=4)
    ```

    ## Use instead
    ```python
    if count_tokens(history) > COMPACT_THRESHOLD_TOKENS:
        history = compress_history(history, keep_recent=4)
    ```
    Compact rarely, at a threshold, so ordinary turns only append.

    ## When it does not fire
    The call sits under an ``if`` (or ``while``) that compares ``len(...)``, a
    token count or a ``max_*``/``*limit*``/``*threshold*``/``*budget*`` name,
    after such an early return, or in a helper that starts with such a guard;
    summarising a document rather than the conversation; a summariser's own
    loop over the pieces of one conversation (``for chunk in chunks:`` with a
    call on ``chunk`` and not on the stored history); a request handler
    that summarises the conversation for display without storing the summary
    in place of the history. (A summarising LLM call alone in a function makes
    it a helper, reported where it is called per turn; in a request handler
    such as ``@app.post(...)`` that replaces the stored history with the
    summary it is reported itself.)
    """

    code = "PC201"
    name = "per-turn-summarization"
    severity = Severity.ERROR
    message = (
        "{detail} rewrites the conversation on every turn: the cached prefix after the system prompt is replaced "
        "each time, so every turn re-pays the whole history; summarise only past a size threshold"
    )

    def sites(self) -> list:
        return self.flow.summaries.summarisations

    VALID = [
        # Issue 11 (crewAI): a summariser's own loop over chunks, and a formatter named `..._for_summary`.
        _OPENAI + "def summarize_messages(messages):\n    for chunk in split_chunks(messages):\n        text = _format_messages_for_summary(chunk)\n        client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': 'Summarize: ' + text}])\n",
        _OPENAI + "def turn(history, text):\n    history.append({'role': 'user', 'content': text})\n    if len(history) > 40:\n        history = compact_history(history)\n    return client.chat.completions.create(model='m', messages=history)\n",
        _OPENAI + "def summarise_article(text):\n    return client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': f'Summarize this article: {text}'}])\n",
        _OPENAI + "MAX_TOKENS = 5000\ndef turn(history):\n    if tokens(history) < MAX_TOKENS:\n        return client.chat.completions.create(model='m', messages=history)\n    history = summarize_history(history)\n",
        # A route that shows a summary without replacing the history: the conversation is unchanged.
        # Issue 11 review: a condensing method called only past a size threshold.
        _OPENAI + "class Memory:\n    def __init__(self):\n        self.messages = []\n    def condense(self):\n        text = '\\n'.join(m['content'] for m in self.messages)\n        r = client.chat.completions.create(model='mini', messages=[{'role': 'user', 'content': 'Condense: ' + text}])\n        self.messages = [{'role': 'assistant', 'content': r.choices[0].message.content}]\n    def turn(self, user_text):\n        self.messages.append({'role': 'user', 'content': user_text})\n        if len(self.messages) > 40:\n            self.condense()\n        return client.chat.completions.create(model='m', messages=self.messages)\n",
        _OPENAI + "from fastapi import FastAPI\napp = FastAPI()\nSESSIONS = {}\n@app.get('/summary/{sid}')\ndef summary(sid):\n    messages = SESSIONS[sid]\n    recap = client.chat.completions.create(model='m', messages=messages + [{'role': 'user', 'content': 'Summarize our conversation so far.'}])\n    return {'summary': recap.choices[0].message.content}\n",
        # Issue 11: a summarising helper whose request is a `**params` dict, called past a size threshold only.
        _OPENAI + "def ask_model(history):\n    params = {'model': 'mini', 'messages': history + [{'role': 'user', 'content': 'Summarize our conversation.'}]}\n    return client.chat.completions.create(**params)\ndef turn(history, text):\n    if len(history) > 50:\n        history[:] = [{'role': 'user', 'content': ask_model(history)}]\n    return client.chat.completions.create(model='m', messages=history)\n",
    ]
    INVALID = PC201_INVALID


class SummaryBeforeHistory(FlowRule):
    """
    ## What it does
    Finds a summary of the conversation placed ahead of the retained history:
    in the system prompt, in the first message, inserted at index 0, or listed
    before ``*history``.

    ## Why is this bad?
    Every refresh of the summary changes the prefix at the point where it is
    placed, so everything after it, the whole retained conversation, is
    invalidated in the provider's cache.

    ## Example
    ```python
    system=f"{PLANNER_PROMPT}\\n\\nTrip so far:\\n{self.summary}"
    ```

    ## Use instead
    Append the new summary as a message at the end of the conversation (or
    start a new conversation whose first user message is the summary), and
    keep the system prompt constant.

    ## When it does not fire
    A summary appended after the history; summaries of documents that are
    not names like ``summary``/``recap``/``digest`` and not produced by a
    summarising call; an unseen summarising call given no part of the
    conversation (its name, receiver and arguments, followed through their
    bindings, speak of no history, messages, chat or memory:
    ``create_dataset_summary(trainset=trainset)``); an attribute of an imported name that the module
    neither writes nor calls anything on
    (``prompts.system_prompt_extract_relevant_summary``: a prompt another
    module defines, not a summary made at run time; ``session.refresh()``
    then ``session.summary`` is reported); a request handler named like a
    prompt that returns a response object (``@router.get(...)``
    ``list_prompt_reports()``): the HTTP response, not a prompt; an attribute
    bound only in ``__init__`` or the class body (``self.compressed_summary =
    compressed_summary``, a pydantic field), or cleaned up from its own value
    elsewhere (``self.summary = self.summary if ... else ""``): the summary the
    object was built with, fixed for its conversation (one built from a
    summarising call there, refreshed in another method, or given to an
    object the module builds for one call, ``Agent(h, summarize(h)).ask(q)``,
    is reported). A summary in
    what a prompt-named function returns (``build_prompt()``) that the module
    calls is reported only where one of those calls puts the result ahead of
    the history (a system message, ``system=``, a message before others): not
    when every call puts it in the newest user message, a request of its own
    (a summarising prompt carrying the previous summary) or an object the
    analysis does not follow. One the module never calls, or whose result a
    caller returns out of the module, stands, settled by where its importers
    put it.
    """

    code = "PC202"
    name = "summary-before-history"
    severity = Severity.ERROR
    message = (
        "a conversation summary (`{detail}`) reaches {slot}, ahead of the retained history: each refresh "
        "invalidates the cached conversation after it; append the summary as a new message instead"
    )

    def findings(self, flow) -> list:
        """A summary source on a value in the system prompt, unless PC101 or PC303 (enabled) reports the value. A
        summary dumped as unsorted JSON is two problems, both reported (PC304 fixes the key order, not the summary)."""
        if flow.area != "system" or not flow.has(S.SUMMARY) or self.owned_by(flow, (S.VOLATILE, "PC101"), (S.SHUFFLED, "PC303")):
            return []
        if flow.slot.kind == "builder" and (landings := returned_landings(self.flow, flow.slot.scope)) is not None \
                and not landings & {PREFIX, EXPORTED}:
            return []  # the module's calls of the builder put its result nowhere ahead of the history (issue 11)
        return [self.issue(flow, detail=flow.of(S.SUMMARY)[0].detail)]

    def leave_Module(self, node: cst.Module) -> None:
        super().leave_Module(node)
        if self.flow.is_llm_file:
            for site in self.flow.summaries.summaries_before_history:
                self.report(site, self.message.format(detail=self.flow.code(site), slot="a leading message"))

    VALID = [
        # Issue 11 (khoj): a prompt constant of an imported prompt module, named after the summary it asks for.
        _OPENAI + "from khoj.processor.conversation import prompts\ndef extract(q, corpus, history):\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': prompts.system_prompt_extract_relevant_summary}, *history, {'role': 'user', 'content': f'{corpus}\\n\\n{q}'}])\n",
        # Issue 11 (pydantic-ai): a trim before a compaction is not a summary, nor is a data class named `...Summary`.
        _CLAUDE + "def turn(history, parts):\n    kept = trim_before_compaction(parts)\n    return client.messages.create(model='m', system=kept[0], messages=history)\n",
        _OPENAI + "from openai.types.shared import Reasoning\ndef turn(history):\n    return client.responses.create(model='m', instructions=describe(ReasoningSummary(text='x')), input=history)\n",
        # Issue 11, from real code (openai-agents-python): a `digest` that is a hash is not a summary.
        "from hashlib import sha256\nfrom openai import OpenAI\nclient = OpenAI()\ndef _hashed_key(kind, value):\n    digest = sha256(value.encode()).hexdigest()[:32]\n    return f'app:{kind}:{digest}'\ndef _prompt_cache_key_for_grouping(kind, value):\n    if kind == 'run':\n        return f'app:run:{value}'\n    return _hashed_key(kind, value)\n",
        _OPENAI + "def turn(history, summary):\n    history.append({'role': 'user', 'content': summary})\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': 'Plan.'}, *history])\n",
        _OPENAI + "def turn(history):\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': 'Plan.'}, *history])\n",
        _CLAUDE + "def turn(history, text):\n    return client.messages.create(model='m', system='Plan trips.', messages=history + [{'role': 'user', 'content': text}])\n",
        # Summaries of fixed data (a loop over a literal table) and all-caps constants are not conversation summaries.
        _CLAUDE + "ENDPOINTS = [('GET', '/a', 'List a.'), ('POST', '/b', 'Make b.')]\ndef reference():\n    return '\\n'.join(f'{m} {p}: {summary}' for m, p, summary in ENDPOINTS)\ndef turn(history):\n    return client.messages.create(model='m', system=reference(), messages=history)\n",
        # Review of stop 30: a cleanup or an empty string is no refresh; another object's `.summary` is not this class's.
        "from pydantic import BaseModel\nfrom openai import OpenAI\nclient = OpenAI()\nclass IssuePrompt(BaseModel):\n    title: str\n    summary: str\n    def clean(self):\n        self.summary = self.summary.strip() if self.summary else \"\"\n    def ask(self, history):\n        self.clean()\n        return client.chat.completions.create(model=\"m\", messages=[{\"role\": \"system\", \"content\": f\"Fix: {self.title}\\n{self.summary}\"}, *history])\n",
        "from openai import OpenAI\nclient = OpenAI()\nclass Agent:\n    def __init__(self, history, summary=None):\n        self.chat_history = history\n        self.summary = summary\n    def _build_messages(self, system_prompt, query):\n        if self.summary:\n            system_prompt = system_prompt + f\"\\n\\nThe conversation so far, compressed:\\n{self.summary}\"\n        return [{\"role\": \"system\", \"content\": system_prompt}, *self.chat_history, {\"role\": \"user\", \"content\": query}]\n    def ask(self, query):\n        return client.chat.completions.create(model=\"m\", messages=self._build_messages(\"Answer from the docs.\", query))\ndef save(record, note):\n    record.summary = note\n    return record\n",
        # Blind set 13 (dspy): a summarising call given no part of the conversation summarises something else.
        _OPENAI + "from .data import create_dataset_summary\ndef propose(trainset, history):\n    overview = create_dataset_summary(trainset=trainset, batch_size=10)\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': f'The data: {overview}'}, *history])\n",
        _CLAUDE + "SUMMARY = 'Reply with a one-line summary of the ticket.'\ndef turn(history):\n    return client.messages.create(model='m', system=SUMMARY, messages=history)\n",
        # Issue 11: a `**params` request with the summary after the history.
        _OPENAI + "def turn(history, summary):\n    params = {'model': 'm', 'messages': [*history, {'role': 'user', 'content': summary}]}\n    return client.chat.completions.create(**params)\n",
        # Issue 11 (screenshot-to-code): a request handler named like a prompt returns the HTTP response.
        "from fastapi import APIRouter\nfrom openai import OpenAI\nrouter = APIRouter()\nclient = OpenAI()\n@router.get('/prompt-reports')\nasync def list_prompt_reports(folder):\n    reports = []\n    for name in sorted(folder.iterdir()):\n        summary = read_report(name)\n        reports.append(summary)\n    return {'reports': reports}\n",
    ] + PC202_BUILDER_VALID
    INVALID = PC202_INVALID


class SlidingWindowTrim(_SiteRule):
    """
    ## What it does
    Finds history trimmed from the front on the per-turn path without a size
    guard: rebinding to ``h[-N:]`` / ``h[k:]``, ``h.pop(0)``, ``del h[0]``,
    a ``deque(maxlen=...)`` holding the conversation, or sending
    ``messages=h[-N:]`` (as a keyword, or as the ``messages`` entry of a
    request dict sent as ``**params``), also when a function or method of the module returns
    the window that is sent (a condenser keeping ``head + events[-N:]``), or copies it into the list that is
    sent (``messages += h[-N:]``, ``messages.extend(h[-N:])``, ``for human, ai in h[-N:]:`` appending each
    exchange). promptcache's own ``PromptBuilder().history(h)`` sends
    the conversation like ``messages=`` does, so ``.history(h[-N:])`` and a
    ``Conversation(h[-N:])`` built per turn count too.

    ## Why is this bad?
    Once the window is full, every turn drops the oldest message, so the first
    message after the system prompt changes on every request and nothing after
    the system prompt is ever read from cache.

    ## Example
    ```python
    history = history[-MAX_MESSAGES:]
    ```

    ## Use instead
    ```python
    if len(history) > MAX_MESSAGES:
        history = [summary_message(history)] + history[-(MAX_MESSAGES // 2):]
    ```
    Trim to well below the threshold (at most half of it), so the trim happens
    rarely and most turns only append.

    A size guard alone is not enough: ``if len(h) > MAX: h = h[-MAX:]``,
    ``if len(h) > MAX: h.pop(0)`` and ``while len(h) > MAX: h.pop(0)`` (or
    ``while tokens(h) > 8000:``) keep the list at the threshold once full, so
    every turn still drops the oldest message.

    ## When it does not fire
    The trim is under a size guard with hysteresis: ``if len(h) > T:`` (or an
    early ``if len(h) <= T: return``) keeping ``K`` messages with ``K <= T / 2``
    (both integer literals or module constants, or ``K`` written ``T // 2``),
    dropping ``k >= T / 2`` (``del h[:k]``), or a guard or sizes it cannot
    compare (``if too_long(h):``, names of unknown value); the list never reaches ``messages=`` /
    ``input=`` / ``PromptBuilder.history()``; a fixed slice such as
    ``history[1:]`` passed inline; ``history[-1:]`` sent or copied (the newest
    message alone: no conversation goes out, so none is cached to lose); ``h = h[1:]`` in a function, outside a loop,
    after ``h[0]`` was bound to a name the function sends as ``instructions=`` /
    ``system=`` or a system message, or stored as the ``system`` entry of a
    request dict the function sends as ``**kwargs`` (the head moved to another
    slot, not dropped), also inside ``if h[0]["role"] == "system":``; ``h.pop(0)``
    inside such a check (a system head, popped once per list). A ``Conversation(budget_tokens=...)``
    truncates in large steps by itself: pass it, not a slice, to ``.history()``.
    """

    code = "PC203"
    name = "sliding-window-trim"
    severity = Severity.WARNING
    message = (
        "`{detail}` drops the oldest messages on every turn: the message after the system prompt changes each "
        "request, so the cached conversation is never reused; trim to well below a size threshold (e.g. half), so "
        "it happens rarely"
    )

    def sites(self) -> list:
        return self.flow.turns.trims

    VALID = [
        _OPENAI + "def chat(history, text):\n    history.append({'role': 'user', 'content': text})\n    if len(history) > 50:\n        history = history[-20:]\n    return client.chat.completions.create(model='m', messages=history)\n",
        _OPENAI + "def chat(history):\n    recent = history[-5:]\n    print(recent)\n    return client.chat.completions.create(model='m', messages=history)\n",
        _OPENAI + "from collections import deque\nlog = deque(maxlen=10)\ndef chat(history):\n    return client.chat.completions.create(model='m', messages=history)\n",
        # promptcache's builder: a window under a size guard, an append-only Conversation.
        _SDK + "def turn(history, text):\n    if len(history) > 40:\n        history = history[-20:]\n    return PromptBuilder().system('Rules.').history(history).user(text).build()\n",
        _SDK + "chat = Conversation(budget_tokens=20_000)\ndef turn(text):\n    chat.append({'role': 'user', 'content': text})\n    return PromptBuilder().system('Rules.').history(chat).build()\n",
        # .history() of something that is not a PromptBuilder (a shell's line history) is not a sink.
        _SDK + "class Shell:\n    def show(self, lines):\n        return self.console.history(lines[-6:])\n",
        # Issue 11 Build 2: a window under a size guard.
        _OPENAI + 'BUDGET = 20000\n\ndef step(events, keep_first=1):\n    messages = events\n    if len(events) > 60:\n        messages = events[:keep_first] + events[-20:]\n    return client.chat.completions.create(model="m", messages=messages)\n',
        # Issue 11 Build 2: a condenser that returns early below its limit.
        _OPENAI + 'class Condenser:\n    def __init__(self, keep_first=1, max_events=40):\n        self.keep_first = keep_first\n        self.max_events = max_events\n    def condense(self, events):\n        if len(events) <= self.max_events:\n            return events\n        return events[: self.keep_first] + events[-(self.max_events // 2) :]\ndef step(events):\n    messages = Condenser().condense(events)\n    return client.chat.completions.create(model="m", messages=messages)\n',
        # Issue 11: a Twilio SMS dict sent as `**sms` is not an LLM request, whatever it slices.
        "from twilio.rest import Client\nclient = Client()\ndef notify(history, to):\n    sms = {'to': to, 'body': '\\n'.join(history[-3:])}\n    return client.messages.create(**sms)\n",
        # A window under a size guard, sent through a `**params` dict.
        _OPENAI + "def turn(history, text):\n    history.append({'role': 'user', 'content': text})\n    if len(history) > 40:\n        history = history[-8:]\n    params = {'model': 'm', 'messages': history}\n    return client.chat.completions.create(**params)\n",
        # Issue 11 (khoj, open-interpreter): the first message moved to `instructions=` (read as `h[0]` just
        # before), not dropped: the same message goes out each turn, in another slot.
        _OPENAI + 'def respond(messages):\n    formatted = [dict(m) for m in messages]\n    instructions = None\n    if formatted and formatted[0].get("role") == "system":\n        instructions = formatted[0].get("content")\n        formatted = formatted[1:]\n    return client.responses.create(model="m", instructions=instructions, input=formatted)\n',
        # Issue 11 (FastChat, blind set 24): the head's text, by the content's shape, moved to `system=`.
        _CLAUDE + 'def stream(messages):\n    system_prompt = ""\n    if messages[0]["role"] == "system":\n        if type(messages[0]["content"]) == dict:\n            system_prompt = messages[0]["content"]["text"]\n        elif type(messages[0]["content"]) == str:\n            system_prompt = messages[0]["content"]\n        messages = messages[1:]\n    return client.messages.create(model="m", max_tokens=9, messages=messages, system=system_prompt)\n',
        # Issue 11 (agentscope, blind set 7): the head moved to the `system` entry of the request dict sent as `**kwargs`.
        _CLAUDE + 'async def generate(messages, **generate_kwargs):\n    kwargs = {"model": "m", "max_tokens": 900, **generate_kwargs}\n    if messages[0]["role"] == "system":\n        kwargs["system"] = messages[0]["content"]\n        messages = messages[1:]\n    kwargs["messages"] = messages\n    return await client.messages.create(**kwargs)\n',
        # Only the newest message is sent (review helper-96): no conversation goes out, so none is cached to lose.
        _OPENAI + "SYSTEM = {'role': 'system', 'content': 'Rules.'}\ndef chat(history, text):\n    history.append({'role': 'user', 'content': text})\n    return client.chat.completions.create(model='m', messages=[SYSTEM] + history[-1:])\n",
    ] + PC203_HYSTERESIS_VALID
    INVALID = PC203_INVALID


class InPlaceHistoryEdit(_SiteRule):
    """
    ## What it does
    Finds a change to a history message that was already sent, on every turn:
    a store ``h[i]["content"] = ...`` or ``h[1] = {...}`` with ``i`` not the
    last index; a loop that rewrites ``m["content"]`` for messages of the
    history (also through a filter ``[m for m in h if ...]``, as when every
    tool result is re-truncated to ``budget // len(tool_msgs)``); a loop that
    clears a field of the records the messages are rendered from
    (``step.observations = None``); ``h.remove(old)`` or ``h.insert(0, ...)``
    on a history kept across turns (``self.history``, a module-level list;
    for ``remove`` also the caller's list passed in); and a list rebuilt from
    the history for each request in which older messages are replaced by
    their position counted from the end (the newest five editor results kept,
    older ones cut to a stub; tool outputs before the last ``N`` replaced with
    ``"<omitted>"``): each new message moves one more over the line.

    ## Why is this bad?
    The provider cached the conversation as it was sent. Editing an earlier
    message (to erase old tool output, for example) makes the next request
    diverge at that message, so everything after it is uncached again.

    ## Example
    ```python
    for old in messages:
        if old["role"] == "tool":
            old["content"] = "[removed]"
    ```

    ## Use instead
    Keep sent messages byte-identical. To save tokens, trim rarely at a size
    threshold (or use the provider's context editing), so most turns append.

    ## When it does not fire
    Edits of the last message (``h[-1]``, not yet sent), of lists that never
    reach ``messages=`` / ``input=`` / ``PromptBuilder.history()``, and of
    ``cache_control`` markers; re-setting a constant system message at index
    0 (the same bytes each turn); a normalised *copy* of the messages (the
    same bytes on every request); a field of the records that the messages do
    not render; an insert or a removal under a size guard or an ``if`` that
    tests the same list (a one-time set-up), and an insert into a list built
    fresh for each request; a slot replaced in a list built fresh for the
    request (also through a private helper's parameter), a field changed in
    the messages another module's function converted for the request
    (``out = serialize_messages(messages)``) or in a ``copy.deepcopy`` made in
    the same function (also after the parameter is rebound to its own copy,
    ``messages = copy.deepcopy(messages)``: text added there to the system
    message is PC102's), unless the messages changed there are picked by the
    list's length or from its end (``i < len(msgs) - 3``, ``m is not
    msgs[-1]``: a mask whose boundary moves each turn is reported); a constant
    added to a dict literal of a list literal made in the same function
    (``messages[0]["content"] += RULES``), or any text added to one before
    the list is first sent (outside a loop, ahead of every request and of any
    call given the list); a rebuilt list whose messages are
    converted alike or by their content, or by a position counted from the
    start (``i == 0``); a field normalised in place, the same bytes each time
    (``m["content"] = m["content"].rstrip()``, ``m.content = clean(m.content)``,
    ``if m["role"] == "system": m["role"] = "user"``), unless the function adds
    messages to that list afterwards (they go out as written, then change).
    """

    code = "PC204"
    name = "in-place-history-edit"
    severity = Severity.WARNING
    message = (
        "`{detail}` changes a message that was already sent: the next request diverges from the cached "
        "prefix at that message; keep sent messages unchanged and append instead"
    )

    def sites(self) -> list:
        return self.flow.turns.edits

    VALID = PC204_VALID + PC204_NORMALISED_VALID
    INVALID = PC204_INVALID
