"""Case data of the PC201-PC204 rules in :mod:`lint_rules.history` (kept here so the rule module stays short):
their INVALID code strings, and PC203's hysteresis VALID cases."""

from __future__ import annotations

from promptcache.lint.rule import Invalid

_CLAUDE = "import anthropic\nclient = anthropic.Anthropic()\n"
_OPENAI = "from openai import OpenAI\nclient = OpenAI()\n"
_SDK = "from promptcache import Conversation, PromptBuilder\n"

# PC201 (PerTurnSummarization)
PC201_INVALID = [
    Invalid(_OPENAI + "def turn(history, text):\n    history = compress_history(history)\n    return client.chat.completions.create(model='m', messages=history)\n", line=4),
    Invalid("from langchain.memory import ConversationSummaryMemory\nmemory = ConversationSummaryMemory(llm=None)\n", line=2),
    # promptcache's own builder: .history(...) sends the conversation like messages=.
    Invalid(_SDK + "def turn(history, text):\n    history = compress_history(history)\n    return PromptBuilder().system('Rules.').history(history).user(text).build()\n", line=3),
    Invalid(_CLAUDE + "def turn(chat, text):\n    reply = client.messages.create(model='m', messages=chat)\n    digest = client.messages.create(model='m', messages=[{'role': 'user', 'content': 'Summarize this chat: ' + str(chat)}])\n    return reply\n", line=5),
    # A local summarising helper called every turn (the message names it).
    Invalid(_CLAUDE + "def recap_chat(history):\n    return client.messages.create(model='m', messages=history + [{'role': 'user', 'content': 'Summarize our conversation.'}])\ndef turn(history, text):\n    history[:] = [{'role': 'user', 'content': recap_chat(history)}]\n    return client.messages.create(model='m', messages=history)\n", line=6),
    # Issue 11 review (snips/d2_condense.py): a method that rewrites `self.messages`, called every turn.
    Invalid(_OPENAI + "class Memory:\n    def __init__(self):\n        self.messages = []\n    def condense(self):\n        text = '\\n'.join(m['content'] for m in self.messages)\n        r = client.chat.completions.create(model='mini', messages=[{'role': 'user', 'content': 'Condense: ' + text}])\n        self.messages = [{'role': 'assistant', 'content': r.choices[0].message.content}]\n    def turn(self, user_text):\n        self.messages.append({'role': 'user', 'content': user_text})\n        self.condense()\n        return client.chat.completions.create(model='m', messages=self.messages)\n", line=12),
    # A request handler whose summarising call replaces the stored history.
    # Issue 11: a loop over incoming messages that asks for a summary of the whole stored history each time
    # (the loop item is in the request, but so is the history: not a summariser mapping over chunks).
    Invalid(_OPENAI + "def serve(history, inbox):\n    for text in inbox:\n        history.append({'role': 'user', 'content': text})\n        recap = client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': f'Summarize this conversation: {history} {text}'}])\n        history[:] = [{'role': 'assistant', 'content': recap.choices[0].message.content}]\n        client.chat.completions.create(model='m', messages=history)\n", line=6),
    Invalid(_OPENAI + "from fastapi import FastAPI\napp = FastAPI()\nSESSIONS = {}\n@app.post('/chat/{sid}')\ndef chat(sid, text):\n    messages = SESSIONS.setdefault(sid, [])\n    messages.append({'role': 'user', 'content': text})\n    recap = client.chat.completions.create(model='m', messages=messages + [{'role': 'user', 'content': 'Summarize our conversation so far.'}])\n    SESSIONS[sid] = [{'role': 'user', 'content': recap.choices[0].message.content}]\n    return recap\n", line=10),
    # Issue 11: the summarising request is a `**params` dict; its helper is called every turn.
    Invalid(_OPENAI + "def ask_model(history):\n    params = {'model': 'mini', 'messages': history + [{'role': 'user', 'content': 'Summarize our conversation.'}]}\n    return client.chat.completions.create(**params)\ndef turn(history, text):\n    history[:] = [{'role': 'user', 'content': ask_model(history)}]\n    return client.chat.completions.create(model='m', messages=history)\n", line=7),
    # The history compressed every turn is sent through `params['messages']` (the function is a request handler).
    Invalid(_CLAUDE + "def turn(history, text):\n    history = compress_history(history)\n    params = {'model': 'm', 'max_tokens': 512}\n    params['messages'] = history\n    return client.messages.create(**params)\n", line=4),
]


# PC202 (SummaryBeforeHistory)
# PC202: issue 11 (blind sets 4-6): a summary in a prompt builder whose result the module's calls put nowhere ahead of
# the history: the prompt of a summarising request of its own (deer-flow), an approval dialog's text (magentic-ui).
PC202_BUILDER_VALID = [
    "from langchain_core.messages import HumanMessage\nclass Summarizer:\n    def __init__(self, model):\n        self.model = model\n    def _build_summary_prompt(self, messages, previous_summary=None):\n        text = '\\n'.join(m.content for m in messages)\n        return f'Update the summary.\\nPrevious summary: {previous_summary}\\n\\n{text}'\n    def summarize(self, messages, previous_summary=None):\n        prompt = self._build_summary_prompt(messages, previous_summary=previous_summary)\n        return self.model.invoke([HumanMessage(content=prompt)]).content\n",
    _OPENAI + "def _format_approval_prompt(tool, args_summary):\n    return f'Allow {tool}? {args_summary}'\nasync def step(tool, args_summary):\n    yield ApprovalRequest(prompt=_format_approval_prompt(tool, args_summary), tool_name=tool)\n",
]

