"""Helpers shared by the lint tests (a uniquely named module, so it cannot clash with other test folders)."""

from __future__ import annotations

import json
from pathlib import Path

from promptcache.lint.config import LintConfig
from promptcache.lint.filelint import lint_bytes
from promptcache.lint.finding import Edit
from promptcache.lint.fixer import apply_edits
from promptcache.lint.registry import discover

REPO_ROOT = Path(__file__).resolve().parents[2]


def lint_text(code: str, rules=None, *, prompt_module: bool = False, config: LintConfig | None = None, path: str = "case.py"):
    """Lint one source text with ``rules`` (default: all) and return the findings."""
    chosen = [r for r in (rules or discover().values()) if r.code != "PC901"]
    return lint_bytes(code.encode("utf-8"), path, chosen, config or LintConfig(), prompt_module).findings


# -- applying a fix and running the fixed program against the real SDK clients --------------------------

ANTHROPIC_REPLY = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x", "stop_reason": "end_turn",
                   "stop_sequence": None, "content": [{"type": "text", "text": "ok"}],
                   "usage": {"input_tokens": 3, "output_tokens": 1}}
CHAT_REPLY = {"id": "c", "object": "chat.completion", "created": 1, "model": "gpt-x",
              "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}],
              "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}}


def apply(code: str, edits) -> str:
    """``code`` with a fix's edits applied (:func:`promptcache.lint.fixer.apply_edits`): :class:`Edit` objects or
    the ``edits`` of ``--output-format json`` (1-based positions, end column exclusive)."""
    return apply_edits(code, [
        Edit(e["location"]["row"], e["location"]["column"], e["end_location"]["row"], e["end_location"]["column"], e["content"])
        if isinstance(e, dict) else e
        for e in edits
    ])


def sent_tools(code: str, provider: str, *args) -> list[list[str]]:
    """Run ``run(*args)`` of ``code`` with a real SDK client (``client``) on a mock transport; the tool
    names of each request it sent, in order."""
    import anthropic
    import httpx2
    import openai

    bodies: list[dict] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        bodies.append(json.loads(request.content))
        return httpx2.Response(200, json=ANTHROPIC_REPLY if provider == "anthropic" else CHAT_REPLY)

    http = httpx2.Client(transport=httpx2.MockTransport(handler))
    if provider == "anthropic":
        client = anthropic.Anthropic(api_key="test", max_retries=0, http_client=http)
    else:
        client = openai.OpenAI(api_key="test", max_retries=0, http_client=http)
    namespace = {"__name__": "fixed_case"}
    exec(compile(code, "fixed_case.py", "exec", dont_inherit=True), namespace)
    namespace["client"] = client
    namespace["run"](*args)
    return [[t["function"]["name"] if "function" in t else t["name"] for t in body["tools"]] for body in bodies]


def sent_tool_names(code: str, provider: str, *args) -> list[str]:
    """The tool names of the one request ``run(*args)`` of ``code`` sends (see :func:`sent_tools`)."""
    (names,) = sent_tools(code, provider, *args)
    return names


# -- a prompt module and where an importer puts its prompt (the cross-module settlement tests) -----------

PROMPTS = '''\
from datetime import datetime

STATIC_PROMPT = "You extract facts from conversations."


def build_extraction_prompt(messages):
    return f"Today is {datetime.now().isoformat()}.\\nMessages:\\n{messages}"


class Templates:
    DATED_PROMPT = f"Started at {datetime.now().isoformat()}."
'''
# the importer sends the builder's prompt as the newest (user) turn, or as the system prompt
AS_USER = 'return client.chat.completions.create(model="m", messages=[{"role": "system", "content": STATIC_PROMPT}, {"role": "user", "content": prompt}])'
AS_SYSTEM = 'return client.chat.completions.create(model="m", messages=[{"role": "system", "content": prompt}, {"role": "user", "content": messages}])'
