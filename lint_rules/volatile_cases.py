"""Case data of the PC1xx rules in :mod:`lint_rules.volatile`: the INVALID code strings (kept here so the rule
module stays short; the rule classes name them as their ``INVALID``)."""

from __future__ import annotations

from promptcache.lint.rule import Invalid

_CLAUDE = 'import anthropic\nclient = anthropic.Anthropic()\n'
_OPENAI = 'from openai import OpenAI\nclient = OpenAI()\n'
_CC = '"cache_control": {"type": "ephemeral"}'
_B2 = 'import anthropic\nfrom datetime import datetime\nclient = anthropic.Anthropic()\nRULES = "You are a support agent."\n'

# PC101 (VolatileInSystemPrompt)
PC101_INVALID = [
    # ... while a request made inside an assert is sent (newcomer helper-100)
    # ... and so is a message handed to a helper, bound with `:=`, or an agent run there (review helper-101)
    Invalid("from datetime import date\nfrom openai import OpenAI\nclient = OpenAI()\ndef send(msgs):\n    return client.chat.completions.create(model='m', messages=msgs)\n"
            "def test_helper():\n    assert send([{'role': 'system', 'content': f'Today is {date.today()}'}, {'role': 'user', 'content': 'hi'}]) == 'ok'\n", line=7),
    Invalid("from datetime import date\nfrom openai import OpenAI\nclient = OpenAI()\ndef test_walrus():\n    assert (messages := [{'role': 'system', 'content': f'Today is {date.today()}'}]) != []\n"
            "    client.chat.completions.create(model='m', messages=messages)\n", line=5),
    Invalid("from datetime import datetime\nfrom pydantic_ai import Agent\ndef test_agent():\n    assert Agent('openai:gpt-4o', system_prompt=f'Now: {datetime.now()}').run_sync('hi').output == 'x'\n", line=4),
    Invalid("import anthropic\nfrom datetime import datetime\nclient = anthropic.Anthropic()\ndef test_send():\n"
            "    assert client.messages.create(model='m', max_tokens=9, messages=[\n        {'role': 'system', 'content': f'Now: {datetime.now()}'},\n"
            "        {'role': 'user', 'content': 'hi'}]).content\n", line=6),
    # A random salt drawn with random.choices is new content on every call (onyx, blind set 12; was PC303 "reorders").
    Invalid(_CLAUDE + "import random, string\ndef run(q):\n    salt = ''.join(random.choices(string.ascii_lowercase, k=32))\n    return client.messages.create(model='m', system=salt + 'Help.', messages=[q])\n", line=6),
    # Issue 11 (newcomer): a clock after the user's name in a builder: the name is the same on every request of
    # one user, so the clock still breaks that user's prefix.
    Invalid('from datetime import datetime\nfrom openai import OpenAI\nclient = OpenAI()\ndef build_system(user):\n    return f"You are Acme\'s assistant. The user is {user.name}. Local time: {datetime.now():%H:%M}"\ndef ask(user, q):\n    return client.chat.completions.create(model=\'m\', messages=[{\'role\': \'system\', \'content\': build_system(user)}, {\'role\': \'user\', \'content\': q}])\n', line=5),
    # The date ahead of the inputs, or after an input every call fixes: the builder's text starts the same.
    Invalid("from datetime import date\nfrom langchain_core.documents import Document\ndef build_prompt(question):\n    return f'Today is {date.today()}. Answer: {question}'\n", line=4),
    # A parameter that starts the text is a prompt being wrapped (often a constant system prompt), not an input.
    Invalid("from datetime import date\nfrom langchain_core.documents import Document\ndef with_date_prompt(system):\n    return f'{system}\\nToday is {date.today()}.'\n", line=4),
    Invalid(_OPENAI + "from datetime import date\ndef _prompt(kind):\n    return f'You write {kind} reports. Today is {date.today()}.'\ndef ask(q):\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': _prompt('weekly')}, {'role': 'user', 'content': q}])\n", line=5),
    # Issue 11: a clock in the system of a request dict sent as `**params`; a client returned by a call (crewAI).
    Invalid(_B2 + 'def ask(history, q):\n    params = {"model": "m", "max_tokens": 512, "system": f"{RULES}\\nNow: {datetime.now()}", "messages": history + [q]}\n    return client.messages.create(**params)\n', line=6),
    Invalid(_B2 + 'def ask(history, q, tools):\n    params = dict(model="m", max_tokens=512, messages=history + [q])\n    if tools:\n        params["tools"] = tools\n    params["system"] = f"{RULES}\\nNow: {datetime.now():%H:%M}"\n    return client.messages.create(**params)\n', line=9),
    Invalid(_B2 + 'class Agent:\n    def _get_client(self):\n        return client\n    def ask(self, history, q):\n        return self._get_client().messages.create(model="m", max_tokens=512, system=f"{RULES}\\nNow: {datetime.now():%H:%M}", messages=history + [q])\n', line=9),
    # A breakpoint added to the newest message at run time puts the system blocks before it.
    Invalid(_CLAUDE + f"from datetime import datetime\nRULES = open('rules.md').read()\ndef ask(q, history):\n    history[-1]['content'][-1]['cache_control'] = {{'type': 'ephemeral'}}\n    return client.messages.create(model='m', system=[{{'type': 'text', 'text': RULES, {_CC}}}, {{'type': 'text', 'text': f'Now: {{datetime.now()}}'}}], messages=history + [q])\n", line=7),
    # The field a local factory fills from the clock still carries it.
    Invalid(_CLAUDE + "from datetime import datetime\nfrom .types import Params\ndef build(system):\n    return Params(instructions=f'{system} at {datetime.now()}', input=[])\ndef ask():\n    p = build('Be brief.')\n    return client.messages.create(model='m', system=p.instructions, messages=p.input)\n", line=9),
    # A factory of this module is not a constructor: `.system` of its result carries what it put there.
    Invalid(_CLAUDE + "from datetime import datetime\nclass Request:\n    def __init__(self, system):\n        self.system = system\ndef make_request(system):\n    return Request(system=f'{system} at {datetime.now()}')\ndef ask(q):\n    return client.messages.create(model='m', system=make_request(system='Be helpful').system, messages=[])\n", line=10),
    # A prompt builder returning (text, length): the text is still the prompt.
    Invalid(_CLAUDE + "from datetime import datetime\ndef build_system_prompt(user_id):\n    text = f'You help {user_id} at {datetime.now()}'\n    return text, len(text)\n", line=6),
    Invalid(_CLAUDE + "from datetime import datetime\ndef ask(q):\n    return client.messages.create(model='m', system=f'Now: {datetime.now()}', messages=[])\n", line=5),
    # Issue 11 review: a prompt-named builder is the user's turn by what it returns (a user-role message, VALID
    # above), not by a `user_prompt` in its name.
    Invalid(_CLAUDE + "from datetime import datetime\ndef build_system_prompt_for_user_message(q):\n    return f'You are helpful. Time: {datetime.now()}'\n", line=5),
    # Issue 11 review: automatic caching (`cache_control=` on the request) and a marker an imported helper
    # adds to the history put the system blocks before a breakpoint.
    Invalid(_CLAUDE + f"from datetime import datetime\nRULES = open('rules.md').read()\ndef ask(q, history):\n    return client.messages.create(model='m', cache_control={{'type': 'ephemeral'}}, system=[{{'type': 'text', 'text': RULES, {_CC}}}, {{'type': 'text', 'text': f'Now: {{datetime.now()}}'}}], messages=history + [q])\n", line=6),
    Invalid(_CLAUDE + f"from datetime import datetime\nfrom .cache import mark_last\nRULES = open('rules.md').read()\ndef ask(q, history):\n    history = mark_last(history)\n    return client.messages.create(model='m', system=[{{'type': 'text', 'text': RULES, {_CC}}}, {{'type': 'text', 'text': f'Now: {{datetime.now()}}'}}], messages=history + [q])\n", line=8),
    # Issue 11 review: a timestamp keyword is metadata only while the object is not rendered whole
    # (`asdict`, `.render()`), and only for a class or a context manager (a function may render it).
    Invalid(_OPENAI + "from dataclasses import asdict\nfrom datetime import datetime\nfrom .ctx import PromptContext\nTEMPLATE = 'Current time: {now}. Locale: {locale}.'\ndef ask(history, q):\n    ctx = PromptContext(locale='en', now=datetime.now())\n    system = TEMPLATE.format(**asdict(ctx))\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, *history, q])\n", line=10),
    Invalid(_CLAUDE + "from datetime import datetime\nfrom .prompts import SystemPrompt\ndef ask(history, q):\n    sp = SystemPrompt(base='You are helpful.', timestamp=datetime.now().isoformat())\n    return client.messages.create(model='m', system=sp.render(), messages=history + [q])\n", line=7),
    Invalid(_OPENAI + "from random import choice\nEXAMPLES = ['a', 'b', 'c']\ndef usage_examples(random=False):\n    examples = EXAMPLES\n    if random:\n        examples = [choice(EXAMPLES)]\n    return '\\n'.join(examples)\ndef format_instructions():\n    return 'Use the tool like this:\\n' + usage_examples(random=True)\n", line=11),
    # Review of the above (s26): a flag the function rebinds before its test (`flag = flag or settings.X`, a None
    # default resolved from the object) is not switched off by the call.
    Invalid(_OPENAI + "from datetime import datetime\nfrom .settings import settings\ndef header(with_time=False):\n    with_time = with_time or settings.SHOW_TIME\n    text = 'You are a support bot.'\n    if with_time:\n        text += f' Now: {datetime.now()}'\n    return text\ndef ask(history, q):\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': header()}, *history, q])\n", line=12),
    # Review (s26): a private function called once at import but looping per turn (`asyncio.run(_main())`), or
    # called from a module-level chat loop, reads the clock per turn: not import-time (an error, not a warning).
    Invalid(_CLAUDE + "import asyncio\nfrom datetime import datetime\nasync def _main():\n    history = []\n    while True:\n        history.append({'role': 'user', 'content': input('> ')})\n        r = await client.messages.create(model='m', max_tokens=9, system=f'Now: {datetime.now()}', messages=history)\n        history.append({'role': 'assistant', 'content': r.content})\nasyncio.run(_main())\n", line=9),
    # Review (s26, round 2): an `if precise:` of another function (a helper's own parameter) is not switched off.
    Invalid(_OPENAI + "from datetime import datetime\ndef _clock(precise):\n    if precise:\n        return datetime.now().isoformat()\n    return 'today'\ndef header(precise=False):\n    return f'Be brief. Now: {_clock(precise=True)}'\ndef ask(history, q):\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': header()}, *history, q])\n", line=11),
    # Second review (mt/t3): the record-time keyword left out of the object is what reading it back by name gets.
    Invalid(_CLAUDE + "from datetime import datetime\nfrom .docs import Doc\nMANUAL = open('manual.md').read()\ndef ask(q):\n    doc = Doc(text=MANUAL, updated_at=datetime.now())\n    return client.messages.create(model='m', system=f'Manual as of {doc.updated_at}.\\n{doc.text}', messages=[q])\n", line=8),
    Invalid(_OPENAI + "from datetime import datetime\nfrom .prompts import prompt_registry\ndef ask(history, q):\n    p = prompt_registry.render(name='support-system', now=datetime.now())\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': p.text}, *history, q])\n", line=7),
    # Issue 11 review (snips/k_ts_kw.py): a timestamp keyword packed into a local render's `**values`.
    Invalid(_OPENAI + "from datetime import datetime\nPRODUCT = 'Acme CRM'\ndef render(template, **values):\n    return template.format(**values)\ndef ask(history, q):\n    system = render('You are helpful. Time: {now}', now=datetime.now())\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, *history, {'role': 'user', 'content': q}])\n", line=9),
    # int() / round() drop ordering taint only: the number is still the clock.
    Invalid(_CLAUDE + "import time\ndef ask(q):\n    return client.messages.create(model='m', system=f'Epoch {int(time.time())}', messages=[])\n", line=5),
    Invalid(_CLAUDE + "import time\ndef ask(q):\n    return client.messages.create(model='m', system='Seed: %d' % round(time.time()), messages=[])\n", line=5),
    # promptcache's own builder: its system layer is a prefix slot (the SDK refuses the value at run time).
    Invalid("from datetime import datetime\nfrom promptcache import PromptBuilder\ndef base():\n    return PromptBuilder().system('Be brief.', f'Now: {datetime.now()}')\n", line=4),
    Invalid(_OPENAI + "import uuid\nclass Chat:\n    def __init__(self):\n        self.sid = uuid.uuid4().hex\n        self.messages = [{'role': 'system', 'content': f'Session {self.sid}'}]\n    def ask(self):\n        return client.chat.completions.create(model='m', messages=self.messages)\n", line=7),
    Invalid("import time\nfrom langchain_core.messages import SystemMessage\nsystem = SystemMessage(content=f\"Received {time.strftime('%H:%M')}\")\n", line=3),
    Invalid("import anthropic\nfrom datetime import datetime\nSYSTEM_PROMPT = 'Started ' + str(datetime.now())\n", line=3),
    # ... its bounds (parlant's exclusion): the id given to a call named to render text, a timestamp keyword.
    # Review of stop 30: a callee named to record and to render text makes text of the id; a clock helper called in a
    # module-level turn loop is read on every turn.
    Invalid("from openai import OpenAI\nclient = OpenAI()\nimport uuid\ndef ask(q):\n    system = format_trace_header(trace_id=uuid.uuid4().hex)\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, {'role': 'user', 'content': q}])\n", line=6),
    Invalid("import sys\nfrom datetime import datetime\nimport anthropic\nclient = anthropic.Anthropic()\ndef get_time():\n    return f\"Current time: {datetime.now():%H:%M}\"\nfor line in sys.stdin:\n    system = f\"You run tasks.\\nTime: {get_time()}\"\n    print(client.messages.create(model='m', max_tokens=9, system=system, messages=[{\"role\": \"user\", \"content\": line}]))\n", line=8),
    # Review of stop 29: only a callee named to record keeps the id; a helper or a builtin may make text of it.
    Invalid(_OPENAI + "import json, uuid\ndef ask(q):\n    system = 'Context: ' + json.dumps(dict(request_id=str(uuid.uuid4())))\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, {'role': 'user', 'content': q}])\n", line=6),
    Invalid(_OPENAI + "import uuid\ndef ask(q):\n    header = make_header(request_id=uuid.uuid4().hex)\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': f'Be brief. {header}'}, {'role': 'user', 'content': q}])\n", line=6),
    Invalid(_OPENAI + "import uuid\ndef ask(q):\n    system = render_header(trace_id=uuid.uuid4().hex)\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, {'role': 'user', 'content': q}])\n", line=6),
    Invalid(_OPENAI + "from datetime import datetime\ndef ask(session, q):\n    system = describe(session, timestamp=datetime.now())\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, {'role': 'user', 'content': q}])\n", line=6),
    # A time read once at import: reported as fixed per process (a date there is not: PC101's VALID cases).
    Invalid(_CLAUDE + "from datetime import datetime\nSYSTEM = f'Started at {datetime.now()}. Be brief.'\ndef ask(q):\n    return client.messages.create(model='m', system=SYSTEM, messages=[q])\n", line=4),
    # The same builder with the date in its system layer: a prefix slot.
    Invalid("from datetime import date\nfrom promptcache import PromptBuilder\ntoday = date.today().isoformat()\nprompt = PromptBuilder().system('Be brief.', f'Today is {today}.').user('hi').build()\n", line=4),
    # Issue 11 Build 2, `system += ...`:
    Invalid(_B2 + 'def ask(history, q):\n    system = RULES\n    system += f"\\nCurrent time: {datetime.now()}"\n    return client.messages.create(model="m", system=system, messages=history + [q])\n', line=8),
    # Issue 11 Build 2, `parts.append(...)` then `"\n".join(parts)`:
    Invalid(_B2 + 'def ask(history, q):\n    parts = [RULES]\n    parts.append(f"Current time: {datetime.now():%H:%M}")\n    return client.messages.create(model="m", system="\\n".join(parts), messages=history + [q])\n', line=8),
    # Issue 11 Build 2, `list.extend` then join:
    Invalid(_B2 + 'def ask(history, q):\n    lines = [RULES]\n    lines.extend(["Be brief.", f"Now: {datetime.now()}"])\n    system = "\\n".join(lines)\n    return client.messages.create(model="m", system=system, messages=history + [q])\n', line=9),
    # Issue 11 Build 2, `str.join` over a generator:
    Invalid(_B2 + 'def ask(history, q, user):\n    facts = {"time": datetime.now().isoformat(), "plan": "pro"}\n    system = RULES + "\\n" + "\\n".join(f"{k}: {v}" for k, v in facts.items())\n    return client.messages.create(model="m", system=system, messages=history + [q])\n', line=8),
    # Issue 11 Build 2, a helper function that returns text:
    Invalid(_B2 + 'def build_system():\n    header = f"Today is {datetime.now():%A %H:%M}."\n    return RULES + "\\n" + header\ndef ask(history, q):\n    return client.messages.create(model="m", system=build_system(), messages=history + [q])\n', line=7),
    # Issue 11 Build 2, a dict entry holding session state:
    Invalid(_B2 + 'class Session:\n    def __init__(self):\n        self.state = {"rules": RULES}\n    def turn(self, history, q):\n        self.state["now"] = datetime.now().isoformat()\n        system = f"{self.state[\'rules\']}\\nNow: {self.state[\'now\']}"\n        return client.messages.create(model="m", system=system, messages=history + [q])\n', line=11),
    # Issue 11 Build 2, an object attribute holding session state:
    Invalid(_B2 + 'class Agent:\n    def __init__(self):\n        self.clock = None\n    def _refresh(self):\n        self.clock = datetime.now().strftime("%H:%M:%S")\n    def turn(self, history, q):\n        self._refresh()\n        system = f"{RULES}\\nLocal time {self.clock}"\n        return client.messages.create(model="m", system=system, messages=history + [q])\n', line=13),
    # Issue 11 Build 2, a method of the same class:
    Invalid(_B2 + 'class Agent:\n    def _system(self):\n        return f"{RULES}\\nNow: {datetime.now().isoformat()}"\n    def turn(self, history, q):\n        return client.messages.create(model="m", system=self._system(), messages=history + [q])\n', line=7),
    # Issue 11: the SDKs' raw-response wrappers send the same request.
    Invalid(_CLAUDE + "from datetime import datetime\ndef ask(history):\n    return client.beta.messages.with_raw_response.create(model='m', max_tokens=512, system=f'Today is {datetime.now()}.', messages=history)\n", line=5),
    Invalid(_OPENAI + "from datetime import datetime\ndef ask(q):\n    return client.responses.with_raw_response.create(model='m', instructions=f'Now: {datetime.now()}', input=q)\n", line=5),
    # The system message built with the SDK's TypedDict, read like the dict literal it makes.
    Invalid(_OPENAI + "from datetime import datetime\nfrom openai.types.chat import ChatCompletionSystemMessageParam\ndef ask(q):\n    system = ChatCompletionSystemMessageParam(role='system', content=f'Now: {datetime.now()}')\n    return client.chat.completions.create(model='m', messages=[system, {'role': 'user', 'content': q}])\n", line=6),
    # Issue 11 review: a template input that is per user or per session (an attribute set in `__init__`) is the
    # same on every turn: the clock after it still breaks the conversation's prefix.
    Invalid(_OPENAI + "from datetime import datetime\ndef build_system_prompt(user_name):\n    return f'You help {user_name}. Now: {datetime.now().isoformat()}'\nclass Bot:\n    def __init__(self, name):\n        self.name = name\n        self.history = []\n    def turn(self, q):\n        self.history.append({'role': 'user', 'content': q})\n        return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': build_system_prompt(self.name)}, *self.history])\n", line=5),
    # Issue 11 review: a user message is the newest turn by its position, not its role. A builder whose text is
    # a user message sent *before* the history, or a conversation spliced ahead of it, is part of the prefix.
    Invalid(_OPENAI + "from datetime import datetime\ndef _context_prompt(profile):\n    return f'Now: {datetime.now()}. Profile: {profile}'\ndef turn(profile, history, q):\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': 'Be brief.'}, {'role': 'user', 'content': _context_prompt(profile)}, *history, {'role': 'user', 'content': q}])\n", line=5),
    Invalid(_OPENAI + "from datetime import datetime\ndef build_context_prompt(profile):\n    return [{'role': 'user', 'content': f'Now: {datetime.now()}. Profile: {profile}'}, {'role': 'assistant', 'content': 'Noted.'}]\ndef turn(profile, history, q):\n    return client.chat.completions.create(model='m', messages=[*build_context_prompt(profile), *history, {'role': 'user', 'content': q}])\n", line=5),
    # Onyx (#3/#4): a clock assigned before the prompt is built, or in a loop around the build, still reaches it.
    Invalid(_OPENAI + "from datetime import datetime\ndef process_with_prompt_cache(prefix, suffix):\n    meta = None\n    meta = {'created_at': datetime.now()}\n    prompt = prepare(prefix, suffix, meta=meta)\n    return prompt, meta\ndef ask(messages):\n    prompt, _ = process_with_prompt_cache(messages[:-1], messages[-1:])\n    return client.chat.completions.create(model='m', messages=prompt)\n", line=8),
    Invalid(_OPENAI + "from datetime import datetime\ndef process_with_prompt_cache(prefix, parts):\n    meta = None\n    for part in parts:\n        prompt = prepare(prefix, part, meta=meta)\n        meta = {'created_at': datetime.now()}\n    return prompt, meta\ndef ask(messages):\n    prompt, _ = process_with_prompt_cache(messages[:-1], messages[-1:])\n    return client.chat.completions.create(model='m', messages=prompt)\n", line=9),
    # Issue 11 (quivr): a rebinding clears the clock only where it runs on every path between the two: not one under
    # an `if`, not one the clock text is built from, not across a loop's next turn, not for a read in a nested
    # function (it runs later), not a binding on the rebinding's own line (`s = 'a'; s = f'{now}'`).
    Invalid(_OPENAI + "from datetime import datetime\ndef turn(history, q, plain):\n    system = f'Now: {datetime.now()}'\n    if plain:\n        system = 'You plan trips.'\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, *history])\n", line=8),
    Invalid(_OPENAI + "from datetime import datetime\ndef turn(history, q):\n    system = 'You plan trips.'\n    system = f'{system} Now: {datetime.now()}'\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, *history])\n", line=7),
    Invalid(_OPENAI + "from datetime import datetime\ndef run(history, inbox):\n    system = 'You plan trips.'\n    for q in inbox:\n        client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, *history])\n        system = f'Now: {datetime.now()}'\n", line=7),
    Invalid(_OPENAI + "from datetime import datetime\ndef turn(history):\n    system = 'You plan trips.'\n    def send():\n        return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, *history])\n    system = f'Now: {datetime.now()}'\n    return send()\n", line=7),
    Invalid(_OPENAI + "from datetime import datetime\ndef turn(history):\n    system = 'You plan trips.'\n    if history:\n        system = f'Now: {datetime.now()}'\n        return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, *history])\n", line=8),
    Invalid(_CLAUDE + "from datetime import datetime\ndef turn(history):\n    system = 'You help.'; system = f'You help. Now: {datetime.now()}'\n    return client.messages.create(model='m', max_tokens=9, system=system, messages=history)\n", line=6),
    # ... and an entry stored after it (`prompts['other'] = ...`) is no rebinding of the name.
    Invalid(_OPENAI + "from datetime import datetime\ndef build_prompts():\n    prompts = {}\n    prompts['main'] = f'Now: {datetime.now()}'\n    prompts['other'] = 'Plain.'\n    return prompts\ndef turn(history):\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': build_prompts()['main']}, *history])\n", line=6),
    # Issue 11 review: a `global` assigned after the read reaches the next call.
    Invalid(_CLAUDE + 'from datetime import datetime\nlast_seen = "never"\ndef ask(q):\n    global last_seen\n    system = f"Last visit: {last_seen}"\n    last_seen = datetime.now().isoformat()\n    return client.messages.create(model="m", max_tokens=9, system=system, messages=[q])\n', line=9),
]