PC202_INVALID = [
    # Review (s26): a summary of the older part of the list ahead of the whole list, sent as `messages=` or through a
    # copy grown in place.
    Invalid(_CLAUDE + "def turn(messages, keep=6):\n    summary = summarize(messages[:-keep])\n    return client.messages.create(model='m', max_tokens=9, system=f'Be brief.\\nSo far: {summary}', messages=messages)\n", line=5),
    Invalid(_OPENAI + "def turn(messages, n=8):\n    summary = summarize(messages[:-n])\n    request = messages.copy()\n    request.insert(0, {'role': 'system', 'content': f'Earlier: {summary}'})\n    return client.chat.completions.create(model='m', messages=request)\n", line=6),
    Invalid(_OPENAI + "def turn(messages, n=4):\n    summary = summarize(messages[:-n])\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': summary}, *messages])\n", line=5),
    Invalid(_OPENAI + "class Optimizer:\n    def _create_summary(self, older):\n        return 'Earlier: ' + ' | '.join(m['content'][:80] for m in older)\n    async def run(self, messages, n=4):\n        summary = self._create_summary(messages[:-n])\n        result = [{'role': 'system', 'content': summary}] + messages\n        return client.chat.completions.create(model='m', messages=result)\n", line=8),
    # The same module writes the attribute at run time: a summary kept on an imported state object.
    # An imported object that refreshes its own summary through a method is no constant (issue 11 review).
    Invalid(_OPENAI + "from app.memory import session\ndef turn(history, q):\n    session.refresh_summary(history)\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': 'Rules. ' + session.conversation_summary}, *history, {'role': 'user', 'content': q}])\n", line=6),
    Invalid(_OPENAI + "from app import state\ndef turn(history, q):\n    state.summary = summarize(history)\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': state.summary}, *history[-4:], {'role': 'user', 'content': q}])\n", line=6),
    Invalid(_CLAUDE + "def turn(history):\n    recap = compact_history(history)\n    return client.messages.create(model='m', system=f'Plan.\\n{recap}', messages=history[-4:])\n", line=5),
    Invalid(_CLAUDE + "class Planner:\n    def turn(self, text):\n        return client.messages.create(model='m', system=f'Plan.\\n{self.summary}', messages=[])\n", line=5),
    Invalid(_OPENAI + "def turn(history):\n    recap = summarize_thread(history)\n    history.insert(0, {'role': 'user', 'content': recap})\n    return client.chat.completions.create(model='m', messages=history)\n", line=5),
    Invalid(_OPENAI + "def turn(history, summary):\n    return client.chat.completions.create(model='m', messages=[\n        {'role': 'user', 'content': summary}, *history])\n", line=5),
    Invalid(_SDK + "def turn(history):\n    recap = summarize_thread(history)\n    return PromptBuilder().history([{'role': 'user', 'content': recap}, *history]).build()\n", line=4),
    # Issue 11: the same in a request dict sent as `**params`.
    Invalid(_OPENAI + "def turn(history, summary):\n    params = {'model': 'm', 'messages': [{'role': 'user', 'content': summary}, *history]}\n    return client.chat.completions.create(**params)\n", line=4),
    # Issue 11 review: a prompt builder a system message of the module calls, directly or through a name.
    Invalid("from openai import OpenAI\nclient = OpenAI()\nclass Planner:\n    def build_prompt(self):\n        return f'Plan the trip.\\nSo far: {self.summary}'\n    def turn(self, history):\n        return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': self.build_prompt()}, *history])\n", line=5),
    # ... also as a message listed before the history, or through the function's caller; a builder the module never
    # calls by name (a held object's method, `self.prompts.build_prompt()`), or whose result a prompt-named method
    # returns out of the module, stands (issue 11 review).
    Invalid(_CLAUDE + "class TripPrompts:\n    def __init__(self, memory):\n        self.memory = memory\n    def build_system_prompt(self):\n        return f'Plan the trip.\\nSo far: {self.memory.summary}'\n    def system(self):\n        return self.build_system_prompt()\n", line=7),
    Invalid(_CLAUDE + "class Prompts:\n    def build_prompt(self):\n        return f'Plan the trip.\\nSo far: {self.memory.summary}'\nclass Agent:\n    def __init__(self):\n        self.prompts = Prompts()\n    def turn(self, history):\n        return client.messages.create(model='m', max_tokens=9, system=self.prompts.build_prompt(), messages=history)\n", line=5),
    Invalid(_OPENAI + "class Trip:\n    def build_context(self):\n        return f'Story so far: {self.summary}'\n    def turn(self, history, q):\n        return client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': self.build_context()}, *history, {'role': 'user', 'content': q}])\n", line=7),
    Invalid(_CLAUDE + "class Planner:\n    def build_prompt(self):\n        return 'Plan the trip.\\nSo far: ' + self.summary\n    def system(self):\n        return self.build_prompt()\n    def turn(self, history):\n        return client.messages.create(model='m', max_tokens=9, system=self.system(), messages=history)\n", line=5),
    Invalid('import anthropic\n\nclient = anthropic.Anthropic()\n\n\nclass Planner:\n    def build_prompt(self):\n        return f"Plan the trip.\\nSo far: {self.summary}"\n\n    def turn(self, history):\n        prompt = self.build_prompt()\n        return client.messages.create(model="m", max_tokens=9, system=prompt, messages=history)\n', line=8),
]


# PC202: issue 11, a summary dumped as unsorted JSON is two problems (PC304 reports the key order).
PC202_INVALID.append(Invalid(_OPENAI + "import json\ndef turn(history, q):\n    recap = summarize_history(history)\n    notes = {'summary': recap}\n    for k in history[0]:\n        notes[k] = 1\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': json.dumps(notes)}, *history[-4:], {'role': 'user', 'content': q}])\n", line=9))


