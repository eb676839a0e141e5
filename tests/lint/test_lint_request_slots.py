"""Taint rules read requests sent as ``**params`` and calls on a client returned by a call (issue 11), and report
one problem once: at the prompt constant, not again where the request reads it."""

from __future__ import annotations

from lint_support import lint_text

_HEAD = 'import anthropic\nfrom datetime import datetime\nclient = anthropic.Anthropic()\nSYSTEM_PROMPT = f"Help. Today is {datetime.today():%A, %B %d, %Y}."\n'


def _pc101(code: str) -> list[tuple[int, str]]:
    return [(f.line, f.message.split(":")[0]) for f in lint_text(code) if f.code == "PC101"]


def test_constant_reported_once_through_a_params_dict():
    # claude-quickstarts browser-use-demo/loop.py: the dated constant is read by the system of a `**params` dict.
    code = _HEAD + 'def ask(messages, suffix):\n    system = {"type": "text", "text": f"{SYSTEM_PROMPT} {suffix}"}\n    params = {"model": "m", "max_tokens": 9, "messages": messages, "system": [system]}\n    return client.messages.create(**params)\n'
    assert _pc101(code) == [(4, "`datetime.datetime.today()` reaches SYSTEM_PROMPT once, when the module is imported")]


def test_constant_reported_once_through_a_keyword():
    code = _HEAD + 'def ask(messages):\n    return client.messages.create(model="m", max_tokens=9, messages=messages, system=SYSTEM_PROMPT + " Be brief.")\n'
    assert _pc101(code) == [(4, "`datetime.datetime.today()` reaches SYSTEM_PROMPT once, when the module is imported")]


def test_clock_in_params_system_and_in_a_called_client():
    code = _HEAD.replace("SYSTEM_PROMPT", "RULES").replace('f"Help. Today is {datetime.today():%A, %B %d, %Y}."', '"Help."') + (
        'def get_client():\n    return client\n'
        'def ask(messages):\n    params = {"model": "m", "max_tokens": 9, "messages": messages}\n    params["system"] = f"{RULES} {datetime.now()}"\n    return client.messages.create(**params)\n'
        'def ask2(messages):\n    return get_client().messages.create(model="m", max_tokens=9, messages=messages, system=f"{RULES} {datetime.now()}")\n')
    assert [line for line, _ in _pc101(code)] == [9, 12]
