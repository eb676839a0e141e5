"""Taint rules read requests sent as ``**params`` and calls on a client returned by a call (issue 11), and report
one problem once: at the prompt constant, not again where the request reads it."""

from __future__ import annotations

from lint_support import lint_text

_HEAD = 'import anthropic\nfrom datetime import datetime\nclient = anthropic.Anthropic()\nSYSTEM_PROMPT = f"Help. Started {datetime.today():%A, %B %d, %Y %H:%M}."\n'


def _pc101(code: str) -> list[tuple[int, str]]:
    return [(f.line, f.message.split(":")[0]) for f in lint_text(code) if f.code == "PC101"]


def test_constant_reported_once_through_a_params_dict():
    # claude-quickstarts browser-use-demo/loop.py: the dated constant is read by the system of a `**params` dict.
    code = _HEAD + 'def ask(messages, suffix):\n    system = {"type": "text", "text": f"{SYSTEM_PROMPT} {suffix}"}\n    params = {"model": "m", "max_tokens": 9, "messages": messages, "system": [system]}\n    return client.messages.create(**params)\n'
    assert _pc101(code) == [(4, "`datetime.datetime.today()` reaches SYSTEM_PROMPT once, when the module is imported")]


def test_date_read_at_import_is_not_reported():
    # Issue 11 (claude-quickstarts and open-interpreter loop.py, blind set 10): a date fixed per process is the same
    # prefix for every process started that day; the same constant read at minute precision is reported (above).
    daily = _HEAD.replace(" %H:%M}", "}")
    code = daily + 'def ask(messages):\n    return client.messages.create(model="m", max_tokens=9, messages=messages, system=SYSTEM_PROMPT)\n'
    assert _pc101(code) == []


def test_constant_reported_once_through_a_keyword():
    code = _HEAD + 'def ask(messages):\n    return client.messages.create(model="m", max_tokens=9, messages=messages, system=SYSTEM_PROMPT + " Be brief.")\n'
    assert _pc101(code) == [(4, "`datetime.datetime.today()` reaches SYSTEM_PROMPT once, when the module is imported")]


def test_clock_in_params_system_and_in_a_called_client():
    code = _HEAD.replace("SYSTEM_PROMPT", "RULES").replace('f"Help. Started {datetime.today():%A, %B %d, %Y %H:%M}."', '"Help."') + (
        'def get_client():\n    return client\n'
        'def ask(messages):\n    params = {"model": "m", "max_tokens": 9, "messages": messages}\n    params["system"] = f"{RULES} {datetime.now()}"\n    return client.messages.create(**params)\n'
        'def ask2(messages):\n    return get_client().messages.create(model="m", max_tokens=9, messages=messages, system=f"{RULES} {datetime.now()}")\n')
    assert [line for line, _ in _pc101(code)] == [9, 12]


_QUIVR = (  # quivr's rag/prompts.py, cut down: a private builder called once, at import, keeps its prompts in a registry
    "import datetime\nfrom langchain_core.prompts import ChatPromptTemplate, SystemMessagePromptTemplate\n"
    "def _define_prompts():\n    prompts = {}\n    today = datetime.datetime.now().strftime('%B %d, %Y')\n"
    "    rag = f'You are Quivr. Today is {today}.'\n"
    "    RAG_PROMPT = ChatPromptTemplate.from_messages([SystemMessagePromptTemplate.from_template(rag)])\n"
    "    prompts[Names.RAG] = RAG_PROMPT\n"
    "    chat = f'You chat. Today is {today}.'\n"
    "    prompts['chat'] = ChatPromptTemplate.from_messages([SystemMessagePromptTemplate.from_template(chat)])\n"
    "    return prompts\n"
    "_REGISTRY = _define_prompts()\n")


_QUIVR_MINUTES = _QUIVR.replace("%B %d, %Y", "%B %d, %Y %H:%M")


def test_clock_in_a_private_builder_called_at_import_is_read_once_and_reported_at_each_system_message():
    # Issue 11 (quivr): the clock is read when the module is imported, not on each request; it is reported at the two
    # system messages it reaches, not again where the builder stores one into what it returns (line 8). Read as a
    # date there (quivr's own code), it is the same prefix for every process started that day: not reported.
    at_import = "`datetime.datetime.now()` (line 5) reaches the LangChain system message once, when the module is imported"
    assert _pc101(_QUIVR_MINUTES) == [(7, at_import), (10, at_import)]
    assert _pc101(_QUIVR) == []