# PC203 (SlidingWindowTrim)
# Issue 11 (newcomer): VALID cases of the size-guard hysteresis rule (kept here to keep history.py short).
PC203_HYSTERESIS_VALID = [
    # A guard with hysteresis: trimmed to half the threshold (symbolic or by constants), or by half of it.
    _CLAUDE + "MAX_HISTORY = 40\ndef turn(history, text):\n    history.append({'role': 'user', 'content': text})\n    if len(history) > MAX_HISTORY:\n        history = history[-(MAX_HISTORY // 2):]\n    return client.messages.create(model='m', messages=history)\n",
    _CLAUDE + "LIMIT = 40\nKEEP_LAST = 16\ndef turn(history, text):\n    if len(history) > LIMIT:\n        history = history[-KEEP_LAST:]\n    return client.messages.create(model='m', messages=history)\n",
    _OPENAI + "def turn(history, text):\n    history.append({'role': 'user', 'content': text})\n    if len(history) > 40:\n        del history[:20]\n    return client.chat.completions.create(model='m', messages=history)\n",
    # Moving a leading system message out (an emptiness test, not a window size): the same message each turn.
    _CLAUDE + "def turn(history):\n    system = ''\n    if len(history) > 0 and history[0]['role'] == 'system':\n        system = history.pop(0)['content']\n    return client.messages.create(model='m', system=system, messages=history)\n",
]
PC203_INVALID = [
    # Issue 11 review: a head stored in a dict that goes to a call other than the request (`log.info(**meta)`).
    Invalid(_CLAUDE + 'def generate(messages, **kw):\n    kwargs = {"model": "m", "max_tokens": 9, **kw}\n    if messages[0]["role"] == "system":\n        kwargs["system"] = messages[0]["content"]\n    messages = messages[1:]\n    kwargs["messages"] = messages\n    return client.messages.create(**kwargs)\n', line=7),
    Invalid(_CLAUDE + 'def generate(messages, log):\n    meta = {}\n    meta["system"] = messages[0]["content"]\n    messages = messages[1:]\n    log.info("request", **meta)\n    return client.messages.create(model="m", max_tokens=900, messages=messages)\n', line=6),
    # Issue 11 (agentscope): a head stored in a dict that is not the request sent as `**kwargs` is dropped, not moved.
    Invalid(_CLAUDE + 'def generate(messages, log):\n    meta = {}\n    meta["system"] = messages[0]["content"]\n    messages = messages[1:]\n    log.write(meta)\n    return client.messages.create(model="m", max_tokens=900, messages=messages)\n', line=6),
    Invalid(_CLAUDE + 'def run(messages, inbox):\n    kwargs = {"model": "m", "max_tokens": 900}\n    for q in inbox:\n        kwargs["system"] = messages[0]["content"]\n        messages = messages[1:]\n        messages.append({"role": "user", "content": q})\n        client.messages.create(**kwargs, messages=messages)\n', line=7),
    Invalid(_OPENAI + "def loop(history):\n    while True:\n        history = history[-12:]\n        client.chat.completions.create(model='m', messages=history)\n", line=5),
    # The head read from another list is no split: `history[1:]` drops the oldest message each turn.
    Invalid(_OPENAI + "def loop(history, notes):\n    while True:\n        first = notes[0]\n        history = history[1:]\n        client.chat.completions.create(model='m', messages=history)\n", line=6),
    # Issue 11 review: a head read that goes to no other slot (`print(h[0])`), or a split repeated in a loop whose
    # rebinding carries over (one more message dropped, a different one moved to `instructions=`, every turn).
    Invalid(_OPENAI + "def run(history, inbox):\n    for q in inbox:\n        history.append({'role': 'user', 'content': q})\n        print('dropping', history[0])\n        history = history[1:]\n        client.chat.completions.create(model='m', messages=history)\n", line=7),
    Invalid(_OPENAI + "def run(messages, inbox):\n    for q in inbox:\n        messages.append({'role': 'user', 'content': q})\n        system = messages[0]['content']\n        messages = messages[1:]\n        client.responses.create(model='m', instructions=system, input=messages)\n", line=7),
    Invalid(_CLAUDE + "from collections import deque\nhistory = deque(maxlen=20)\ndef turn(text):\n    return client.messages.create(model='m', messages=list(history))\n", line=4),
    Invalid(_OPENAI + "def chat(history):\n    history.pop(0)\n    return client.chat.completions.create(model='m', messages=history)\n", line=4),
    Invalid(_OPENAI + "def chat(history):\n    return client.chat.completions.create(model='m', messages=list(history)[-6:])\n", line=4),
    # promptcache's own builder: .history(...) sends the conversation like messages=.
    Invalid(_SDK + "def turn(history, text):\n    return PromptBuilder().system('Rules.').history(history[-6:]).user(text).build()\n", line=3),
    Invalid("import promptcache as pc\nBASE = pc.PromptBuilder().system('Rules.')\ndef turn(chat, text):\n    return BASE.history(list(chat)[-6:]).user(text).build()\n", line=4),
    Invalid(_SDK + "def turn(history, text):\n    window = Conversation(history[-8:])\n    return PromptBuilder().history(window).user(text).build()\n", line=3),
    Invalid("from promptcache.builder import PromptBuilder\ndef turn(builder: PromptBuilder, history, text):\n    history.pop(0)\n    return builder.history(conversation=history).user(text).build()\n", line=3),
    Invalid("from promptcache.prompt.builder import PromptBuilder\ndef turn(builder: PromptBuilder, history, text):\n    history.pop(0)\n    return builder.history(conversation=history).user(text).build()\n", line=3),
    # Issue 11 Build 2: `head + events[-N:]` sent each turn.
    Invalid(_OPENAI + 'BUDGET = 20000\n\ndef step(events, keep_first=1):\n    head = events[:keep_first]\n    messages = head + events[-20:]\n    return client.chat.completions.create(model="m", messages=messages)\n', line=7),
    # Issue 11 Build 2: a condenser method keeping `head + events[-N:]`.
    Invalid(_OPENAI + 'BUDGET = 20000\n\nclass Condenser:\n    def __init__(self, keep_first=1, max_events=20):\n        self.keep_first = keep_first\n        self.max_events = max_events\n    def condense(self, events):\n        head = events[: self.keep_first]\n        return head + events[-self.max_events :]\ndef step(events):\n    messages = Condenser().condense(events)\n    return client.chat.completions.create(model="m", messages=messages)\n', line=11),
    # Issue 11: the window sent as an entry of a `**params` request dict, or rebound and then set by
    # `params['messages'] = ...`; and sent through the SDKs' raw / streaming response wrappers.
    Invalid(_OPENAI + "def turn(history, text):\n    history.append({'role': 'user', 'content': text})\n    params = {'model': 'm', 'messages': history[-8:]}\n    return client.chat.completions.create(**params)\n", line=5),
    Invalid(_CLAUDE + "def turn(history, text):\n    history = history[-8:]\n    params = {'model': 'm', 'max_tokens': 512}\n    params['messages'] = history\n    return client.messages.create(**params)\n", line=4),
    Invalid(_OPENAI + "def turn(history, text):\n    history.append({'role': 'user', 'content': text})\n    return client.chat.completions.with_raw_response.create(model='m', messages=history[-8:])\n", line=5),
    # Issue 11 (newcomer): a size guard without hysteresis keeps the list at the threshold, so once full every turn
    # drops a message: the window equal to (or within 2 of) the threshold, one pop per turn under `if` or `while`.
    Invalid(_CLAUDE + "MAX_HISTORY = 10\ndef turn(history, text):\n    history.append({'role': 'user', 'content': text})\n    if len(history) > MAX_HISTORY:\n        history = history[-MAX_HISTORY:]\n    return client.messages.create(model='m', messages=history)\n", line=7),
    Invalid(_CLAUDE + "def turn(history, text):\n    if len(history) > 40:\n        history = history[-38:]\n    return client.messages.create(model='m', messages=history)\n", line=5),
    Invalid(_CLAUDE + "MAX_TURNS = 20\nclass Bot:\n    def __init__(self):\n        self.messages = []\n    def turn(self, text):\n        self.messages.append({'role': 'user', 'content': text})\n        while len(self.messages) > MAX_TURNS:\n            self.messages.pop(0)\n        return client.messages.create(model='m', messages=self.messages)\n", line=10),
    Invalid(_OPENAI + "def turn(history, text, tokens):\n    history.append({'role': 'user', 'content': text})\n    while tokens(history) > 8000:\n        history.pop(0)\n    return client.chat.completions.create(model='m', messages=history)\n", line=6),
    Invalid(_OPENAI + 'class Condenser:\n    def __init__(self, max_events=40):\n        self.max_events = max_events\n    def condense(self, events):\n        if len(events) <= self.max_events:\n            return events\n        return events[-self.max_events :]\ndef step(events):\n    messages = Condenser().condense(events)\n    return client.chat.completions.create(model="m", messages=messages)\n', line=9),
    Invalid(_OPENAI + "LIMIT = 30\ndef turn(history, text):\n    history.append({'role': 'user', 'content': text})\n    if len(history) > LIMIT:\n        del history[0]\n    return client.chat.completions.create(model='m', messages=history)\n", line=7),
    Invalid(_OPENAI + "def turn(history, text):\n    history.append({'role': 'user', 'content': text})\n    with client.chat.completions.with_streaming_response.create(model='m', messages=history[-8:]) as r:\n        return r.read()\n", line=5),
]


