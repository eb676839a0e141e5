"""One problem, one report, chosen among the enabled rules only (issue 11): a rule that defers a fact to another
rule reports it itself when that rule is not enabled, and two problems on one value are two findings."""

from __future__ import annotations

from lint_support import lint_text

from promptcache.lint.registry import discover

# `cfg` built from the per-request parameter `settings`, dumped without sort_keys=True into the system message.
UNSORTED_PER_REQUEST = (
    "import json\nfrom openai import OpenAI\nclient = OpenAI()\n"
    "def ask(q, settings):\n    cfg = {}\n    for k, v in settings.items():\n        cfg[k] = v\n"
    "    return client.chat.completions.create(model='m', messages=[\n"
    "        {'role': 'system', 'content': 'Config: ' + json.dumps(cfg)},\n        {'role': 'user', 'content': q}])\n"
)
# A timestamp and the user's name in one prompt: two values, two problems (newcomer, stop 33): fixing the clock
# (PC101) leaves one prompt per user (PC102), so both are reported, and ignoring one leaves the other.
VOLATILE_PER_REQUEST = (
    "import anthropic\nfrom datetime import datetime\nclient = anthropic.Anthropic()\n"
    "def build(user):\n    return 'Now: ' + str(datetime.now()) + user.name\n"
    "def ask(user, q):\n    return client.messages.create(model='m', max_tokens=9, system=build(user), messages=[q])\n"
)


def _codes(code: str, ignore: tuple[str, ...] = ()) -> list[tuple[str, int]]:
    rules = [r for r in discover().values() if r.code not in ignore]
    return sorted((f.code, f.line) for f in lint_text(code, rules))


def test_unsorted_json_of_per_request_data_is_two_problems():
    # sort_keys=True fixes the key order, not the per-request data: both are reported.
    assert _codes(UNSORTED_PER_REQUEST) == [("PC102", 9), ("PC304", 9)]


def test_an_ignored_rule_hides_nothing():
    assert _codes(UNSORTED_PER_REQUEST, ignore=("PC304",)) == [("PC102", 9)]
    assert _codes(VOLATILE_PER_REQUEST) == [("PC101", 7), ("PC102", 7)]
    assert _codes(VOLATILE_PER_REQUEST, ignore=("PC101",)) == [("PC102", 7)]
    assert _codes(VOLATILE_PER_REQUEST, ignore=("PC102",)) == [("PC101", 7)]


def test_a_file_level_noqa_counts_as_not_enabled():
    assert _codes("# promptcache: noqa: PC101\n" + VOLATILE_PER_REQUEST) == [("PC102", 8)]


# A user's id handed down a chain of private prompt builders, then sent as the system message.
BUILDER_CHAIN = (
    "from openai import OpenAI\nclient = OpenAI()\n"
    "def _skills_prompt(user_id):\n    return 'Skills: ' + ', '.join(load_skills(user_id))\n"
    "def _system_prompt(user_id):\n    section = _skills_prompt(user_id=user_id)\n"
    "    return f'You are helpful.\\n{section}'\n"
    "def answer(user_id, q):\n    system = _system_prompt(user_id)\n"
    "    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, q])\n"
)


def test_a_chain_of_builders_is_reported_where_the_request_reads_it():
    # once, where the id enters the request; not again at each builder's return
    assert _codes(BUILDER_CHAIN) == [("PC102", 9)]


def test_a_builder_called_with_what_its_caller_does_not_report_keeps_its_report():
    # `load_user()` is no clock, id or parameter the caller's rules name: the builder's return is the one report
    code = BUILDER_CHAIN.replace("system = _system_prompt(user_id)", "system = _system_prompt(load_user())")
    assert _codes(code) == [("PC102", 6)]
    # the caller's request parameter is named there, at the request: one report
    code = BUILDER_CHAIN.replace("system = _system_prompt(user_id)", "system = _system_prompt(lookup(q))")
    assert _codes(code) == [("PC102", 9)]


def test_a_builder_other_modules_may_call_keeps_its_report():
    # review helper-98: a public builder may be imported and called with what this module does not see
    code = BUILDER_CHAIN.replace("_skills_prompt", "skills_prompt").replace("_system_prompt", "system_prompt")
    assert _codes(code) == [("PC102", 4), ("PC102", 6), ("PC102", 9)]