def test_clock_in_a_builder_called_per_request_is_daily():
    # The bounds: the same builder also called inside a function (per request), or public (another module may call
    # it per request), reads the clock on each call.
    per_request = _QUIVR + "def refresh():\n    return _define_prompts()\n"
    public = _QUIVR.replace("_define_prompts", "define_prompts")
    daily = "`datetime.datetime.now()` (line 5) reaches the LangChain system message as a date"
    for code in (per_request, public):
        assert _pc101(code) == [(7, daily), (10, daily)]


def test_builder_return_reported_when_its_sources_differ():
    # A second clock read only in what the builder returns is a problem of its own, reported at the return.
    code = _QUIVR_MINUTES.replace("    return prompts\n", "    prompts['at'] = f'Built {datetime.datetime.now()}'\n    return prompts\n")
    assert [line for line, _ in _pc101(code)] == [7, 10, 11]


def test_noqa_on_one_system_message_leaves_the_other():
    code = _QUIVR_MINUTES.replace("from_template(rag)])\n", "from_template(rag)])  # noqa: PC101\n")
    assert [line for line, _ in _pc101(code)] == [10]


def test_clock_read_per_turn_is_not_import_time():
    # Review (s26): called once at import but reading the clock on each turn of a loop, or called from a
    # module-level chat loop: every request, not once per process.
    looping = ("import asyncio\nfrom datetime import datetime\nimport anthropic\nclient = anthropic.AsyncAnthropic()\n"
               "async def _main():\n    history = []\n    while True:\n        history.append(input('> '))\n"
               "        await client.messages.create(model='m', max_tokens=9, system=f'Now: {datetime.now()}', messages=history)\n"
               "asyncio.run(_main())\n")
    repl = ("from datetime import datetime\nimport anthropic\nclient = anthropic.Anthropic()\n"
            "def _system():\n    return f'Be brief. Now: {datetime.now()}'\nhistory = []\n"
            "while True:\n    history.append(input('> '))\n"
            "    client.messages.create(model='m', max_tokens=9, system=_system(), messages=history)\n")
    assert _pc101(looping) == [(9, "`datetime.datetime.now()` reaches system=")]
    assert _pc101(repl) == [(5, "`datetime.datetime.now()` reaches _system()")]
    # Review (s26, round 2): a `for` over stdin or a comprehension calls it once per item; Streamlit reruns the
    # whole script on every interaction.
    batch = repl.replace("while True:\n    history.append(input('> '))", "for line in sys.stdin:\n    history.append(line)")
    batch = "import sys\n" + batch
    comprehension = ("from datetime import datetime\nimport anthropic\nclient = anthropic.Anthropic()\n"
                     "def _ask(q):\n    return client.messages.create(model='m', max_tokens=9, system=f'Now: {datetime.now()}', messages=[q])\n"
                     "ANSWERS = [_ask(q) for q in ('a', 'b')]\n")
    streamlit = "import streamlit as st\n" + repl.replace("while True:\n    history.append(input('> '))\n", "if True:\n    history.append(st.chat_input())\n")
    assert _pc101(batch) == [(6, "`datetime.datetime.now()` reaches _system()")]
    assert _pc101(comprehension) == [(5, "`datetime.datetime.now()` reaches system=")]
    assert _pc101(streamlit) == [(6, "`datetime.datetime.now()` reaches _system()")]


def test_constants_built_in_a_module_level_for_loop_are_import_time():
    # Review (s26): a `for` over data at module level runs at import (a `while` is a script's turn loop, above).
    code = ("from datetime import datetime\nimport anthropic\nclient = anthropic.Anthropic()\nPROMPTS = {}\n"
            "for role in ('support', 'billing'):\n    PROMPTS[role] = f'You are the {role} assistant. Started {datetime.now():%H:%M}.'\n"
            "def ask(role, history):\n    return client.messages.create(model='m', max_tokens=9, system=PROMPTS[role], messages=history)\n")
    assert _pc101(code) == [(8, "`datetime.datetime.now()` (line 6) reaches system= once, when the module is imported")]


_ONYX = ("from datetime import datetime\nimport anthropic\nclient = anthropic.Anthropic()\n"
         "def day_time(include_hour_min=False):\n    now = datetime.now()\n"
         "    return now.strftime('%B %d, %Y %H:%M') if include_hour_min else now.strftime('%B %d, %Y')\n"
         "def ask(q):\n    system = f'Be brief. Today is {day_time()}.'\n"
         "    return client.messages.create(model='m', max_tokens=9, system=system, messages=[{'role': 'user', 'content': q}])\n")


