"""Case data of PC101 (:class:`lint_rules.volatile.VolatileInSystemPrompt`): its VALID code strings written
with the rule (the blind sets' are ``PC101_VALID_BLIND`` in :mod:`lint_rules.volatile_cases`)."""

from __future__ import annotations

from lint_rules.volatile_cases import _B2, _CC, _CLAUDE, _OPENAI

PC101_VALID = [
    # Issue 11 (parlant, blind set 8): a tracing id given to an event emitter; the "preamble" returned is events.
    _OPENAI + "import uuid\nasync def generate_preamble(emitter, text):\n    handle = await emitter.emit_message_event(trace_id=uuid.uuid4().hex, data={'message': text})\n    return [handle.event]\n",
    # Issue 11 (open-interpreter, mem0; blind set 10): a date read once, at import, into a module constant.
    _CLAUDE + "from datetime import datetime\nSYSTEM_PROMPT = f\"\"\"You run on a VM.\n* The current date is {datetime.today().strftime('%A, %B %d, %Y')}.\"\"\"\ndef ask(history):\n    return client.messages.create(model='m', max_tokens=9, system=SYSTEM_PROMPT, messages=history)\n",
    # Issue 11: a request built as a dict and sent as `**params`, the clock in the newest user turn; a system entry
    # overwritten with a constant before the call; a clock block after the last breakpoint of the dict's system.
    _B2 + 'def ask(history, q):\n    params = {"model": "m", "max_tokens": 512, "system": RULES}\n    params["messages"] = history + [{"role": "user", "content": f"[{datetime.now():%H:%M}] {q}"}]\n    return client.messages.create(**params)\n',
    _B2 + 'def ask(history, q):\n    params = {"model": "m", "max_tokens": 512, "system": f"{RULES}\\nNow: {datetime.now()}"}\n    params["system"] = RULES\n    return client.messages.create(**params, messages=history + [q])\n',
    _B2 + f'def ask(history, q):\n    params = {{"model": "m", "max_tokens": 512, "messages": history + [q]}}\n    params["system"] = [{{"type": "text", "text": RULES, {_CC}}}, {{"type": "text", "text": f"Now: {{datetime.now()}}"}}]\n    return client.messages.create(**params)\n',
    # Issue 11 (crewAI, OpenHands): a client returned by a call, constant system, clock in the user turn.
    _B2 + 'class Agent:\n    def _get_client(self):\n        return client\n    def ask(self, history, q):\n        return self._get_client().messages.create(model="m", max_tokens=512, system=RULES, messages=history + [{"role": "user", "content": f"{datetime.now():%H:%M} {q}"}])\n',
    # Issue 11: a system block after the last cache breakpoint of the request is never cached.
    _CLAUDE + f"from datetime import datetime\nRULES = open('rules.md').read()\ndef ask(q, history):\n    return client.messages.create(model='m', system=[{{'type': 'text', 'text': RULES, {_CC}}}, {{'type': 'text', 'text': f'Now: {{datetime.now()}}'}}], messages=history + [q])\n",
    # Issue 11 (pydantic-ai): a run id passed to a class beside its content is metadata (`RunContext(run_id=...)`);
    # a field of what a local factory returns is the argument it was built from; a sibling `run_id=` of a call
    # whose result's `.instructions` is read; a user-turn builder (`_map_user_prompt`) is not the system prompt.
    _CLAUDE + "import uuid\nfrom .ctx import RunContext\ndef ask(q):\n    ctx = RunContext[dict](deps={}, run_id=uuid.uuid4().hex)\n    return client.messages.create(model='m', system=render_instructions(ctx), messages=[q])\n",
    _CLAUDE + "from datetime import datetime\nfrom .types import Params\nasync def build(system, messages):\n    return Params(instructions=system, input=messages, sent=datetime.now())\nasync def ask(messages):\n    params = await build('Be brief.', messages)\n    return client.messages.create(model='m', system=params.instructions, messages=params.input)\n",
    # Issue 11 (langroid, blind set 8): a random pick in a branch that this call switches off (`if random:` with
    # `random=False` left at its default); called with `random=True` it is INVALID.
    _OPENAI + "from random import choice\nEXAMPLES = ['a', 'b', 'c']\ndef usage_examples(random=False):\n    examples = EXAMPLES\n    if random:\n        examples = [choice(EXAMPLES)]\n    return '\\n'.join(examples)\ndef format_instructions():\n    return 'Use the tool like this:\\n' + usage_examples()\n",
    # A record time kept on an object whose other field is sent (second review, mt/t3: reading the field back is INVALID).
    _CLAUDE + "from datetime import datetime\nfrom .docs import Doc\nMANUAL = open('manual.md').read()\ndef ask(q):\n    doc = Doc(text=MANUAL, updated_at=datetime.now())\n    return client.messages.create(model='m', system=f'Answer from the manual.\\n{doc.text}', messages=[q])\n",
    _CLAUDE + "import uuid\ndef ask(agent, q):\n    with agent.session(run_id=uuid.uuid4().hex) as s:\n        return client.messages.create(model='m', system=s.instructions, messages=[q])\n",
    _CLAUDE + "from datetime import datetime\ndef _map_user_prompt(part):\n    return {'role': 'user', 'content': f'{datetime.now():%H:%M} {part.content}'}\n",
    # The README's own SDK snippet, as a module defines it: per-request facts (today's date) go into the newest
    # user turn through `.user(..., context=)`, not into a prefix layer.
    "import anthropic, promptcache\nfrom datetime import date\nfrom promptcache import Conversation, PromptBuilder\nRULES = open('rules.md').read()\nBASE = PromptBuilder().system(RULES)\nchat = Conversation(budget_tokens=20_000)\nname, question = input('Name: '), input('Question: ')\ntoday = date.today().isoformat()\nprompt = BASE.history(chat).user(question, context={'customer': name, 'today': today}).build()\n",
    # Issue 11, from real code (pydantic-ai): a clock passed as a sibling keyword (`timestamp=`) of an object
    # is not in its `.instructions`; a filesystem helper is not a system-prompt builder.
    "from pydantic_ai import messages as _m\ndef merge(messages):\n    clean = []\n    for message in messages:\n        last = clean[-1] if clean else None\n        if last:\n            clean[-1] = _m.ModelRequest(parts=last.parts, instructions=last.instructions or message.instructions, timestamp=message.timestamp)\n        else:\n            clean.append(message)\n    return clean\n",
    "import uuid\nfrom openai import OpenAI\nclient = OpenAI()\ndef _build_filesystem_test_session(root):\n    return {'root': root, 'snapshot_id': str(uuid.uuid4())}\n",
    _CLAUDE + 'RULES = "Be brief."\ndef ask(q):\n    return client.messages.create(model="m", system=RULES, messages=[{"role": "user", "content": q}])\n',
    _CLAUDE + "import time\ndef ask(q):\n    t0 = time.time()\n    r = client.messages.create(model='m', system='Be brief.', messages=[{'role': 'user', 'content': q}])\n    print(time.time() - t0)\n    return r\n",
    _OPENAI + "from datetime import datetime\ndef ask(q):\n    return client.chat.completions.create(model='m', messages=[\n        {'role': 'system', 'content': 'Be brief.'},\n        {'role': 'user', 'content': f'{datetime.now():%Y-%m-%d} {q}'}])\n",
    "import time\nSYSTEM_PROMPT = f'Started {time.time()}'\n",
    # Issue 11 review: a local `render(template, **values)` whose keyword is a constant.
    _OPENAI + "from datetime import datetime\nPRODUCT = 'Acme CRM'\ndef render(template, **values):\n    return template.format(**values)\ndef ask(history, q):\n    system = render('You are helpful. Product: {product}', product=PRODUCT)\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, *history, {'role': 'user', 'content': q}])\n",
    # A seeded generator is deterministic: the same greeting in every process.
    _CLAUDE + "import random\nGREETINGS = ['Hi', 'Hello']\ndef ask(q):\n    return client.messages.create(model='m', system=random.Random(7).choice(GREETINGS) + '. Help.', messages=[])\n",
    # Issue 11 Build 2, `system += ...` kept out of the prefix:
    _B2 + 'def ask(history, q):\n    system = RULES\n    system += "\\nAnswer briefly."\n    q = q + f" (sent {datetime.now()})"\n    return client.messages.create(model="m", system=system, messages=history + [{"role": "user", "content": q}])\n',
    # Issue 11 Build 2, `parts.append(...)` then `"\n".join(parts)` kept out of the prefix:
    _B2 + 'def ask(history, q, now=None):\n    parts = [RULES]\n    parts.append("Answer briefly.")\n    stamp = f"Current time: {datetime.now():%H:%M}"\n    return client.messages.create(model="m", system="\\n".join(parts), messages=history + [{"role": "user", "content": stamp + q}])\n',
    # Issue 11 Build 2, `list.extend` then join kept out of the prefix:
    _B2 + 'STYLE = ["Be brief.", "Cite sources."]\ndef ask(history, q):\n    lines = [RULES]\n    lines.extend(STYLE)\n    system = "\\n".join(lines)\n    return client.messages.create(model="m", system=system, messages=history + [q])\n',
    # Issue 11 Build 2, `str.join` over a generator kept out of the prefix:
    _B2 + 'POLICIES = {"refunds": "30 days", "shipping": "2 days"}\ndef ask(history, q):\n    system = RULES + "\\n" + "\\n".join(f"{k}: {v}" for k, v in POLICIES.items())\n    return client.messages.create(model="m", system=system, messages=history + [q])\n',
    # Issue 11 Build 2, a helper function that returns text kept out of the prefix:
    _B2 + 'def build_system():\n    return RULES + "\\nAnswer briefly."\ndef stamp(q):\n    return f"[{datetime.now():%H:%M}] {q}"\ndef ask(history, q):\n    return client.messages.create(model="m", system=build_system(), messages=history + [{"role": "user", "content": stamp(q)}])\n',
    # Issue 11 Build 2, a dict entry holding session state kept out of the prefix:
    _B2 + 'class Session:\n    def __init__(self):\n        self.state = {"rules": RULES}\n    def turn(self, history, q):\n        self.state["last_seen"] = datetime.now().isoformat()\n        return client.messages.create(model="m", system=self.state["rules"], messages=history + [q])\n',
    # ... and read with `.get(key, default)`:
    _B2 + 'class Session:\n    def __init__(self):\n        self.state = {"rules": RULES}\n    def turn(self, history, q):\n        self.state["last_seen"] = datetime.now().isoformat()\n        return client.messages.create(model="m", system=self.state.get("rules", RULES), messages=history + [q])\n',
    # Issue 11 Build 2, an object attribute holding session state kept out of the prefix:
    _B2 + 'class Agent:\n    def __init__(self):\n        self.system = RULES + "\\nAnswer briefly."\n        self.clock = None\n    def turn(self, history, q):\n        self.clock = datetime.now().strftime("%H:%M:%S")\n        user = {"role": "user", "content": f"[{self.clock}] {q}"}\n        return client.messages.create(model="m", system=self.system, messages=history + [user])\n',
    # Issue 11 Build 2, a method of the same class kept out of the prefix:
    _B2 + 'class Agent:\n    def _system(self):\n        return RULES + "\\nBe brief."\n    def _user(self, q):\n        return {"role": "user", "content": f"{datetime.now().isoformat()} {q}"}\n    def turn(self, history, q):\n        return client.messages.create(model="m", system=self._system(), messages=history + [self._user(q)])\n',
    # Issue 11: count_tokens through the raw-response wrapper sends no request to be cached.
    _CLAUDE + "from datetime import datetime\ndef size(history):\n    return client.messages.with_raw_response.count_tokens(model='m', system=f'Today is {datetime.now()}.', messages=history)\n",
    # The SDK's user-message TypedDict is the newest turn, where per-request data belongs.
    _OPENAI + "from datetime import datetime\nfrom openai.types.chat import ChatCompletionUserMessageParam\ndef ask(q):\n    user = ChatCompletionUserMessageParam(role='user', content=f'Now: {datetime.now()} {q}')\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': 'Be brief.'}, user])\n",
    # Issue 11 (gpt-researcher prompts.py): a date after the per-call inputs of a prompt builder's template;
    # (editor.py) a builder of the user message, and a conversation literal whose system message is constant.
    "from datetime import datetime\nfrom langchain_core.documents import Document\nclass PromptFamily:\n    @staticmethod\n    def generate_report_prompt(question, context):\n        return f'Information: \"{context}\"\\nAnswer: {question}\\nAssume the current date is {datetime.now():%B %d, %Y}.'\n",
    _OPENAI + "from datetime import datetime\nclass Editor:\n    async def plan(self, research):\n        return await call_model(prompt=self._create_planning_prompt(research))\n    def _create_planning_prompt(self, research):\n        return [{'role': 'system', 'content': 'You are a research editor.'}, {'role': 'user', 'content': self._format_planning_instructions(research)}]\n    def _format_planning_instructions(self, research):\n        today = datetime.now().strftime('%d/%m/%Y')\n        return f'Today is {today}\\nResearch summary: {research}'\n",
    # Issue 11 (quivr, blind set 7): the name rebound to plain text before the read; the clock text went elsewhere.
    _OPENAI + "from datetime import datetime\ndef turn(history, q):\n    system = f'Today is {datetime.now():%Y-%m-%d %H:%M}.'\n    log.info(system)\n    system = 'You plan trips.'\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, *history, {'role': 'user', 'content': q}])\n",
    "from datetime import datetime\nfrom langchain_core.prompts import ChatPromptTemplate, SystemMessagePromptTemplate\nnow = datetime.now().isoformat()\ndef define():\n    prompts = {}\n    template = f'Time: {now}.'\n    prompts['log'] = template\n    template = 'Given the user input, find the intent.'\n    prompts['intent'] = ChatPromptTemplate.from_messages([SystemMessagePromptTemplate.from_template(template)])\n    return prompts\n",
    # Onyx (#3/#4): the clock is assigned after the prompt is built, into a result every caller discards (`_`).
    _OPENAI + "from datetime import datetime\ndef process_with_prompt_cache(prefix, suffix):\n    meta = None\n    prompt = prepare(prefix, suffix, meta=meta)\n    meta = {'created_at': datetime.now()}\n    return prompt, meta\ndef ask(messages):\n    prompt, _ = process_with_prompt_cache(messages[:-1], messages[-1:])\n    return client.chat.completions.create(model='m', messages=prompt)\n",
]