# PC102 (PerRequestDataInSystemPrompt)
PC102_INVALID = [
    # Newcomer (stop 33): a user's name or a per-request parameter beside a clock is this rule's too (the clock is
    # PC101's; test_lint_sources checks that both are reported).
    Invalid(_CLAUDE + "from datetime import date\ndef reply(customer_name, history, q):\n    system = f'Help customers. Today is {date.today()}. The customer is {customer_name}.'\n    return client.messages.create(model='m', max_tokens=9, system=system, messages=history + [q])\n", line=6),
    Invalid(_CLAUDE + "from datetime import datetime\ndef reply(user, history, q):\n    system = f'Now {datetime.now()}.\\nThe customer is {user.name}.'\n    return client.messages.create(model='m', max_tokens=9, system=system, messages=history + [q])\n", line=6),
    # ... its bounds (AI-Scientist's exclusion): a call that passes the parameter values, the parameter rebound.
    Invalid('from openai import OpenAI\nSYSTEM = "You add citations. You have {total_rounds} rounds."\ndef get_prompt(client, draft, current_round, total_rounds):\n    return client.chat.completions.create(model="m", messages=[{"role": "system", "content": SYSTEM.format(total_rounds=total_rounds)}, {"role": "user", "content": f"Round {current_round}: {draft}"}])\ndef writeup(client, drafts, num_rounds=20):\n    for i, draft in enumerate(drafts):\n        get_prompt(client, draft, i, num_rounds)\nif __name__ == "__main__":\n    for n in (5, 10):\n        writeup(OpenAI(), ["a", "b"], num_rounds=n)\n', line=4),
    Invalid('from openai import OpenAI\nSYSTEM = "You add citations. You have {total_rounds} rounds."\ndef get_prompt(client, draft, current_round, total_rounds):\n    return client.chat.completions.create(model="m", messages=[{"role": "system", "content": SYSTEM.format(total_rounds=total_rounds)}, {"role": "user", "content": f"Round {current_round}: {draft}"}])\ndef writeup(client, drafts, num_rounds=20):\n    for i, draft in enumerate(drafts):\n        num_rounds -= 1\n        get_prompt(client, draft, i, num_rounds)\nif __name__ == "__main__":\n    writeup(OpenAI(), open("d").read().split("\\n\\n"))\n', line=4),
    # ... nor when the caller passing the default on is public (called from elsewhere) or its function is handed on
    # uncalled (`partial`: its caller is unseen) (review of stop 29).
    Invalid('from openai import OpenAI\nclient = OpenAI()\nSYSTEM = "You help {name}, a {plan} customer."\ndef _ask(q, name, plan):\n    return client.chat.completions.create(model="m", messages=[{"role": "system", "content": SYSTEM.format(name=name, plan=plan)}, {"role": "user", "content": q}])\ndef answer(questions, name="guest", plan="free"):\n    for q in questions:\n        _ask(q, name, plan)\n', line=5),
    Invalid('from functools import partial\nfrom openai import OpenAI\nclient = OpenAI()\nSYSTEM = "You help {name}."\ndef _ask(q, name):\n    return client.chat.completions.create(model="m", messages=[{"role": "system", "content": SYSTEM.format(name=name)}, {"role": "user", "content": q}])\ndef _answer(questions, name="guest"):\n    for q in questions:\n        _ask(q, name)\ndef handle(req):\n    run = partial(_answer, name=req.user.name)\n    return run(req.questions)\n', line=6),
    # ... nor a prompt-named parameter with text added when a call of the module gives it the user's data.
    Invalid(_CLAUDE + 'def ask(system_prompt, q):\n    return client.messages.create(model="m", max_tokens=9, system=system_prompt + "\\nBe brief.", messages=[{"role": "user", "content": q}])\ndef handle(user, q):\n    return ask(f"You help {user.name}.", q)\n', line=4),
    # ... while a query's per-request argument read through a database handle is reported.
    Invalid(_CLAUDE + "import psycopg\ndef ask(conn: psycopg.Connection, user_id, q):\n    row = conn.execute('SELECT bio FROM users WHERE id = %s', (user_id,)).fetchone()\n    return client.messages.create(model='m', max_tokens=9, system=row[0], messages=[q])\n", line=6),
    # Issue 11 (newcomer): per-request data dumped as unsorted JSON is two problems: PC304 reports the key order,
    # this rule the per-request data (sort_keys=True fixes only the first).
    Invalid(_OPENAI + "import json\ndef ask(q, settings):\n    cfg = {}\n    for k, v in settings.items():\n        cfg[k] = v\n    return client.chat.completions.create(model='m', messages=[\n        {'role': 'system', 'content': 'Config: ' + json.dumps(cfg)},\n        {'role': 'user', 'content': q}])\n", line=9),
    # Issue 11: the user's name in the system of a request dict sent as `**params`; a client returned by a call.
    Invalid(_CLAUDE + "def ask(user, history, q):\n    params = dict(model='m', max_tokens=512, messages=history + [q])\n    params['system'] = f'You talk to {user.name}.'\n    return client.messages.create(**params)\n", line=5),
    Invalid(_CLAUDE + "def get_client():\n    return client\ndef ask(user, q):\n    return get_client().messages.create(model='m', max_tokens=512, system=f'You talk to {user.name}.', messages=[q])\n", line=6),
    # Issue 11 review: the exclusions above are data flow, not names. A language detected from the newest
    # message of the `messages` parameter; a per-user number or plan choice however it is annotated; a
    # per-user `.instructions` read into another slot; a library module with a `def test_*` health check.
    Invalid(_OPENAI + "from langdetect import detect\ndef respond(messages):\n    lang = detect(messages[-1]['content'])\n    system = {'role': 'system', 'content': f'You are helpful. Always reply in {lang}.'}\n    return client.chat.completions.create(model='m', messages=[system, *messages])\n", line=6),
    Invalid(_CLAUDE + "def ask(q: str, customer_number: int):\n    return client.messages.create(model='m', system=f'You help customer #{customer_number}. Be polite.', messages=[{'role': 'user', 'content': q}])\n", line=4),
    Invalid(_CLAUDE + "from typing import Literal\ndef ask(q: str, history: list, tier: Literal['free', 'pro'], balance: float):\n    return client.messages.create(model='m', system=f'The user is on the {tier} plan with balance {balance:.2f} USD.', messages=history + [q])\n", line=5),
    Invalid(_CLAUDE + "BASE = 'You are the ACME assistant.'\ndef chat(profile, history, q):\n    system = BASE + \"\\n\\nThe user's own instructions:\\n\" + profile.instructions\n    return client.messages.create(model='m', system=system, messages=history + [q])\n", line=6),
    Invalid(_CLAUDE + "def answer(account_tier, q):\n    return client.messages.create(model='m', system=f'You help a {account_tier}-tier customer.', messages=[{'role': 'user', 'content': q}])\ndef test_connection():\n    return answer('free', 'ping')\n", line=4, path="support/answers.py"),
    # Issue 11 review: an object built for one request (`Tutor(...).ask(q)`): its `__init__` parameters are the
    # request's, not the object's.
    Invalid(_CLAUDE + "class Tutor:\n    def __init__(self, topic, student_notes):\n        self.system = f'You tutor {topic}. Notes: {student_notes}'\n    def ask(self, q):\n        return client.messages.create(model='m', system=self.system, messages=[{'role': 'user', 'content': q}])\ndef handle(req):\n    return Tutor(req.topic, req.notes).ask(req.q)\n", line=7),
    # ... also bound to a name first (the summary exclusion of PC202 review, s28).
    Invalid(_CLAUDE + "class Tutor:\n    def __init__(self, topic, student_notes):\n        self.system = f'You tutor {topic}. Notes: {student_notes}'\n    def ask(self, q):\n        return client.messages.create(model='m', system=self.system, messages=[{'role': 'user', 'content': q}])\ndef handle(req):\n    tutor = Tutor(req.topic, req.notes)\n    return tutor.ask(req.q)\n", line=7),
    # A builder that asks the model and builds text around the reply and the user's name is a prompt builder.
    Invalid(_OPENAI + "def build_system_prompt(user, q):\n    reply = client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': q}])\n    return f'You help {user.name}. Topic: {reply.choices[0].message.content}'\n", line=5),
    # The user's message content templated into the system message is no conversion (issue 11, browser-use).
    Invalid(_OPENAI + "def mimic(message, history):\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': f'Write in the style of: {message.content}'}, *history])\n", line=4),
    # Nor joined to text by `+` or through a one-argument call (issue 11 review): only the content whole is passed.
    Invalid(_OPENAI + "def mimic(message, history):\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': 'Write in the style of: ' + message.content}, *history])\n", line=4),
    Invalid(_OPENAI + "def ask(request, history):\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': 'Rules.\\n' + str(request.content)}, *history])\n", line=4),
    # A value read from the clock is not a source constant.
    Invalid(_CLAUDE + "from datetime import datetime\ndef _run(started, q):\n    return client.messages.create(model='m', system=f'Session started {started}.', messages=[q])\ndef ask(q):\n    return _run(datetime.now().isoformat(), q)\n", line=5),
    # A text parameter beside them is still the request's.
    Invalid(_CLAUDE + "def generate(topic: str, n_examples: int = 3):\n    return client.messages.create(model='m', system=f'Write {n_examples} cases about {topic}.', messages=[])\n", line=4),
    # A script's chat loop reads a new value per request: still reported.
    Invalid(_OPENAI + "def run(path):\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': f'Answer about the repo at {path}.'}, {'role': 'user', 'content': 'Who?'}])\ndef main():\n    while True:\n        path = input('Repository: ')\n        run(path)\nif __name__ == '__main__':\n    main()\n", line=4),
    # A helper called once per step with a different value is per call (openai-agents-python: true).
    Invalid(_CLAUDE + "STEPS = ['draft', 'review']\ndef _run(step, history):\n    return client.messages.create(model='m', system=f'You do the {step} step.', messages=history)\ndef go(history):\n    for step in STEPS:\n        _run(step, history)\n", line=5),
    # A public function of a library module: other modules may call it with per-request data.
    Invalid(_CLAUDE + "NAME = 'ACME'\ndef build(company, q):\n    return client.messages.create(model='m', system=f'You support {company}.', messages=[q])\nbuild(NAME, 'hi')\n", line=5),
    # Field-sensitive taint must not hide these (issue 11 review): an imported per-request value, and a
    # field the constructor does not name (a property may derive it from `user_id`).
    Invalid(_CLAUDE + "from flask_login import current_user\ndef ask(q):\n    return client.messages.create(model='m', system=f'Helping {current_user}', messages=[])\n", line=5),
    # Issue 11 (blind set 17): an imported object's identity attribute stands when the object is a framework's
    # request context or its own name says whose it is (an app's `current_user` proxy).
    Invalid(_CLAUDE + "from flask import g\nfrom app.auth import current_user\ndef ask(q):\n    return client.messages.create(model='m', system=f'Helping {g.user.email} for {current_user.org_id}', messages=[])\n", line=6),
    Invalid(_CLAUDE + "from .ctx import AgentContext\ndef ask(q, user_id):\n    ctx = AgentContext(user_id=user_id, model='m')\n    return client.messages.create(model='m', system=ctx.system_prompt, messages=[])\n", line=6),
    Invalid(_CLAUDE + "def ask(user, q):\n    return client.messages.create(model='m', system=f'Talking to {user.email}', messages=[])\n", line=4),
    Invalid(_OPENAI + "def ask(doc, q):\n    return client.chat.completions.create(model='m', messages=[\n        {'role': 'system', 'content': f'Answer from this document:\\n{doc}'}, {'role': 'user', 'content': q}])\n", line=5),
    Invalid(_CLAUDE + "BASE = 'Answer tax questions.'\ndef build(country):\n    return BASE + ' Country: ' + country\ndef ask(country, q):\n    return client.messages.create(model='m', system=build(country), messages=[])\n", line=7),
    # Issue 11 (Qwen-Agent Assistant): knowledge retrieved for the newest message added to the system message
    # of the request's copy (`+=` under a role test), or put in a new system message (line 12).
    Invalid("import copy\n" + _OPENAI + "class Assistant:\n    def run(self, messages):\n        messages = copy.deepcopy(messages)\n        knowledge = self.mem.retrieve(messages[-1]['content'])\n        knowledge_prompt = '# Knowledge\\n' + '\\n\\n'.join(knowledge)\n        if messages and messages[0]['role'] == 'system':\n            messages[0]['content'] += '\\n\\n' + knowledge_prompt\n        else:\n            messages = [{'role': 'system', 'content': knowledge_prompt}] + messages\n        return client.chat.completions.create(model='m', messages=messages)\n", line=10),
    Invalid("import copy\n" + _OPENAI + "class Assistant:\n    def run(self, messages):\n        messages = copy.deepcopy(messages)\n        knowledge = self.mem.retrieve(messages[-1]['content'])\n        knowledge_prompt = '# Knowledge\\n' + '\\n\\n'.join(knowledge)\n        if messages and messages[0]['role'] == 'system':\n            messages[0]['content'] += '\\n\\n' + knowledge_prompt\n        else:\n            messages = [{'role': 'system', 'content': knowledge_prompt}] + messages\n        return client.chat.completions.create(model='m', messages=messages)\n", line=12),
    # Issue 11 review: a bare `Session` annotation may be a chat session, not a database handle.
    Invalid(_CLAUDE + 'from google.adk.sessions import Session\ndef ask(session: Session, q):\n    return client.messages.create(model="m", max_tokens=9, system=f"Notes: {session.state}", messages=[q])\n', line=5),
    # ... and the boundary of the RunnableConfig case: a user-named key of it, another class named config, a key
    # read from the config itself (issue 11 review), a user-named field of the settings.
    Invalid("from langchain_core.messages import HumanMessage, SystemMessage\nfrom langchain_core.runnables import RunnableConfig\nfrom langchain.chat_models import init_chat_model\nmodel = init_chat_model('gpt-4.1')\nasync def supervisor(state, config: RunnableConfig):\n    user_id = config['configurable']['user_id']\n    system = f'You lead the research for {user_id}.'\n    return await model.ainvoke([SystemMessage(content=system), HumanMessage(content=state['brief'])])\n", line=8),
    Invalid('from langchain_core.messages import HumanMessage, SystemMessage\nfrom langchain.chat_models import init_chat_model\nmodel = init_chat_model(\'gpt-4.1\')\nasync def supervisor(state, config: "MyConfig"):\n    system = f\'You lead the research. Focus: {config.focus}\'\n    return await model.ainvoke([SystemMessage(content=system), HumanMessage(content=state[\'brief\'])])\n', line=6),
    Invalid('from langchain_core.messages import HumanMessage, SystemMessage\nfrom langchain_core.runnables import RunnableConfig\nfrom langchain.chat_models import init_chat_model\n\nmodel = init_chat_model("gpt-4.1")\n\n\nasync def respond(state, config: RunnableConfig):\n    prefs = config["configurable"]["preferences"]\n    system = f"You are a helpful assistant. The customer\'s preferences: {prefs}"\n    return await model.ainvoke([SystemMessage(content=system), HumanMessage(content=state["question"])])\n', line=11),
    Invalid("from langchain_core.messages import HumanMessage, SystemMessage\nfrom langchain_core.runnables import RunnableConfig\nfrom langchain.chat_models import init_chat_model\nfrom app.configuration import Configuration\nmodel = init_chat_model('gpt-4.1')\nasync def supervisor(state, config: RunnableConfig):\n    configurable = Configuration.from_runnable_config(config)\n    system = f'You lead the research. Stop after {configurable.max_iterations} rounds for {configurable.user_id}.'\n    return await model.ainvoke([SystemMessage(content=system), HumanMessage(content=state['brief'])])\n", line=9),
    Invalid('from langchain_core.messages import HumanMessage, SystemMessage\nfrom langchain.chat_models import init_chat_model\nfrom app.configuration import Configuration\n\nmodel = init_chat_model("gpt-4.1")\n\n\nasync def respond(state):\n    settings = Configuration.from_runnable_config({"configurable": {"profile": state["profile"]}})\n    system = f"You are a helpful assistant. Profile: {settings.profile}"\n    return await model.ainvoke([SystemMessage(content=system), HumanMessage(content=state["question"])])\n', line=11),
    # Second review (id/): a user's plan, level or organisation named with whose it is, read from an object; the
    # requesting user's Flask session; a context-local value (`ContextVar.get()`, set per request).
    Invalid(_OPENAI + "from .accounts import current_account\ndef ask(q):\n    account = current_account()\n    billing_plan, member_level, user_org = account.billing_plan, account.member_level, account.user_org\n    system = f'You support a {billing_plan} customer (level {member_level}) of {user_org}.'\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, {'role': 'user', 'content': q}])\n", line=8),
    Invalid(_OPENAI + "from flask import request, session\ndef chat():\n    level = session['level']\n    system = f'You are a tutor. Explain at the {level} level.'\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, {'role': 'user', 'content': request.json['q']}])\n", line=7),
    Invalid(_OPENAI + "from flask import session\ndef chat(q):\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': f\"Reply in {session.get('lang', 'en')}.\"}, {'role': 'user', 'content': q}])\n", line=5),
    Invalid(_OPENAI + "import contextvars\ncurrent_org = contextvars.ContextVar('current_org')\ndef ask(q):\n    organization = current_org.get()\n    system = f'You are the assistant of {organization}.'\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, {'role': 'user', 'content': q}])\n", line=8),
]