# PC204 (InPlaceHistoryEdit)
PC204_VALID = [
    _OPENAI + "def step(messages, extra):\n    messages[-1]['content'] += extra\n    return client.chat.completions.create(model='m', messages=messages)\n",
    _OPENAI + "def step(messages, rows):\n    for row in rows:\n        row['content'] = ''\n    return client.chat.completions.create(model='m', messages=messages)\n",
    _CLAUDE + "def step(messages):\n    messages[-1]['content'][-1]['cache_control'] = {'type': 'ephemeral'}\n    return client.messages.create(model='m', messages=messages)\n",
    # Issue 11 Build 2: a tool result truncated once, before it is appended.
    _OPENAI + 'BUDGET = 20000\n\ndef turn(messages, q, output):\n    messages.append({"role": "tool", "content": output[:BUDGET]})\n    messages.append({"role": "user", "content": q})\n    return client.chat.completions.create(model="m", messages=messages)\n',
    # Issue 11 Build 2: the constant system message re-set at index 0 (same bytes).
    _OPENAI + 'BUDGET = 20000\n\nSYSTEM_PROMPT = "Plan trips."\nclass Agent:\n    def __init__(self):\n        self.messages = [{"role": "system", "content": SYSTEM_PROMPT}]\n    def turn(self, q):\n        self.messages[0] = {"role": "system", "content": SYSTEM_PROMPT}\n        self.messages.append({"role": "user", "content": q})\n        return client.chat.completions.create(model="m", messages=self.messages)\n',
    # Issue 11 Build 2: an insert into a list built fresh for the request.
    _OPENAI + 'BUDGET = 20000\n\nSYSTEM = {"role": "system", "content": "Plan."}\nclass Agent:\n    def __init__(self):\n        self.history = []\n    def turn(self, q):\n        self.history.append({"role": "user", "content": q})\n        messages = list(self.history)\n        messages.insert(0, SYSTEM)\n        return client.chat.completions.create(model="m", messages=messages)\n',
    # Issue 11 Build 2: a normalised copy (the same bytes on every request).
    _OPENAI + 'BUDGET = 20000\n\ndef clean(messages):\n    return [{**m, "content": m["content"].strip()} if isinstance(m["content"], str) else m for m in messages]\ndef turn(messages, q):\n    messages.append({"role": "user", "content": q})\n    return client.chat.completions.create(model="m", messages=clean(messages))\n',
    # Issue 11 Build 2: `.remove` on a list that is not sent.
    _OPENAI + 'BUDGET = 20000\n\ndef turn(messages, q, pending):\n    pending.remove(q)\n    messages.append({"role": "user", "content": q})\n    return client.chat.completions.create(model="m", messages=messages)\n',
    # Issue 11 Build 2: a placeholder chosen before the message is appended.
    _OPENAI + 'BUDGET = 20000\n\nclass Agent:\n    def __init__(self):\n        self.messages = []\n    def step(self, q, output):\n        self.messages.append({"role": "tool", "content": output if len(output) < BUDGET else "<omitted>"})\n        self.messages.append({"role": "user", "content": q})\n        return client.chat.completions.create(model="m", messages=self.messages)\n',
    # Issue 11 Build 2: a one-time insert (`if not self.history`) and a bookkeeping flag the messages do not render.
    _OPENAI + 'SYSTEM = {"role": "system", "content": "Plan."}\nclass Agent:\n    def __init__(self):\n        self.history = []\n        self.steps = []\n    def to_messages(self):\n        messages = []\n        for step in self.steps:\n            messages.append({"role": "user", "content": step.observations})\n        return messages\n    def turn(self, q):\n        if not self.history:\n            self.history.insert(0, SYSTEM)\n        for step in self.steps:\n            step.seen = True\n        self.history.append({"role": "user", "content": q})\n        return client.chat.completions.create(model="m", messages=self.history + self.to_messages())\n',
    # A removal from the list built for this request (the stored history is unchanged).
    _OPENAI + 'SYSTEM = {"role": "system", "content": "Plan."}\ndef ask(history, q):\n    messages = [SYSTEM, *history, {"role": "user", "content": q}]\n    if not q.strip():\n        messages.remove(messages[-1])\n    return client.chat.completions.create(model="m", messages=messages)\n',
    # smolagents' GAIA runner (run_gaia.py): after the run, a field that to_messages() never renders is cleared
    # for logging (`model_input_messages`, a record of what the step was sent).
    "from smolagents import CodeAgent\ndef run(agent, question):\n    result = agent.run(question)\n    for memory_step in agent.memory.steps:\n        memory_step.model_input_messages = None\n    return result\n",
    # The newest memory step gets its screenshot (not yet sent); older steps are only read.
    "from smolagents import CodeAgent\ndef save_screenshot(memory_step, agent):\n    seen = [s.step_number for s in agent.memory.steps]\n    memory_step.observations_images = [take_screenshot()]\n    return seen\n",
    # Issue 11: the constant system message re-set at index 0 through the SDK's TypedDict (a dict).
    _OPENAI + "from openai.types.chat import ChatCompletionSystemMessageParam\nSYSTEM = 'Be brief.'\nclass Bot:\n    def __init__(self):\n        self.history = []\n    def turn(self, text):\n        self.history[0] = ChatCompletionSystemMessageParam(role='system', content=SYSTEM)\n        self.history.append({'role': 'user', 'content': text})\n        return client.chat.completions.create(model='m', messages=self.history)\n",
    # Issue 11: a counter stored in the state dict whose `messages` entry is sent is not a message edit (the
    # history is the entry, not the dict holding it), sent as a keyword or through a `**params` dict.
    _CLAUDE + "def turn(state, text):\n    state['turns'] = state.get('turns', 0) + 1\n    return client.messages.create(model='m', max_tokens=9, messages=state['messages'] + [{'role': 'user', 'content': text}])\n",
    _CLAUDE + "def turn(state, text):\n    state['turns'] = state.get('turns', 0) + 1\n    params = {'model': 'm', 'max_tokens': 9, 'messages': state['messages'] + [{'role': 'user', 'content': text}]}\n    return client.messages.create(**params)\n",
    # Issue 11 (browser-use): the schema added to the system message of a list another module's serializer
    # converted for this request; (khoj) slots replaced in a list built fresh per call, through a private helper.
    _OPENAI + 'from .serializer import serialize_messages\nclass Chat:\n    def ask(self, messages, schema):\n        out = serialize_messages(messages)\n        if out[0]["role"] == "system":\n            out[0]["content"] += f"\\n<json_schema>{schema}</json_schema>"\n        return client.chat.completions.create(model="m", messages=out)\n',
    _OPENAI + 'class Agent:\n    def _format(self, messages):\n        out = []\n        for m in messages:\n            out.append(m.render())\n        return out\n    def _for_summary(self, formatted):\n        for idx, msg in enumerate(formatted):\n            if isinstance(msg, str):\n                formatted[idx] = {"role": "user", "content": msg}\n        return formatted\n    def call(self):\n        msgs = self._format(self.messages)\n        msgs = self._for_summary(msgs)\n        return client.responses.create(model="m", input=msgs)\n',
    # Issue 11 (khoj format_message_for_api): a format conversion on a deep copy made for this request; the
    # stored messages are untouched, the same bytes go out each turn.
    "from copy import deepcopy\n" + _OPENAI + 'def format_messages(raw_messages):\n    out = []\n    messages = deepcopy(raw_messages)\n    for message in messages:\n        if isinstance(message.content, list):\n            message.content = "\\n".join(p["text"] for p in message.content)\n        out.append({"role": message.role, "content": message.content})\n    return out\ndef chat(history):\n    return client.chat.completions.create(model="m", messages=format_messages(history))\n',
    # Issue 11 (Qwen-Agent Assistant): text added to the system message of a deep copy the parameter was rebound
    # to (PC102's finding, not a change of a sent message).
    "import copy\n" + _OPENAI + "class Assistant:\n    def run(self, messages):\n        messages = copy.deepcopy(messages)\n        knowledge = self.mem.retrieve(messages[-1]['content'])\n        if messages and messages[0]['role'] == 'system':\n            messages[0]['content'] += '\\n\\n' + '\\n'.join(knowledge)\n        return client.chat.completions.create(model='m', messages=messages)\n",
    # Issue 11 review: a constant added to the system dict of the list literal built this call (the
    # `**params` spelling of the same code is silent too).
    _OPENAI + 'RULES = "Be brief."\ndef turn(history, q):\n    messages = [{"role": "system", "content": "Base."}, *history, {"role": "user", "content": q}]\n    messages[0]["content"] += "\\nRules: " + RULES\n    return client.chat.completions.create(model="m", messages=messages)\n',
    # Cache breakpoints taken off the older messages of the rebuilt list (markers move, the text does not).
    _CLAUDE + 'KEEP = 2\ndef to_api(history):\n    out = []\n    for i, m in enumerate(history):\n        if i < len(history) - KEEP:\n            m = {k: v for k, v in m.items() if k != "cache_control"}\n        out.append(m)\n    return out\ndef turn(history):\n    return client.messages.create(model="m", max_tokens=9, messages=to_api(history))\n',
    # Search results of this request shortened by position: no message that was sent before.
    _OPENAI + 'def answer(self, q):\n    results = self.search(q)\n    out = [{"role": "system", "content": "Answer."}]\n    for i, r in enumerate(reversed(results)):\n        if i > 3:\n            r = {"role": "user", "content": r["content"][:100]}\n        out.append(r)\n    return client.chat.completions.create(model="m", messages=out)\n',
    # A rebuilt list converting messages by their content (the same bytes every request), or by a position
    # counted from the start (the same message every request).
    _OPENAI + 'class Agent:\n    def _to_api(self, memory):\n        out = []\n        for i, msg in enumerate(reversed(memory)):\n            if msg["role"] == "tool":\n                msg = {"role": "tool", "tool_call_id": msg["id"], "content": msg["content"]}\n            out.append(msg)\n        return out[::-1]\n    def step(self):\n        return client.chat.completions.create(model="m", messages=self._to_api(self.memory))\n',
    _OPENAI + 'class Agent:\n    def _to_api(self, memory):\n        out = []\n        for i, msg in enumerate(memory):\n            if i == 0:\n                msg = {"role": "system", "content": msg["content"].strip()}\n            out.append(msg)\n        return out\n    def step(self):\n        return client.chat.completions.create(model="m", messages=self._to_api(self.memory))\n',
]
# PC204: issue 11 (graphiti, sweep): a field normalised in place on every request is the bytes last sent.
PC204_NORMALISED_VALID = [
    # Issue 11 (PraisonAI, blind set 8): the messages built here, a field extended before the list is first sent.
    _OPENAI + 'def search(query, include=None, tools=()):\n    messages = [{"role": "system", "content": "Find code."}, {"role": "user", "content": f"Find: {query}"}]\n    if include:\n        messages[1]["content"] += f"\\nOnly in: {include}"\n    for _ in range(4):\n        r = client.chat.completions.create(model="m", messages=messages, tools=list(tools))\n        messages.append({"role": "assistant", "content": r.choices[0].message.content})\n',
    # Third review: a copy of every message stripped before the send; a cleaner method of the same class.
    'import anthropic\n\nclient = anthropic.Anthropic()\n\n\ndef turn(history, q):\n    history.append({"role": "user", "content": q})\n    messages = [dict(m) for m in history]\n    for m in messages:\n        m["content"] = m["content"].strip()\n    return client.messages.create(model="m", max_tokens=900, messages=messages)\n',
    'import anthropic\n\nclient = anthropic.Anthropic()\n\n\nclass Chat:\n    def __init__(self):\n        self.messages = []\n\n    def _clean_input(self, text):\n        return "".join(c for c in text if c.isprintable() or c in "\\n\\t")\n\n    def turn(self, q):\n        self.messages.append({"role": "user", "content": q})\n        for m in self.messages:\n            m["content"] = self._clean_input(m["content"])\n        r = client.messages.create(model="m", max_tokens=900, messages=self.messages)\n        self.messages.append({"role": "assistant", "content": r.content[0].text})\n        return r\n',
    # The store inside the agent's tool loop runs before every send; the head split off to `system=` (graphiti).
    'import anthropic\n\nclient = anthropic.Anthropic()\n\n\ndef turn(history, q):\n    history.append({"role": "user", "content": q})\n    while True:\n        for m in history:\n            m["content"] = m["content"].strip()\n        r = client.messages.create(model="m", max_tokens=900, messages=history)\n        history.append({"role": "assistant", "content": r.content[0].text})\n        if r.stop_reason != "tool_use":\n            return r\n        history.append({"role": "user", "content": run_tool(r) + "\\n"})\n',
    "from openai import OpenAI\nclient = OpenAI()\ndef generate(messages):\n    system = ''\n    if messages and messages[0].role == 'system':\n        system = messages[0].content\n        messages = messages[1:]\n    for m in messages:\n        m.content = _clean_input(m.content)\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, *[{'role': m.role, 'content': m.content} for m in messages]])\n",
    # The newcomer's: the reply appended after the send is normalised before it first goes out.
    'import anthropic\nan = anthropic.Anthropic()\nSYSTEM_PROMPT = "Be brief."\ndef handle_b(history, question):\n    history.append({"role": "user", "content": question})\n    for m in history:\n        m["content"] = m["content"].strip()\n    r = an.messages.create(model="m", max_tokens=9, system=SYSTEM_PROMPT, messages=history)\n    history.append({"role": "assistant", "content": r.content[0].text})\n    return r\n',
    "from openai import AsyncOpenAI\nclient = AsyncOpenAI()\nclass Client:\n    def _clean_input(self, text):\n        return ''.join(c for c in text if c.isprintable() or c in '\\n\\t')\n    async def generate(self, messages):\n        out = []\n        for m in messages:\n            m.content = self._clean_input(m.content)\n            out.append({'role': m.role, 'content': m.content})\n        return await client.chat.completions.create(model='m', messages=out)\n",
    "import anthropic\nclient = anthropic.Anthropic()\ndef sanitize(messages):\n    for message in messages:\n        if message['role'] == 'system':\n            message['role'] = 'user'\n        message['content'] = message['content'].rstrip()\n    return messages\ndef turn(history, q):\n    history.append({'role': 'user', 'content': q})\n    return client.messages.create(model='m', max_tokens=9, messages=sanitize(history))\n",
]
PC204_INVALID = [
    # ... not inside the sending loop, not after a request or a wrapper given the list (issue 11).
    Invalid(_OPENAI + 'def search(query, notes):\n    messages = [{"role": "system", "content": "Find code."}, {"role": "user", "content": query}]\n    for note in notes:\n        client.chat.completions.create(model="m", messages=messages)\n        messages[1]["content"] += f"\\nNote: {note}"\n', line=7),
    Invalid(_OPENAI + 'def search(query, extra):\n    messages = [{"role": "system", "content": "Find code."}, {"role": "user", "content": query}]\n    first = client.chat.completions.create(model="m", messages=messages)\n    messages[1]["content"] += f"\\nAlso: {extra}"\n    return client.chat.completions.create(model="m", messages=messages)\n', line=6),
    Invalid(_OPENAI + 'def search(llm, query, extra):\n    messages = [{"role": "system", "content": "Find code."}, {"role": "user", "content": query}]\n    llm.ask(messages)\n    messages[1]["content"] += f"\\nAlso: {extra}"\n    return client.chat.completions.create(model="m", messages=messages)\n', line=6),
    # ... its boundaries (issue 11 review): a loop over a slice (the window moves: a message goes out raw, then
    # changed), a mask under a test of the same field, a message appended after an `enumerate` loop, and values
    # not idempotent on the field (a summarising callee, an argument read at run time, a callee not named to clean).
    # Third review: a `continue` window, a length gate around the loop, an age window on a field, a helper given
    # the list after the store.
    Invalid('import anthropic\n\nclient = anthropic.Anthropic()\n\n\ndef turn(history, q):\n    history.append({"role": "user", "content": q})\n    for i, m in enumerate(history):\n        if i >= len(history) - 4:\n            continue\n        m["content"] = strip_images(m["content"])\n    return client.messages.create(model="m", max_tokens=900, messages=history)\n', line=11),
    Invalid('import anthropic\n\nclient = anthropic.Anthropic()\nMAX_MESSAGES = 40\n\n\ndef turn(history, q):\n    history.append({"role": "user", "content": q})\n    if len(history) > MAX_MESSAGES:\n        for m in history:\n            m["content"] = strip_images(m["content"])\n    return client.messages.create(model="m", max_tokens=900, messages=history)\n', line=11),
    Invalid('import anthropic\n\nclient = anthropic.Anthropic()\n\n\ndef turn(history, q, turn_no):\n    history.append({"role": "user", "content": q})\n    for m in history:\n        if m.get("turn", turn_no) < turn_no - 3:\n            m["content"] = strip_images(m["content"])\n    return client.messages.create(model="m", max_tokens=900, messages=history)\n', line=10),
    Invalid('import anthropic\n\nclient = anthropic.Anthropic()\n\n\ndef turn(history, q):\n    for m in history:\n        m["content"] = m["content"].strip()\n    add_message(history, "user", q + "\\n\\n")\n    return client.messages.create(model="m", max_tokens=900, messages=history)\n', line=8),
    # Second review: a tool result appended in the sending loop, a count_tokens call before the append, a slice
    # bound to a name, an index window under enumerate, an append through the owner's method, an escaping sanitiser.
    Invalid('import anthropic\n\nclient = anthropic.Anthropic()\n\n\ndef turn(history, q):\n    history.append({"role": "user", "content": q})\n    for m in history:\n        m["content"] = m["content"].strip()\n    while True:\n        r = client.messages.create(model="m", max_tokens=900, messages=history)\n        history.append({"role": "assistant", "content": r.content[0].text})\n        if r.stop_reason != "tool_use":\n            return r\n        history.append({"role": "user", "content": run_tool(r) + "\\n"})\n', line=9),
    Invalid('import anthropic\n\nclient = anthropic.Anthropic()\n\n\ndef turn(history, q):\n    for m in history:\n        m["content"] = m["content"].strip()\n    used = client.messages.count_tokens(model="m", messages=history)\n    history.append({"role": "user", "content": q + "\\n\\n"})\n    return client.messages.create(model="m", max_tokens=9, messages=history)\n', line=8),
    Invalid('import anthropic\n\nclient = anthropic.Anthropic()\n\n\ndef turn(history, q):\n    history.append({"role": "user", "content": q})\n    older = history[:-4]\n    for m in older:\n        m["content"] = strip_images(m["content"])\n    return client.messages.create(model="m", max_tokens=9, messages=history)\n', line=10),
    Invalid('import anthropic\n\nclient = anthropic.Anthropic()\n\n\ndef turn(history, q):\n    history.append({"role": "user", "content": q})\n    for i, m in enumerate(history):\n        if i < len(history) - 4:\n            m["content"] = strip_images(m["content"])\n    return client.messages.create(model="m", max_tokens=9, messages=history)\n', line=10),
    Invalid('import anthropic\n\nclient = anthropic.Anthropic()\n\n\nclass Agent:\n    def __init__(self):\n        self.messages = []\n\n    def add(self, role, content):\n        self.messages.append({"role": role, "content": content})\n\n    def turn(self, q):\n        for m in self.messages:\n            m["content"] = m["content"].strip()\n        self.add("user", q + "\\n")\n        return client.messages.create(model="m", max_tokens=9, messages=self.messages)\n', line=15),
    Invalid('import anthropic\n\nclient = anthropic.Anthropic()\n\n\ndef turn(history):\n    for m in history:\n        m["content"] = sanitize_xml(m["content"])  # escapes & -> &amp; again on every turn\n    return client.messages.create(model="m", max_tokens=9, messages=history)\n', line=8),
    Invalid('import anthropic\n\nclient = anthropic.Anthropic()\n\n\ndef turn(history, q):\n    history.append({"role": "user", "content": q})\n    for m in history[:-4]:\n        m["content"] = strip_images(m["content"])\n    return client.messages.create(model="m", max_tokens=9, messages=history)\n', line=9),
    Invalid('import anthropic\n\nclient = anthropic.Anthropic()\n\n\ndef turn(history, q):\n    history.append({"role": "user", "content": q})\n    for m in history[:-6]:\n        if m["content"] is not None:\n            m["content"] = "[older tool output cleared]"\n    return client.messages.create(model="m", max_tokens=9, messages=history)\n', line=10),
    Invalid('import anthropic\n\nclient = anthropic.Anthropic()\n\n\ndef turn(history, q):\n    for i, m in enumerate(history):\n        m["content"] = m["content"].rstrip()\n    history.append({"role": "user", "content": q + "\\n\\n"})\n    return client.messages.create(model="m", max_tokens=9, messages=history)\n', line=8),
    Invalid("import anthropic\nclient = anthropic.Anthropic()\ndef turn(history):\n    for m in history:\n        m['content'] = clean_up_with_llm_summary(m['content'])\n    return client.messages.create(model='m', max_tokens=9, messages=history)\n", line=5),
    Invalid("import anthropic\nclient = anthropic.Anthropic()\ndef turn(history, junk):\n    for m in history:\n        m['content'] = m['content'].strip(junk)\n    return client.messages.create(model='m', max_tokens=9, messages=history)\n", line=5),
    Invalid("import anthropic\nclient = anthropic.Anthropic()\ndef turn(history):\n    for m in history:\n        m['content'] = shorten(m['content'])\n    return client.messages.create(model='m', max_tokens=9, messages=history)\n", line=5),
    Invalid(_OPENAI + "def step(messages):\n    for m in messages:\n        m['content'] = '[removed]'\n    return client.chat.completions.create(model='m', messages=messages)\n", line=5),
    Invalid(_OPENAI + "def step(messages, note):\n    messages[1]['content'] = note\n    return client.chat.completions.create(model='m', messages=messages)\n", line=4),
    Invalid(_SDK + "def step(history, note):\n    history[1]['content'] = note\n    return PromptBuilder().history(history).build()\n", line=3),
    Invalid(_CLAUDE + "class Agent:\n    def turn(self):\n        for i, m in enumerate(self.messages):\n            m['content'] = m['content'][:100]\n        return client.messages.create(model='m', messages=self.messages)\n", line=6),
    # Issue 11 Build 2: every tool result re-truncated to a budget shared by their count.
    Invalid(_OPENAI + 'BUDGET = 20000\n\ndef turn(messages, q):\n    messages.append({"role": "user", "content": q})\n    tool_msgs = [m for m in messages if m["role"] == "tool"]\n    if tool_msgs:\n        per = BUDGET // len(tool_msgs)\n        for t in tool_msgs:\n            t["content"] = t["content"][:per]\n    return client.chat.completions.create(model="m", messages=messages)\n', line=11),
    # Issue 11 Build 2: a fixed message index replaced with current state.
    Invalid(_OPENAI + 'BUDGET = 20000\n\nclass Agent:\n    def __init__(self):\n        self.messages = [{"role": "system", "content": "Plan."}, {"role": "system", "content": ""}]\n    def turn(self, q):\n        self.messages[1] = {"role": "system", "content": self.render_state()}\n        self.messages.append({"role": "user", "content": q})\n        return client.chat.completions.create(model="m", messages=self.messages)\n', line=9),
    # Issue 11 Build 2: a message inserted at the head of a stored history each turn.
    Invalid(_OPENAI + 'BUDGET = 20000\n\nclass Agent:\n    def __init__(self):\n        self.history = []\n    def turn(self, q, notes):\n        self.history.insert(0, {"role": "user", "content": f"Notes: {notes}"})\n        self.history.append({"role": "user", "content": q})\n        return client.chat.completions.create(model="m", messages=self.history)\n', line=9),
    # Issue 11 Build 2: string contents normalised in place.
    Invalid(_OPENAI + 'BUDGET = 20000\n\ndef turn(messages, q):\n    for m in messages:\n        if isinstance(m["content"], str):\n            m["content"] = m["content"].strip()\n    messages.append({"role": "user", "content": q})\n    return client.chat.completions.create(model="m", messages=messages)\n', line=8),
    # Issue 11 Build 2: `messages.remove(old)` on the sent list.
    Invalid(_OPENAI + 'BUDGET = 20000\n\ndef turn(messages, q):\n    for old in list(messages):\n        if old["role"] == "tool" and old.get("stale"):\n            messages.remove(old)\n    messages.append({"role": "user", "content": q})\n    return client.chat.completions.create(model="m", messages=messages)\n', line=8),
    # Issue 11 Build 2: a field of earlier steps cleared, the messages rendered from it.
    Invalid(_OPENAI + 'BUDGET = 20000\n\nclass Agent:\n    def __init__(self):\n        self.steps = []\n    def to_messages(self):\n        messages = []\n        for step in self.steps:\n            messages.append({"role": "user", "content": step.observations})\n        return messages\n    def run(self, task):\n        while True:\n            for step in self.steps[:-2]:\n                step.observations = None\n            reply = client.chat.completions.create(model="m", messages=self.to_messages())\n            self.steps.append(reply)\n', line=16),
    # Issue 11 Build 2: older tool outputs replaced with "<omitted>".
    Invalid(_OPENAI + 'BUDGET = 20000\n\nclass Agent:\n    def __init__(self):\n        self.messages = []\n    def step(self, q):\n        for old in self.messages[:-1]:\n            if old["role"] == "tool":\n                old["content"] = "<omitted>"\n        self.messages.append({"role": "user", "content": q})\n        return client.chat.completions.create(model="m", messages=self.messages)\n', line=11),
    # The same private helper given the stored history: its slots are replaced for good.
    Invalid(_OPENAI + 'class Agent:\n    def _for_summary(self, formatted):\n        for idx, msg in enumerate(formatted):\n            if isinstance(msg, str):\n                formatted[idx] = {"role": "user", "content": msg}\n        return formatted\n    def call(self):\n        msgs = self._for_summary(self.messages)\n        return client.responses.create(model="m", input=msgs)\n', line=7),
    # Issue 11 review (smolagents' vision browser example): screenshots cleared from older memory steps on
    # every step; the agent renders every memory step into the next model call's messages.
    Invalid("from smolagents import CodeAgent\ndef save_screenshot(memory_step, agent):\n    for previous in agent.memory.steps:\n        if previous.step_number <= memory_step.step_number - 2:\n            previous.observations_images = None\n    memory_step.observations_images = [take_screenshot()]\n", line=5),
    # Issue 11: earlier messages rewritten, the history sent through `dict(...)` as `**params`.
    Invalid(_CLAUDE + "def turn(history, text):\n    for m in history:\n        if m['role'] == 'user':\n            m['content'] = m['content'][:200]\n    history.append({'role': 'user', 'content': text})\n    params = dict(model='m', max_tokens=512, messages=history)\n    return client.messages.create(**params)\n", line=6),
    # Issue 11: the history is a dict entry (`state['messages']`), sent through a `**params` dict.
    Invalid(_CLAUDE + "def turn(state, text):\n    for m in state['messages']:\n        m['content'] = m['content'][:100]\n    params = {'model': 'm', 'max_tokens': 9, 'messages': state['messages']}\n    return client.messages.create(**params)\n", line=5),
    # A store before the parameter is rebound to its copy, or with the copy made on one branch only, still
    # changes the caller's messages.
    Invalid("import copy\n" + _OPENAI + "def run(messages, note):\n    messages[1]['content'] += note\n    messages = copy.deepcopy(messages)\n    return client.chat.completions.create(model='m', messages=messages)\n", line=5),
    Invalid("import copy\n" + _OPENAI + "def run(messages, note, fresh):\n    if fresh:\n        messages = copy.deepcopy(messages)\n    messages[1]['content'] += note\n    return client.chat.completions.create(model='m', messages=messages)\n", line=7),
    # Issue 11 (MetaGPT parse_editor_result): editor results older than the newest five replaced by a stub in
    # the rebuilt memory each request; older tool outputs replaced with "<omitted>" by their distance from the end.
    Invalid(_OPENAI + 'import re\nclass RoleZero:\n    def parse_editor_result(self, memory, keep_latest_count=5):\n        new_memory = []\n        i = 0\n        for msg in reversed(memory):\n            if re.findall(r"Command Editor\\.(\\w+?) executed", msg["content"]):\n                i += 1\n                if i > keep_latest_count:\n                    msg = {"role": "user", "content": msg["content"][:msg["content"].find("Command Editor")]}\n            new_memory.append(msg)\n        new_memory.reverse()\n        return new_memory\n    def think(self):\n        memory = self.parse_editor_result(self.storage)\n        return client.chat.completions.create(model="m", messages=[{"role": "system", "content": "You code."}, *memory])\n', line=12),
    Invalid(_OPENAI + 'KEEP = 3\nclass Agent:\n    def step(self, q):\n        self.history.append({"role": "user", "content": q})\n        sent = []\n        for i, m in enumerate(self.history):\n            sent.append({"role": "tool", "content": "<omitted>"} if m["role"] == "tool" and i < len(self.history) - KEEP else m)\n        return client.chat.completions.create(model="m", messages=sent)\n', line=9),
    # Issue 11 review: a moving "<omitted>" mask on a list built for this request, or on a deep copy: the boundary
    # (the list's length minus a bound, every message but the newest) moves each turn.
    Invalid(_OPENAI + 'def to_api(history):\n    out = []\n    for m in history:\n        out.append({"role": m["role"], "content": m["content"]})\n    return out\ndef turn(history, q):\n    history.append({"role": "user", "content": q})\n    msgs = to_api(history)\n    for i in range(len(msgs) - 3):\n        if msgs[i]["role"] == "tool":\n            msgs[i] = {"role": "tool", "content": "<omitted>"}\n    return client.chat.completions.create(model="m", messages=msgs)\n', line=13),
    Invalid("import copy\n" + _OPENAI + 'class Agent:\n    def turn(self, q):\n        self.history.append({"role": "user", "content": q})\n        messages = copy.deepcopy(self.history)\n        keep = len(messages) - 3\n        for i, m in enumerate(messages):\n            if i < keep and m["role"] == "tool":\n                m["content"] = "<omitted>"\n        return client.chat.completions.create(model="m", messages=messages)\n', line=11),
    Invalid("import copy\n" + _OPENAI + 'class Agent:\n    def turn(self, q):\n        self.history.append({"role": "user", "content": q})\n        messages = copy.deepcopy(self.history)\n        for m in messages:\n            if m["role"] == "tool" and m is not messages[-1]:\n                m["content"] = "<omitted>"\n        return client.chat.completions.create(model="m", messages=messages)\n', line=10),
    Invalid("from .serializer import serialize_messages\n" + _OPENAI + 'def ask(messages):\n    out = serialize_messages(messages)\n    out[len(out) - 3]["content"] = "<omitted>"\n    return client.chat.completions.create(model="m", messages=out)\n', line=6),
    # A message of the list literal after the spliced history is a sent one.
    Invalid(_OPENAI + 'RULES = "Be brief."\ndef turn(history, q):\n    messages = [{"role": "system", "content": "Base."}, *history, {"role": "user", "content": q}]\n    messages[1]["content"] += RULES\n    return client.chat.completions.create(model="m", messages=messages)\n', line=6),
]