def test_a_conditional_arm_the_call_does_not_take_is_not_its_precision():
    # Issue 11 (blind set 12, onyx's get_current_llm_day_time): `x if include_hour_min else y`, the flag left at its
    # False default: only the date arm runs, so the prompt changes once a day (warning), not on every request.
    daily = "`datetime.datetime.now()` (line 5) reaches system= as a date"
    assert _pc101(_ONYX) == [(9, daily)]
    assert [f.severity.value for f in lint_text(_ONYX) if f.code == "PC101"] == ["warning"]
    # The bounds: the flag passed true, rebound in the function, or a test that is not a parameter takes the minute arm.
    every = "`datetime.datetime.now()` (line 5) reaches system= to the minute"  # "%B %d, %Y %H:%M"
    passed = _ONYX.replace("{day_time()}", "{day_time(include_hour_min=True)}")
    rebound = _ONYX.replace("    now = datetime.now()\n", "    now = datetime.now()\n    include_hour_min = True\n")
    not_a_param = _ONYX.replace("def day_time(include_hour_min=False):", "include_hour_min = False\ndef day_time():")
    assert _pc101(passed) == [(9, every)]
    assert _pc101(rebound) == [(10, every)]
    assert _pc101(not_a_param) == [(10, every.replace("line 5", "line 6"))]
    # The mirrored test, `y if not flag else x`: the same arm is skipped (issue 11 note of stop 29); passed true, or
    # `not` of a name that is no parameter, it is taken.
    mirrored = _ONYX.replace("now.strftime('%B %d, %Y %H:%M') if include_hour_min else now.strftime('%B %d, %Y')",
                             "now.strftime('%B %d, %Y') if not include_hour_min else now.strftime('%B %d, %Y %H:%M')")
    assert mirrored != _ONYX
    assert _pc101(mirrored) == [(9, daily)]
    assert _pc101(mirrored.replace("{day_time()}", "{day_time(include_hour_min=True)}")) == [(9, every)]
    module_flag = mirrored.replace("def day_time(include_hour_min=False):", "include_hour_min = False\ndef day_time():")
    assert _pc101(module_flag) == [(10, every.replace("line 5", "line 6"))]
    # A flag of another function with the same name does not switch this arm off: `header(include_hour_min=False)`
    # calls `day_time(include_hour_min=True)` (review of stop 29).
    other_function = _ONYX.replace("def ask(q):\n    system = f'Be brief. Today is {day_time()}.'",
                                   "def header(include_hour_min=False):\n    return f'Now {day_time(include_hour_min=True)}'\n"
                                   "def ask(q):\n    system = f'Be brief. Today is {header()}.'")
    assert other_function != _ONYX
    assert [f.severity.value for f in lint_text(other_function) if f.code == "PC101"] == ["error"]


_AUTOGEN = ("from mcp import ClientSession\n"
            "async def mcp_server_tools(params, session=None):\n"
            "    if session is None:\n"
            "        async with create_session(params) as temp:\n"
            "            tools = await temp.list_tools()\n"
            "    else:\n"
            "        tools = await session.list_tools()\n"
            "    if isinstance(params, StdioParams):\n"
            "        return [StdioAdapter(tool=t) for t in tools.tools]\n"
            "    elif isinstance(params, SseParams):\n"
            "        return [SseAdapter(tool=t) for t in tools.tools]\n"
            "    raise ValueError('unsupported')\n")


def test_one_unsorted_mcp_listing_is_one_report():
    # Blind set 13 (autogen's mcp_server_tools): the listing returned in several branches is sorted in one place.
    assert [(f.code, f.line) for f in lint_text(_AUTOGEN)] == [("PC305", 9)]
    # Two listings are two reports.
    two = ("import anthropic\nclient = anthropic.Anthropic()\nasync def ask(a, b, m):\n    first = await a.list_tools()\n"
           "    second = await b.list_tools()\n"
           "    client.messages.create(model='m', max_tokens=9, tools=[{'name': t.name} for t in first.tools], messages=m)\n"
           "    return client.messages.create(model='m', max_tokens=9, tools=[{'name': t.name} for t in second.tools], messages=m)\n")
    assert [(f.code, f.line) for f in lint_text(two) if f.code == "PC305"] == [("PC305", 6), ("PC305", 7)]