# Issue 11 (skyvern and deer-flow, blind sets 18 and 19): what a per-run id or a user's organisation id decides
# without being written into the prompt, and where a value lands. VALID cases of both rules; the INVALID
# boundaries are added to the lists above.
_SKY = _OPENAI + "from .flags import flags\nfrom .store import store\nRULES = open('rules.md').read()\n"
PC101_VALID_BLIND = [
    # A yes/no question of a feature flag, asked by run id, picks one of two fixed texts.
    _SKY + "async def ask(task, q):\n    enabled = await flags.is_feature_enabled_cached('HOVER', task.workflow_run_id)\n    system = RULES + f'\\nHovering allowed: {enabled}'\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, {'role': 'user', 'content': q}])\n",
    # An id given as is to a lookup is its key: the run's secrets are looked up, not the run id written.
    _SKY + "def ask(ctx, q):\n    secrets = store.get_secret_values_for_run(ctx.workflow_run_id if ctx else None, exclude_otp=True)\n    system = store.redact(RULES, secrets)\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, {'role': 'user', 'content': q}])\n",
    _SKY + "def ask(ctx, q):\n    config = store.get_tool_config(ctx.workflow_run_id)\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': RULES + config.notes}, {'role': 'user', 'content': q}])\n",
    # A prompt-named builder whose every call appends it after other text writes a tail; here it goes last.
    _SKY + "def _run_context_prompt(ctx):\n    return f'\\nrun: {ctx.workflow_run_id}'\ndef ask(ctx, q):\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': RULES}, {'role': 'user', 'content': q + _run_context_prompt(ctx)}])\n",
    # A LangGraph node's state update: `add_messages` appends the message to the conversation once (deer-flow).
    "from datetime import datetime\nfrom langchain_core.messages import SystemMessage\nclass DateReminder:\n    def before_agent(self, state, runtime):\n        return {'messages': [SystemMessage(content=f'<current_date>{datetime.now():%Y-%m-%d}</current_date>')]}\n",
    # A system message after the others that goes out last is the newest turn, whatever its role (mentat).
    _SKY + "from datetime import datetime\ndef revise(q, diff):\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': RULES}, {'role': 'user', 'content': q}, {'role': 'system', 'content': f'{datetime.now():%H:%M} Diff: {diff}'}])\n",
    # ... also with a message inserted ahead of it, and the reply appended after the request, for the record.
    _SKY + "from datetime import datetime\nfrom .log import Transcript\ndef revise(q, diff, code):\n    messages = [{'role': 'system', 'content': RULES}, {'role': 'user', 'content': q}, {'role': 'system', 'content': f'{datetime.now():%H:%M} Diff: {diff}'}]\n    messages.insert(1, {'role': 'system', 'content': code})\n    reply = client.chat.completions.create(model='m', messages=messages)\n    messages.append({'role': 'assistant', 'content': reply.choices[0].message.content})\n    Transcript(messages=messages).save()\n    return reply\n",
    # A function named for a prompt but annotated to return a handler builds no prompt.
    _SKY + "from .llm import Handler, make_handler\ndef resolve_prompt_handler(kind: str, run_id: str) -> Handler:\n    return make_handler(f'{kind}-{run_id}')\n",
    # A prompt-named step that runs an object built from its prompt returns the run's output, not a prompt
    # (skyvern's script `prompt()` block).
    _SKY + "from datetime import datetime\nfrom .blocks import TextPromptBlock\nasync def prompt(text, label=None):\n    rendered = f'Today is {datetime.now()}. {text}'\n    block = TextPromptBlock(prompt=rendered, label=label)\n    result = await block.execute_safe(label=label)\n    return result.output_parameter_value\n",
    # A system message appended to an object's history outside `__init__` is a turn of it (mentat's command
    # output), directly or through the object's own method that appends it.
    _SKY + "from datetime import datetime\nclass Chat:\n    def __init__(self):\n        self.messages = [{'role': 'system', 'content': RULES}]\n    def add_message(self, m):\n        self.messages.append(m)\n    def note_time(self):\n        self.add_message({'role': 'system', 'content': f'Now: {datetime.now()}'})\n    def tick(self):\n        self.messages.append({'role': 'system', 'content': f'Tick: {datetime.now()}'})\n    def ask(self):\n        return client.chat.completions.create(model='m', messages=self.messages)\n",
    # The length of a list that is only counted, not sent, or of a constant list is no per-turn value (second review).
    _SKY + "def ask(messages, q):\n    system = f'{RULES} The user has {len(messages)} unread messages in their inbox.'\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, {'role': 'user', 'content': q}])\n",
    _SKY + "EXAMPLES = [{'role': 'user', 'content': 'a'}, {'role': 'assistant', 'content': 'b'}]\ndef ask(q):\n    history = EXAMPLES\n    system = f'{RULES} Below are {len(history)} example messages.'\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, *history, {'role': 'user', 'content': q}])\n",
    # A system note after the spread history of a list sent as written, before the user's turn (second review).
    _SKY + "def ask(history, q):\n    tail = {'role': 'system', 'content': f'This is turn {len(history)}.'}\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': RULES}, *history, tail, {'role': 'user', 'content': q}])\n",
    # A count of anything but the conversation is opaque (`len(TOOLS)`), and a length only tested is no text.
    _SKY + "TOOLS = ['search', 'fetch']\ndef ask(history, q):\n    if len(history) > 40:\n        history = history[-20:]\n    system = RULES + f'\\nYou have {len(TOOLS)} tools.'\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, *history, {'role': 'user', 'content': q}])\n",
]
PC101_INVALID += [
    # ... but not one before the history, or one in a list extended later.
    Invalid(_SKY + "from datetime import datetime\ndef ask(history, q, examples):\n    note = {'role': 'system', 'content': f'Now: {datetime.now()}'}\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': RULES}, *examples, note, *history, {'role': 'user', 'content': q}])\n", line=8),
    Invalid(_SKY + "from datetime import datetime\ndef ask(history, q):\n    msgs = [{'role': 'system', 'content': RULES}, *history, {'role': 'system', 'content': f'Now: {datetime.now()}'}]\n    msgs.extend(history)\n    return client.chat.completions.create(model='m', messages=msgs)\n", line=8),
    # The conversation's length written into the system prompt grows every turn (review of stop 35's cases).
    Invalid(_SKY + "def ask(history, q):\n    system = RULES + f'\\nThis is turn {len(history) // 2 + 1}.'\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, *history, {'role': 'user', 'content': q}])\n", line=8),
    # ... but a step that returns text built around the run's output builds a prompt again.
    Invalid(_SKY + "from datetime import datetime\nfrom .blocks import TextPromptBlock\nasync def prompt(text, label=None):\n    block = TextPromptBlock(prompt=text, label=label)\n    result = await block.execute_safe(label=label)\n    return f'Today is {datetime.now()}. ' + RULES + result.output_parameter_value\n", line=11),
    # ... and one appended as the head of a new history: with the prompt in it, under `if not self.messages:`, after
    # `.clear()` or a call of a method that resets it (review of the mentat change).
    Invalid(_SKY + "from datetime import datetime\nclass Chat:\n    def start(self):\n        self.messages.append({'role': 'system', 'content': f'{RULES} Now: {datetime.now()}'})\n    def ask(self, q):\n        self.messages.append({'role': 'user', 'content': q})\n        return client.chat.completions.create(model='m', messages=self.messages)\n", line=9),
    Invalid(_SKY + "from datetime import datetime\nclass Chat:\n    def run(self, q):\n        if not self.history:\n            self.history.append({'role': 'system', 'content': f'Now: {datetime.now()}'})\n        self.history.append({'role': 'user', 'content': q})\n        return client.chat.completions.create(model='m', messages=self.history)\n", line=10),
    Invalid(_SKY + "from datetime import datetime\nclass Chat:\n    def reset(self):\n        self.messages.clear()\n        self.messages.append({'role': 'system', 'content': f'Now: {datetime.now()}'})\n    def ask(self, q):\n        self.messages.append({'role': 'user', 'content': q})\n        return client.chat.completions.create(model='m', messages=self.messages)\n", line=10),
    Invalid(_SKY + "from datetime import datetime\nclass Chat:\n    def _wipe(self):\n        self.messages[:] = []\n    def restart(self):\n        self._wipe()\n        self.messages.append({'role': 'system', 'content': f'Now: {datetime.now()}'})\n    def ask(self, q):\n        self.messages.append({'role': 'user', 'content': q})\n        return client.chat.completions.create(model='m', messages=self.messages)\n", line=12),
    # ... and the first message of a list that starts empty.
    Invalid(_SKY + "from datetime import datetime\nmessages = []\ndef main():\n    while True:\n        messages.append({'role': 'system', 'content': f'Time: {datetime.now():%H:%M}'})\n        messages.append({'role': 'user', 'content': input()})\n        client.chat.completions.create(model='m', messages=messages)\n", line=10),
    # ... and a note put into a function's own list, a reset in a `try` or in the turn loop, a method's first
    # parameter named otherwise, and a helper's text (second review of the mentat change).
    Invalid(_SKY + "from datetime import datetime\ndef ask(q):\n    messages = [{'role': 'system', 'content': 'Be nice.'}]\n    messages.append({'role': 'system', 'content': f'Now: {datetime.now()}'})\n    messages.append({'role': 'user', 'content': q})\n    return client.chat.completions.create(model='m', messages=messages)\n", line=9),
    Invalid(_SKY + "from datetime import datetime\nclass Chat:\n    def restart(self):\n        try:\n            self.messages.clear()\n        except AttributeError:\n            pass\n        self.messages.append({'role': 'system', 'content': f'Now: {datetime.now()}'})\n    def ask(self, q):\n        self.messages.append({'role': 'user', 'content': q})\n        return client.chat.completions.create(model='m', messages=self.messages)\n", line=13),
    Invalid(_SKY + "from datetime import datetime\nmessages = [{'role': 'system', 'content': 'x'}]\ndef main():\n    while True:\n        messages.append({'role': 'system', 'content': f'Now: {datetime.now()}'})\n        messages.append({'role': 'user', 'content': input()})\n        client.chat.completions.create(model='m', messages=messages)\n        messages.clear()\n", line=10),
    Invalid(_SKY + "from datetime import datetime\nclass Chat:\n    def restart(this):\n        this.hist.clear()\n        this.hist.append({'role': 'system', 'content': f'Now: {datetime.now()}'})\n    def ask(self, q):\n        self.hist.append({'role': 'user', 'content': q})\n        return client.chat.completions.create(model='m', messages=self.hist)\n", line=10),
    Invalid(_SKY + "from datetime import datetime\nfrom .rules import build_rules\nclass Chat:\n    def start(self):\n        self.messages.append({'role': 'system', 'content': build_rules(datetime.now())})\n    def ask(self, q):\n        self.messages.append({'role': 'user', 'content': q})\n        return client.chat.completions.create(model='m', messages=self.messages)\n", line=10),
    # ... and a timer written out, or handed to a helper named to make text, is text (review of the mentat change).
    Invalid(_SKY + "import time\nfrom humanize import naturaldelta\nSTART = time.monotonic()\ndef ask(q):\n    system = RULES + ' Uptime: ' + naturaldelta(time.monotonic() - START)\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, {'role': 'user', 'content': q}])\n", line=11),
    Invalid(_SKY + "import time\nfrom .prompts import build_system_prompt\ndef ask(q, started):\n    system = build_system_prompt(RULES, elapsed_s=time.monotonic() - started)\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, {'role': 'user', 'content': q}])\n", line=10),
    # ... and a LangChain template's `.invoke({...})` returns the prompt, not a reply.
    Invalid("from datetime import datetime\nfrom langchain_core.prompts import ChatPromptTemplate\nfrom langchain_openai import ChatOpenAI\nllm = ChatOpenAI()\nRULES = 'You help.'\ndef make_prompt(q):\n    tpl = ChatPromptTemplate(messages=[('system', RULES + ' Today: {now}'), ('human', '{q}')])\n    return tpl.invoke({'now': datetime.now(), 'q': q})\ndef ask(q):\n    return llm.invoke(make_prompt(q))\n", line=8),
    # ... but one appended in `__init__`, or where the method resets that history, is its head.
    Invalid(_SKY + "from datetime import datetime\nclass Chat:\n    def __init__(self):\n        self.messages = []\n        self.messages.append({'role': 'system', 'content': f'{RULES} Now: {datetime.now()}'})\n    def ask(self):\n        return client.chat.completions.create(model='m', messages=self.messages)\n", line=10),
    Invalid(_SKY + "from datetime import datetime\nclass Chat:\n    def add(self, m):\n        self.messages.append(m)\n    def reset(self):\n        self.messages = []\n        self.add({'role': 'system', 'content': f'{RULES} Now: {datetime.now()}'})\n    def ask(self):\n        return client.chat.completions.create(model='m', messages=self.messages)\n", line=12),
]
PC102_VALID_BLIND = [
    # Issue 11 (skyvern, blind set 18): a name ending in `prompt_type` names a prompt's type, not its text: the
    # function returns an LLM handler picked by feature-flag properties.
    _OPENAI + "def get_llm_handler_for_prompt_type(prompt_type, organization_id):\n    properties = {'organization_id': organization_id}\n    return HANDLERS[flags.value(prompt_type, properties=properties)]\n",
    # A feature-flag service's variant is one of those configured in it, whoever asks and whatever properties
    # of theirs it is given.
    _SKY + "from .flags import feature_flags\nasync def ask(task, q):\n    variant = await feature_flags.get_value_cached('STYLE', task.task_id, properties={'organization_id': task.organization_id})\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': f'{RULES}\\nStyle: {variant}'}, {'role': 'user', 'content': q}])\n",
    _SKY + "from .experiments import EXPERIMENTS\nasync def ask(user, q):\n    style = await EXPERIMENTS.get_variant('STYLE', user.user_id)\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': f'{RULES}\\nStyle: {style}'}, {'role': 'user', 'content': q}])\n",
    # A script's command-line value passed on through two functions: one value per process (mentat's evolve script).
    "import argparse\nfrom openai import OpenAI\nclient = OpenAI()\ndef variations(scores, population):\n    system = f'Write {population} new prompts.'\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, {'role': 'user', 'content': str(scores)}])\ndef evolve(population):\n    return variations({'a': 1}, population)\nif __name__ == '__main__':\n    parser = argparse.ArgumentParser()\n    parser.add_argument('--population', default=5)\n    args = parser.parse_args()\n    for _ in range(3):\n        evolve(args.population)\n",
    # A prompt-named builder whose every result the module hands to a feature-flag service or a log is never sent.
    _SKY + "import logging\nfrom .experiments import EXPERIMENTS\ndef _prompt_type_flag_properties(user):\n    return {'organization_id': user.organization_id, 'plan': user.plan}\ndef _prompt_preview(user):\n    return f'Prompt for {user.email}'\nasync def route(user, prompt_type):\n    properties = _prompt_type_flag_properties(user)\n    logging.info(_prompt_preview(user))\n    return await EXPERIMENTS.get_value_cached('LLM_BY_PROMPT_TYPE', prompt_type, properties=properties)\n",
    # A user's id beside another entity's id (a workflow's) scopes the lookup: what comes back is the entity's,
    # the same for every user allowed to see it.
    _SKY + "async def ask(org, workflow_id, q):\n    workflow = await store.get_workflow(workflow_id=workflow_id, organization_id=org.organization_id)\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': workflow.system_prompt}, {'role': 'user', 'content': q}])\n",
    # A getter of the prompts a holder passed in keeps on disk returns those prompts, put together with labels
    # (gpt-engineer's `preprompts_holder.get_preprompts()`, blind set 22).
    "from langchain.schema import HumanMessage, SystemMessage\ndef setup(pre):\n    return pre['roadmap'] + pre['improve'] + '\\nUseful to know:\\n' + pre['philosophy']\ndef improve(ai, prompt, preprompts_holder):\n    pre = preprompts_holder.get_preprompts()\n    messages = [SystemMessage(content=setup(pre))]\n    messages.append(HumanMessage(content=prompt.text))\n    return ai.llm.invoke(messages)\n",
    # The application's configuration handed down as a parameter is read at start-up: one value per deployment
    # (deer-flow's `app_config`, blind set 19).
    _SKY + "from .config import AppConfig\ndef build_system(app_config: AppConfig, q):\n    system = f'{RULES}\\nSandbox: {app_config.sandbox.image}'\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, {'role': 'user', 'content': q}])\n",
    # ... also in a command handler whose other branch starts the history again with its head, and in a script's
    # turn loop on a list that starts with the system prompt (newcomer, stop 35).
    _SKY + "from datetime import datetime\nclass Bot:\n    def __init__(self):\n        self.messages = [{'role': 'system', 'content': RULES}]\n    def command(self, line):\n        if line == '/time':\n            self.messages.append({'role': 'system', 'content': f'The time is {datetime.now()}.'})\n        elif line == '/reset':\n            self.messages = [{'role': 'system', 'content': RULES}]\n    def ask(self, q):\n        self.messages.append({'role': 'user', 'content': q})\n        return client.chat.completions.create(model='m', messages=self.messages)\n",
    _SKY + "from datetime import datetime\nmessages = [{'role': 'system', 'content': RULES}]\ndef main():\n    while True:\n        line = input()\n        if line == '/time':\n            messages.append({'role': 'system', 'content': f'Time: {datetime.now():%H:%M}'})\n            continue\n        messages.append({'role': 'user', 'content': line})\n        client.chat.completions.create(model='m', messages=messages)\n",
    # A token count handed to a helper sizes what it returns (a code context under a budget); it is not its text.
    _SKY + "from .code import code_context, llm\nasync def revise(file_edit, q):\n    messages = [{'role': 'system', 'content': RULES}, {'role': 'user', 'content': f'Diff: {file_edit.diff}'}]\n    code = await code_context.get_code_message(llm.count_prompt_tokens(messages) + 200)\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': RULES + code}, {'role': 'user', 'content': q}])\n",
    _SKY + "async def ask(user, q):\n    beta = await flags.has_access(user.user_id, 'beta')\n    system = f'{RULES}\\nBeta tools: {beta}'\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, {'role': 'user', 'content': q}])\n",
]
PC101_INVALID += [
    # ... but an id made into text is still the id: `slugify(run_id)`, a render-named helper, an f-string.
    Invalid(_SKY + "from slugify import slugify\ndef ask(ctx, q):\n    system = RULES + slugify(ctx.workflow_run_id)\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, {'role': 'user', 'content': q}])\n", line=9),
    Invalid(_SKY + "def ask(ctx, q):\n    system = RULES + store.render_header(ctx.workflow_run_id)\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, {'role': 'user', 'content': q}])\n", line=8),
    # ... and a tail builder whose sum goes into the system prompt, or has static text after it, is reported.
    Invalid(_SKY + "def _run_context_prompt(ctx):\n    return f'\\nrun: {ctx.workflow_run_id}'\ndef ask(ctx, q):\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': RULES + _run_context_prompt(ctx)}, {'role': 'user', 'content': q}])\n", line=7),
    Invalid(_SKY + "def _run_context_prompt(ctx):\n    return f'\\nrun: {ctx.workflow_run_id}'\ndef build_context(ctx):\n    return 'You help.' + _run_context_prompt(ctx) + RULES\n", line=7),
    # ... and a builder typed `typing.Optional[str]` or `Annotated[str, ...]` builds text; a builder whose result a
    # function stores in a global is sent where that global is read.
    Invalid(_SKY + "import typing\nfrom datetime import datetime\ndef system_prompt() -> typing.Optional[str]:\n    return f'Today is {datetime.now()}. ' + RULES\n", line=9),
    Invalid(_SKY + "from datetime import datetime\nSYSTEM = RULES\ndef _system_prompt():\n    return f'Now {datetime.now()}. ' + RULES\ndef refresh():\n    global SYSTEM\n    SYSTEM = _system_prompt()\ndef ask(q):\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': SYSTEM}, {'role': 'user', 'content': q}])\n", line=9),
    # ... and a `{"messages": [...]}` dict the module itself sends is no graph's state update.
    Invalid("from datetime import datetime\nfrom langchain_core.messages import HumanMessage, SystemMessage\nfrom langchain_openai import ChatOpenAI\nllm = ChatOpenAI()\ndef make_request(q):\n    return {'messages': [SystemMessage(content=f'Now: {datetime.now()}'), HumanMessage(content=q)]}\ndef ask(q):\n    return llm.invoke(make_request(q)['messages'])\n", line=6),
    # ... and what a lookup by a run's id returns, written as is or made into text (a str method, a slice, an
    # f-string later indexed), carries the id (review of the keyed lookups); so does the looked-up object's own id.
    Invalid(_SKY + "import uuid\nfrom .util import get_trace_url, short_label\ndef ask(q):\n    run_id = uuid.uuid4().hex\n    system = 'Trace ' + get_trace_url(run_id).lower() + '\\n' + RULES\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, {'role': 'user', 'content': q}])\n", line=11),
    Invalid(_SKY + "import uuid\nfrom .util import short_label\ndef ask(q):\n    run_id = uuid.uuid4().hex\n    lines = [f'Session {short_label(run_id)}']\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': lines[0] + RULES}, {'role': 'user', 'content': q}])\n", line=11),
    Invalid(_SKY + "def ask(ctx, q):\n    run = store.get_run(ctx.run_id)\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': f'Run {run.id}. ' + RULES}, {'role': 'user', 'content': q}])\n", line=8),
    # ... and a redacting call named to render keeps its arguments.
    Invalid(_SKY + "import uuid\nfrom .util import render_masked_header\ndef ask(q):\n    run_id = uuid.uuid4().hex\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': render_masked_header(RULES, run_id)}, {'role': 'user', 'content': q}])\n", line=10),
    # ... and an id written into a template with `.replace` is text.
    Invalid(_SKY + "import uuid\nTEMPLATE = 'Request {ID}. ' + RULES\ndef ask(q):\n    request_id = uuid.uuid4().hex\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': TEMPLATE.replace('{ID}', request_id)}, {'role': 'user', 'content': q}])\n", line=10),
    # ... and a builder called first is a head, reported at the builder; `-> str` builds text.
    Invalid(_SKY + "def _run_context_prompt(ctx) -> str:\n    return f'run: {ctx.workflow_run_id}\\n'\ndef system_for(ctx):\n    return _run_context_prompt(ctx) + RULES\n", line=7),
]
PC101_INVALID += [
    # ... but a system message ahead of the history is prefix, and so is the first of a list.
    Invalid(_SKY + "from datetime import datetime\ndef revise(history, q):\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': RULES}, {'role': 'system', 'content': f'Now: {datetime.now()}'}, *history, {'role': 'user', 'content': q}])\n", line=8),
    Invalid(_SKY + "from datetime import datetime\ndef revise():\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': f'Now: {datetime.now()}. ' + RULES}])\n", line=8),
    # ... but not when a message is added after it before the request, or inserted past it.
    Invalid(_SKY + "from datetime import datetime\ndef revise(q):\n    messages = [{'role': 'system', 'content': RULES}, {'role': 'system', 'content': f'Now: {datetime.now()}'}]\n    messages.append({'role': 'user', 'content': q})\n    return client.chat.completions.create(model='m', messages=messages)\n", line=8),
    Invalid(_SKY + "from datetime import datetime\ndef revise(q):\n    messages = [{'role': 'system', 'content': RULES}, {'role': 'system', 'content': f'Now: {datetime.now()}'}]\n    messages.insert(2, {'role': 'user', 'content': q})\n    return client.chat.completions.create(model='m', messages=messages)\n", line=8),
    # ... and the messages a graph run starts from are the head of each run's requests.
    Invalid("from datetime import datetime\nfrom langchain_core.messages import HumanMessage, SystemMessage\ndef ask(graph, q):\n    return graph.invoke({'messages': [SystemMessage(content=f'Now: {datetime.now()}'), HumanMessage(content=q)]})\n", line=4),
]
PC102_INVALID += [
    # ... but a user's field of it is the user's, and a parameter annotated as the request is no configuration.
    Invalid(_SKY + "def build_system(app_config, q):\n    system = f'{RULES}\\nOwner: {app_config.user_email}'\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, {'role': 'user', 'content': q}])\n", line=8),
    Invalid(_SKY + "from .api import ChatRequest\ndef build_system(model_settings: ChatRequest, q):\n    system = f'{RULES}\\nTone: {model_settings.tone}'\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, {'role': 'user', 'content': q}])\n", line=9),
    # ... but the prompts a request or a user carries are theirs.
    Invalid("from langchain.schema import HumanMessage, SystemMessage\ndef improve(ai, request):\n    messages = [SystemMessage(content='Rules.\\n' + request.get_prompts()['style']), HumanMessage(content='Go.')]\n    return ai.llm.invoke(messages)\n", line=3),
    Invalid("from langchain.schema import HumanMessage, SystemMessage\ndef improve(ai, request):\n    messages = [SystemMessage(content='Rules.\\n' + request.get_system_prompt()), HumanMessage(content='Go.')]\n    return ai.llm.invoke(messages)\n", line=3),
    # ... and a private function's configuration-named parameter is what its callers in view pass.
    Invalid(_SKY + "def _ask(app_config, q):\n    system = f'{RULES}\\nPlan: {app_config}'\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, {'role': 'user', 'content': q}])\ndef handler(request):\n    return _ask(request.user.profile, request.q)\n", line=8),
    # ... and a constant app id beside a user's id does not scope the lookup: the user's notes are looked up.
    Invalid(_SKY + "BOT_ID = 'support'\ndef ask(session, q):\n    notes = store.get_notes(bot_id=BOT_ID, user_id=session.user_id)\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': f'{RULES} Notes: {notes}'}, {'role': 'user', 'content': q}])\n", line=9),
    # ... but a per-user dict named `flags` is no flag service, and a default text given to one is the caller's.
    Invalid(_SKY + "def ask(session, q):\n    tone = session.get('flags', {}).get('tone')\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': f'{RULES} Tone: {tone}'}, {'role': 'user', 'content': q}])\n", line=8),
    Invalid(_SKY + "from .experiments import ld_client\ndef ask(user, q):\n    greeting = ld_client.variation('greeting', {'key': user.user_id}, f'Hello {user.email}')\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': greeting + RULES}, {'role': 'user', 'content': q}])\n", line=9),
    # ... but a lookup keyed by a value that is not an id (the user's name) may carry it.
    Invalid(_SKY + "def ask(user, q):\n    system = RULES + store.greeting_for(user.username)\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, {'role': 'user', 'content': q}])\n", line=8),
]
PC102_VALID_BLIND += [
    # Issue 11 (letta, blind set 28): `timezone.utc` of `from datetime import timezone` and an enum member named
    # `MessageRole.user` are code, not a user's data; a time zone given to a formatter renders a time.
    _SKY + "from datetime import datetime, timezone\nRELEASED = datetime(2026, 1, 5)\ndef ask(q):\n    stamp = RELEASED.replace(tzinfo=timezone.utc)\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': f'{RULES}\\nSince {stamp:%Y}'}, {'role': 'user', 'content': q}])\n",
    _SKY + "from .schemas import MessageRole\ndef ask(q):\n    roles = f'{MessageRole.user} and {MessageRole.assistant}'\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': f'{RULES}\\nRoles: {roles}'}, {'role': 'user', 'content': q}])\n",
    _SKY + "from .times import format_datetime\nEDITED = '2026-01-05T10:00:00'\ndef build_system_prompt(timezone):\n    return f'{RULES}\\nMemory edited: {format_datetime(EDITED, timezone)}'\n",
    # ... a system-message-named builder returning a user-role message object (the role an enum member) builds the
    # newest turn; and a message added to a stored agent or thread is its new input, not a prompt.
    _OPENAI + "from .schemas import Message, MessageRole, TextContent\ndef create_heartbeat_system_message(user_name):\n    msg = Message(role=MessageRole.user, content=[TextContent(text=f'Heartbeat for {user_name}')])\n    return msg\ndef step(history, user_name):\n    history.append(create_heartbeat_system_message(user_name))\n    return client.chat.completions.create(model='m', messages=[m.to_openai_dict() for m in history])\n",
    # Newcomer of stop 36: a zone a builder only renders a date with passes no text from its caller; an enum
    # member of this module (`user = "end user"` in its class body) is one value for everyone.
    _SKY + "from datetime import datetime\nfrom zoneinfo import ZoneInfo\ndef system_for(user_tz):\n    today = datetime.now(ZoneInfo(user_tz)).strftime('%Y-%m-%d')\n    return f'{RULES}\\nToday: {today}.'  # noqa: PC101\ndef chat(user_tz, history):\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system_for(user_tz)}, *history])\n",
    _SKY + "from enum import Enum\nclass Audience(str, Enum):\n    user = 'end user'\n    admin = 'administrator'\ndef ask(history):\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': f'{RULES}\\nYou talk to the {Audience.user}.'}, *history])\n",
    "from letta_client import Letta\nclient = Letta()\ndef notify(message, other_agent_id):\n    return client.agents.messages.create(agent_id=other_agent_id, messages=[{'role': 'system', 'content': f'From another agent: {message}'}])\n",
]
PC102_INVALID += [
    # ... but a time zone written as text is the user's, also through a call that renders no time (review).
    Invalid(_SKY + "def build_system_prompt(timezone):\n    return f'{RULES}\\nThe user lives in {timezone}.'\n", line=7),
    Invalid(_SKY + "def build_system_prompt(timezone):\n    return RULES + '\\nThe user lives in ' + str(timezone)\n", line=7),
    Invalid(_SKY + "TEMPLATE = RULES + ' The time zone is TZ.'\ndef ask(q, timezone):\n    system = TEMPLATE.replace('TZ', timezone)\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, {'role': 'user', 'content': q}])\n", line=9),
    # ... and an imported class's attribute this module writes per request is that request's (review).
    Invalid(_SKY + "from .context import Session\ndef ask(q, user):\n    Session.username = user.name\n    system = f'{RULES}\\nThe user is {Session.username}.'\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, {'role': 'user', 'content': q}])\n", line=10),
    # ... and a message name bound to a system-role message on some path, or whose role is not an enum member's,
    # is no user turn (review).
    Invalid(_OPENAI + "from .schemas import Message, MessageRole\ndef create_system_message(user_name, first):\n    msg = Message(role=MessageRole.user, content=f'Heartbeat for {user_name}')\n    if first:\n        msg = Message(role=MessageRole.system, content=f'You help {user_name}. Be brief.')\n    return msg\n", line=8),
    Invalid(_OPENAI + "from .schemas import Message, TextContent\ndef create_system_message(user_name, roles):\n    msg = Message(role=roles.user, content=[TextContent(text=f'You help {user_name}.')])\n    return msg\n", line=6),
    # ... and a user-role message object placed ahead of the history heads the request (second review).
    Invalid(_OPENAI + "from .schemas import Message, MessageRole\ndef create_system_message(user_name):\n    msg = Message(role=MessageRole.user, content=f'You are helping {user_name}. Follow the rules.')\n    return msg\ndef ask(user, history, q):\n    messages = [create_system_message(user.name), *history, Message(role=MessageRole.user, content=q)]\n    return client.chat.completions.create(model='m', messages=[m.to_openai_dict() for m in messages])\n", line=6),
    # ... and a time zone given to a text method beside a date, or imported under a CamelCase alias, is text.
    Invalid(_SKY + "PROMPT = RULES + ' The time zone is {timezone}. Released {release_date}.'\nRELEASE_DATE = '2025-01-01'\ndef build_system_prompt(timezone):\n    return PROMPT.format(timezone=timezone, release_date=RELEASE_DATE)\n", line=9),
    # ... and a builder's parameter it writes into text is the caller's data where the call passes it (khoj's
    # `get_instructions(environment_type, current_state)` with the current URL).
    Invalid(_SKY + "class Operator:\n    def get_instructions(self, state):\n        return f'{RULES}\\n* The current URL is {state.url}.'\n    def act(self, state, history):\n        system_prompt = self.get_instructions(state)\n        return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system_prompt}, *history])\n", line=10),
    Invalid(_SKY + "from flask_login import current_user as CurrentUser\ndef build_system_prompt():\n    return f'{RULES} The user is {CurrentUser.username}.'\n", line=8),
]
PC101_INVALID += [
    # Newcomer of stop 36: a message of any role ahead of the spread history (or concatenated before it) heads every
    # request of the conversation; so does a builder's message the module places there.
    Invalid(_SKY + "from datetime import datetime\ndef ask(history, q):\n    return client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': f'The time is {datetime.now().isoformat()}.'}, {'role': 'assistant', 'content': 'Understood.'}, *history, q])\n", line=8),
    Invalid(_SKY + "from datetime import datetime\ndef ask(history, q):\n    return client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': f'Session of {datetime.now()}'}] + history + [q])\n", line=8),
    Invalid(_SKY + "from datetime import datetime\ndef build_system_alert(kind):\n    return {'role': 'user', 'content': f'Alert ({kind}) at {datetime.now().isoformat()}'}\ndef ask(history, q):\n    return client.chat.completions.create(model='m', messages=[build_system_alert('login'), *history, q])\n", line=8),
]
PC102_VALID_BLIND += [
    # Review of stop 36: a message before a spread that ends the list is no head of a conversation: an agent's task
    # before the steps it appends, a prefill after the question, a one-shot request's attachments.
    _SKY + "def run(task, tools):\n    steps = []\n    for _ in range(10):\n        r = client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': RULES}, {'role': 'user', 'content': f'New task: {task}'}, *steps], tools=tools)\n        steps.append(r.choices[0].message)\n",
    _SKY + "PREFILL = [{'role': 'assistant', 'content': '{'}]\ndef extract(text):\n    return client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': f'Extract JSON from: {text}'}, *PREFILL])\n",
    _SKY + "def ask(question, image_messages):\n    return client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': f'Answer briefly: {question}'}, *image_messages])\n",
]
PC102_INVALID += [
    # Review of stop 36: a zone object written as text is the zone's name; a class attribute the module sets per
    # user is that user's; a user-role message object a builder returns, sent from where the module does not show,
    # may head the request.
    Invalid(_SKY + "from zoneinfo import ZoneInfo\ndef build_system_prompt(user_tz):\n    zone = ZoneInfo(user_tz)\n    return f'{RULES}\\nThe user lives in the {zone} time zone.'\n", line=9),
    Invalid(_SKY + "class State:\n    current_user = None\ndef login(user):\n    State.current_user = user.name\ndef chat(history):\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': f'{RULES} You help {State.current_user}.'}, *history])\n", line=11),
    Invalid(_OPENAI + "from .schemas import Message, MessageRole\ndef create_system_message(user_name):\n    msg = Message(role=MessageRole.user, content=f'You are helping {user_name}. Follow the rules.')\n    return msg\n", line=6),
]
PC101_VALID_BLIND += [
    # Review of stop 37 (a reverted attempt at R2R's agent): a system-role message is no prompt until something
    # sends it. Chat history stored in a database, a chat-room notice, a websocket message, a conversation export.
    "from datetime import datetime\nfrom .models import ChatMessage\ndef start_session(db, user):\n    db.add(ChatMessage(role='system', content=f'Session started {datetime.utcnow().isoformat()}', user_id=user.id))\n",
    "from datetime import datetime\nfrom .models import Message\nclass ChatRoom:\n    def join(self, user):\n        notice = Message(role='system', content=f'{user.name} joined at {datetime.now():%H:%M}')\n        self.history.append(notice)\n        self.broadcast(notice)\n",
    "from datetime import datetime\nasync def notify_reconnect(ws):\n    await ws.send_json({'role': 'system', 'content': f'Reconnected at {datetime.now():%H:%M}'})\n",
    "import json\nfrom datetime import datetime\ndef export_conversation(conv, path):\n    header = {'role': 'system', 'content': f'Exported {datetime.now().isoformat()} from {conv.title}'}\n    with open(path, 'w') as f:\n        json.dump([header, *conv.messages], f)\n",
]
PC102_VALID_BLIND += [
    # ... nor is a message object an LLM file stores for its chat room (a join notice), beside the request it sends.
    _OPENAI + "from .models import Message\nclass Room:\n    def join(self, user):\n        self.db.add(Message(room=self.id, role='system', content=f'{user.name} joined the room'))\n    def ask(self, question):\n        history = [{'role': m.role, 'content': m.content} for m in self.db.messages(self.id)]\n        return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': 'Be brief.'}, *history, {'role': 'user', 'content': question}])\n",
]
PC101_VALID_BLIND += [
    # Newcomer helper-100: a system message in a test's expected value is compared, never sent (the request the test
    # makes inside an assert still counts: PC101_INVALID).
    "import anthropic\nfrom datetime import datetime\nfrom langchain_core.messages import SystemMessage\nfrom bot import build_messages\n"
    "def test_build_messages():\n    assert build_messages('hi') == [\n        SystemMessage(content=f'Today is {datetime.now():%Y-%m-%d}'),\n"
    "        {'role': 'system', 'content': f'Now: {datetime.now()}'},\n    ]\n",
]
