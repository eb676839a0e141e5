"""Case data of the PC201-PC203 rules in :mod:`lint_rules.history`: their INVALID code strings and some VALID ones (kept here so the
rule module stays short; the rule classes name them as their ``INVALID`` (and PC203 adds its hysteresis ``VALID`` cases))."""

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
PC202_INVALID = [
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