def test_merged_reports_point_at_the_one_whose_words_they_keep():
    # Review of stop 29: a daily date and a clock in two system messages of one line merge into one PC101 error; its
    # column is the clock's (the error's words), not the first report's.
    line = ('    return client.chat.completions.create(model="m", messages=[{"role": "system", "content": f"Day {date.today()}"}, '
            '{"role": "system", "content": f"Now {datetime.now()}"}, {"role": "user", "content": q}])\n')
    code = "from datetime import date, datetime\nfrom openai import OpenAI\nclient = OpenAI()\ndef ask(q):\n" + line
    [finding] = [f for f in lint_text(code) if f.code == "PC101"]
    assert (finding.line, finding.severity.value) == (5, "error")
    assert finding.column == line.index('datetime.now()') + 1


_SWARMS = ("from datetime import datetime\nimport anthropic\nclient = anthropic.Anthropic()\n"
           "def get_time():\n    return f\"Current time: {datetime.now():%H:%M}\"\n"
           "SYSTEM_PROMPT = f\"You run tasks.\\nTime: {get_time()}\"\n"
           "def ask(q):\n    return client.messages.create(model='m', max_tokens=9, system=SYSTEM_PROMPT, messages=[q])\n")


def test_a_helper_reading_the_clock_called_at_import_is_read_once():
    # Blind set 14 (swarms' AUTONOMOUS_AGENT_SYSTEM_PROMPT): a public helper reads the clock; the constant calls it at
    # import, so the prefix is fixed per process (a warning), not new on every request.
    assert _pc101(_SWARMS) == [(6, "`datetime.datetime.now()` (line 5) reaches SYSTEM_PROMPT once, when the module is imported")]
    assert [f.severity.value for f in lint_text(_SWARMS) if f.code == "PC101"] == ["warning"]
    # The bound: the helper called per request is the request's clock.
    per_call = _SWARMS.replace("system=SYSTEM_PROMPT", "system=f'You run tasks. {get_time()}'")
    assert [f.severity.value for f in lint_text(per_call) if f.code == "PC101"] == ["warning", "error"]


def test_random_choices_in_the_system_prompt_is_new_content_not_a_new_order():
    # Blind set 12 (onyx): a salt drawn with random.choices is PC101 (new content on every request), not PC303's
    # "reorders"; drawn few-shot messages ahead of the history are PC303, worded "draws" (review of stop 30).
    salt = ("import random, string\nimport anthropic\nclient = anthropic.Anthropic()\ndef run(q):\n"
            "    salt = ''.join(random.choices(string.ascii_lowercase, k=32))\n"
            "    return client.messages.create(model='m', max_tokens=9, system=salt + 'Help.', messages=[q])\n")
    assert [(f.code, f.line) for f in lint_text(salt)] == [("PC101", 6)]
    shots = ("import random\nimport anthropic\nclient = anthropic.Anthropic()\nEXAMPLES = [{'role': 'user', 'content': 'a'}]\n"
             "def run(history, q):\n    shots = random.choices(EXAMPLES, k=2)\n"
             "    return client.messages.create(model='m', max_tokens=9, system='Help.', messages=[*shots, *history, q])\n")
    [finding] = lint_text(shots)
    assert (finding.code, finding.line) == ("PC303", 6) and finding.message.startswith("random.choices() draws messages=")


_BOT = ("from datetime import datetime\nimport anthropic\nclient = anthropic.Anthropic()\n"
        "class Bot:\n    def __init__(self):\n        self.started = datetime.now().isoformat()\n"
        "    def ask(self, q):\n        return client.messages.create(model='m', max_tokens=9, system=f'Started {self.started}.',\n"
        "                                      messages=[{'role': 'user', 'content': q}])\n")


def test_a_clock_set_in_init_changes_per_object():
    # Newcomer (stop 30): `self.started = datetime.now()` in `__init__` changes once per object, not on every request.
    assert _pc101(_BOT) == [(8, "`datetime.datetime.now()` (line 6) reaches system= once per object (set in __init__)")]
    # A Bot built for one call (`Bot().ask(q)`) is per request again; so is a clock the method rebinds.
    per_call = _BOT + "def handle(q):\n    return Bot().ask(q)\n"
    rebound = _BOT.replace("    def ask(self, q):\n", "    def ask(self, q):\n        self.started = datetime.now()\n")
    assert _pc101(per_call) == [(8, "`datetime.datetime.now()` (line 6) reaches system=")]
    assert [line for line, _ in _pc101(rebound)] == [9]
    assert "once per object" not in _pc101(rebound)[0][1]
