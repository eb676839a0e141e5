"""The documented preamble of the docs' runnable code blocks: what a snippet leaves to the reader, offline.

``tests/test_docs_runnable.py`` runs every block marked ``<!-- runnable with docs/snippets/offline.py -->``
(in the README and under ``docs/``) after this file, in one fresh Python process per block, in an empty
temporary folder, with no API key and no network. It provides:

- the names the snippets use without defining them: ``RULES``, ``TOOLS``, ``HANDBOOK``, ``question``,
  ``name``, ``today``, a built ``prompt`` and a request ``body``;
- ``anthropic.Anthropic()`` and ``openai.OpenAI()`` that answer offline: the real SDK clients, whose HTTP
  transport is an ``httpx2.MockTransport`` handled by the examples' offline provider
  (``examples/offline_provider.py``: the usage the provider's prompt cache would report, from
  promptcache's simulator of its documented rules);
- the files the snippets read: ``trace.jsonl`` (the bundled support-chat demo trace), an empty
  ``traces/`` folder, and ``src/app.py`` (a small app with a timestamp in its system prompt).
"""

import json
import shutil
from importlib import resources
from pathlib import Path

import anthropic
import httpx2
import openai
from offline_provider import OfflineProvider  # examples/ is on the path of the docs test

from promptcache import PromptBuilder

RULES = "You are the support desk of Harborline Outfitters. Answer in two sentences, politely."
TOOLS = [{"name": "order_status", "description": "Look up an order by its number.",
          "input_schema": {"type": "object", "properties": {"order": {"type": "string"}}, "required": ["order"]}}]
HANDBOOK = "\n".join(f"Policy {n}: returns of unused items are free within {n + 29} days of delivery."
                     for n in range(1, 120))
question, name, today = "Where is my order 10442?", "Ada", "2026-12-02"
prompt = PromptBuilder().system(RULES).tools(TOOLS).user(question).build()

_ANSWERS = {"text": "Order 10442 ships tomorrow; you will get a tracking link by e-mail."}
_PROVIDERS = {"anthropic": OfflineProvider("anthropic.messages", lambda body: _ANSWERS),
              "openai": OfflineProvider("openai.chat", lambda body: _ANSWERS)}


class _OfflineAnthropic(anthropic.Anthropic):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("http_client", httpx2.Client(transport=httpx2.MockTransport(_PROVIDERS["anthropic"].handle)))
        super().__init__(*args, **{**kwargs, "api_key": "offline", "max_retries": 0})  # copy() passes its own


class _OfflineOpenAI(openai.OpenAI):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("http_client", httpx2.Client(transport=httpx2.MockTransport(_PROVIDERS["openai"].handle)))
        super().__init__(*args, **{**kwargs, "api_key": "offline", "max_retries": 0})  # copy() passes its own


anthropic.Anthropic, openai.OpenAI = _OfflineAnthropic, _OfflineOpenAI

with resources.as_file(resources.files("promptcache") / "data" / "traces" / "demo_good_support_chat.jsonl") as _t:
    shutil.copyfile(_t, "trace.jsonl")
body = json.loads(Path("trace.jsonl").read_text(encoding="utf-8").splitlines()[0])["body"]
Path("traces").mkdir(exist_ok=True)
Path("src").mkdir(exist_ok=True)
Path("src/app.py").write_text(
    "import datetime\n\nimport anthropic\n\nclient = anthropic.Anthropic()\n\n\n"
    "def answer(question):\n"
    "    system = f\"You are a support agent. Now: {datetime.datetime.now().isoformat()}\"\n"
    "    return client.messages.create(model=\"claude-sonnet-4-6\", max_tokens=256, system=system,\n"
    "                                  messages=[{\"role\": \"user\", \"content\": question}])\n", encoding="utf-8")