def test_one_clock_read_by_name_in_two_returns_is_one_report():
    # review helper-93: `now = datetime.now()`, then `{now}` in each return; two clocks are two places to fix
    code = ("import anthropic\nfrom datetime import datetime\n"
            "def build_system_prompt(short):\n    now = datetime.now()\n"
            "    if short:\n        return f'Be brief. Now: {now}'\n    return f'Be thorough. Now: {now}'\n"
            "def build_other_prompt(short):\n"
            "    if short:\n        return f'Be brief. Now: {datetime.now()}'\n    return f'Now: {datetime.now()}'\n")
    assert _codes(code) == [("PC101", 6), ("PC101", 10), ("PC101", 11)]


def test_a_shuffle_beside_per_request_data_is_two_problems():
    # newcomer helper-95: `SYSTEM + "\n".join(shuffled) + json.dumps(profile)` gave PC303 only, and nothing with
    # --ignore PC303: the prompt's text sits in the shuffled operand, so `profile` was not read as templated
    code = ("import json, random\nimport anthropic\nclient = anthropic.Anthropic()\nSYSTEM = 'You are helpful.'\n"
            "EXAMPLES = ['ex1', 'ex2']\n"
            "def ask(history, profile: dict):\n    ex = EXAMPLES[:]\n    random.shuffle(ex)\n"
            "    return client.messages.create(model='m', max_tokens=9, system=SYSTEM + '\\n'.join(ex) + json.dumps(profile),\n"
            "                                  messages=history)\n")
    assert _codes(code) == [("PC102", 9), ("PC303", 8)]
    assert _codes(code, ignore=("PC303",)) == [("PC102", 9)]


# newcomer helper-97: a summary side-call over the history, then the main call with tools over the summary
SUMMARY_THEN_TOOLS = (
    "import anthropic\nclient = anthropic.Anthropic()\n"
    "TOOLS = [{'name': n, 'description': n, 'input_schema': {'type': 'object'}}\n"
    "         for n in sorted({'search', 'refund'})]\n"
    "class Bot:\n    def __init__(self):\n        self.history = []\n"
    "    def ask(self, question):\n        self.history.append({'role': 'user', 'content': question})\n"
    "        s = client.messages.create(model='m', max_tokens=9, system='Summarise this chat.', messages=self.history)\n"
    "        self.history = [{'role': 'user', 'content': s.content[0].text}]\n"
    "        return client.messages.create(model='m', max_tokens=9, system='Help.', messages=self.history, tools=TOOLS)\n"
)


def test_a_summary_side_call_is_no_call_of_the_conversation_for_option_churn():
    # its prompt is its own, so its cache is too: no PC306 beside the PC201 that reports the summary
    assert _codes(SUMMARY_THEN_TOOLS) == [("PC201", 10)]


def test_option_churn_quotes_code_on_one_line():
    from lint_rules.tool_set import PerCallToolSet

    code = SUMMARY_THEN_TOOLS.replace("'Summarise this chat.'", "'Answer.'").replace("tools=TOOLS", "tools=[\n            t for t in TOOLS if t['name'] != question]")
    [finding] = lint_text(code, [PerCallToolSet])
    assert "\n" not in finding.message and "tools= is `[ t for t in TOOLS if t['name'] != question]` here" in finding.message


def test_a_langchain_runs_other_options_keep_their_keyword():
    # review helper-96: 2cc1867 labelled every option of llm.invoke() `invoke()`, a builder's label, so the tools slot
    # of a function the module calls was dropped: PC104 and PC301 lost
    code = ("import time\nfrom langchain_openai import ChatOpenAI\nllm = ChatOpenAI(model='gpt-4o')\nREGISTRY = {'a', 'b'}\n"
            "def answer(messages):\n    tools = [{'name': n, 'description': f'at {time.time()}'} for n in set(REGISTRY)]\n"
            "    return llm.invoke(messages, tools=tools)\n"
            "def main():\n    answer([('system', 'Be brief.'), ('human', 'hi')])\n")
    assert _codes(code) == [("PC104", 7), ("PC301", 7)]
