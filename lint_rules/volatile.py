"""PC1xx: values that change per request or per user inside the cached prefix.

Provider prompt caches (Anthropic, OpenAI, Gemini, DeepSeek) only hit on an
exact token prefix; anything that differs between calls in the system prompt,
the tools or before a cache breakpoint makes every request a miss.
"""

from __future__ import annotations

import dataclasses

from promptcache.lint import sources as S
from promptcache.lint.finding import Severity
from promptcache.lint.prompt_definitions import definition_symbols
from promptcache.lint.one_shot import PER_REQUEST_CLAIM, one_shot_weight
from promptcache.lint.rule import FlowRule, Valid
from promptcache.lint.template_inputs import IMPORTERS

from lint_rules.volatile_cases import (_CC, _CLAUDE, _OPENAI, PC101_INVALID, PC101_VALID_BLIND, PC102_INVALID,
                                      PC102_VALID_BLIND)
from lint_rules.own_message_cases import PC101_OWN_INVALID, PC101_OWN_VALID, PC102_OWN_VALID
from lint_rules.volatile_valid_cases import PC101_VALID



def _at_import(issue) -> bool:
    """Every volatile source of ``issue`` is read once, when its module is imported (fixed per process)."""
    return bool(issue.sources) and all(s.import_time for s in issue.sources if s.kind == S.VOLATILE)


def _per_object(issue) -> bool:
    """Every volatile source of ``issue`` is read when an object is built (``self.x = now()`` in ``__init__``)."""
    return bool(issue.sources) and all(s.per_object for s in issue.sources if s.kind == S.VOLATILE)


def _period(issue) -> str:
    """How often the fastest volatile source of ``issue`` changes, when every one is a formatted clock: ``"day"``,
    ``"hour"`` or ``"minute"`` (:mod:`promptcache.lint.clock_periods`); ``""``: per request."""
    periods = {s.period for s in issue.sources if s.kind == S.VOLATILE}
    return "" if not periods or "" in periods else next((p for p in ("minute", "hour", "day") if p in periods), "")


class VolatileInSystemPrompt(FlowRule):
    """
    ## What it does
    Finds a volatile value (the clock, a uuid, random numbers, a process id, a
    request/session/trace id, ``f"Turn {len(history) + 1}"``) that reaches the
    system prompt: ``system=``, ``instructions=``, a system or developer
    message, a LangChain system message, a message of any role ahead of the
    history (``[note, *history, q]``), or a prompt-named module constant.

    ## Why is this bad?
    Prompt caches match the exact prefix of the request, and the system prompt
    is near the start of it. A timestamp there makes every request's prefix
    new, so nothing after it is ever read from cache: every call pays full
    input price and full prefill latency.

    ## Example
    ```python
    client.messages.create(
        model="claude-sonnet-4-5",
        system=f"{RULES}\\nCurrent time: {datetime.now():%H:%M}",
        messages=[{"role": "user", "content": question}],
    )
    ```

    A clock read only as a date (``date.today()``, ``strftime("%Y-%m-%d")``,
    ``{now:%Y-%m-%d}``) changes the prefix once a day instead: the first
    request of each day writes a new cache entry and the rest of the day
    reads it. That finding says "as a date ... once a day" and is a
    **warning**, not an error; read to the hour (``strftime("%Y-%m-%d %H:00")``)
    it says "once an hour", also a warning, and to the minute (``%H:%M``)
    "every minute", an error. The same holds for a field kept (``now.hour``,
    ``now.date()``), ``now.replace(minute=0, second=0, microsecond=0)``,
    ``now.isoformat(timespec="minutes")``, ``"{:%H:%M}".format(now)`` and
    ``int(time.time() // 3600)``. A clock kept to the month or the year
    (``%B %Y``, ``now.year``) is not reported: a prefix that changes a dozen
    times a year costs nothing a cache would notice. A warning too is a clock read once, when the module is
    imported (a module constant ``SYSTEM = f"Started {datetime.now()}"``, or a
    private builder the module calls only there, ``_PROMPTS = _define_prompts()``):
    the prefix is fixed per process, and each process started at another time
    sends another one. A date read there is not reported (but in a
    ``PromptBuilder`` layer, which refuses it at run time): every process
    started that day sends the same prefix, as with any per-deployment setting.
    A clock kept on an object (``self.started = datetime.now()`` in
    ``__init__`` only) changes once per object: the finding says "once per
    object" and stays an error, as objects are often made per request or per
    session.

    ## Use instead
    ```python
    client.messages.create(
        model="claude-sonnet-4-5",
        system=RULES,
        messages=[{"role": "user", "content": f"Current time: {datetime.now():%H:%M}\\n\\n{question}"}],
    )
    ```

    ## When it does not fire
    The value goes into the final user message, a tracing header, a log line
    or a retry delay, or into an Anthropic system block after the request's last
    ``cache_control`` breakpoint (only when nothing can mark a later place: no
    ``cache_control=`` on the request, which is automatic caching, no marker
    elsewhere in the module, and no history built by a helper it cannot see
    into); an id, timestamp or record-time keyword (``created_at=``,
    ``creation_utc=``) of a class or a context manager whose
    object is not rendered whole (``RunContext(run_id=...)`` handed on; but
    ``asdict(ctx)`` or ``SystemPrompt(...).render()`` may render it, and
    ``doc.updated_at`` reads it back); a tracing id (``trace_id=``, ``run_id=``,
    ``request_id=``) given to a call whose body is not seen and whose name
    says it records (emit, log, track, record, publish, trace, span, event,
    metric, audit, telemetry, notify: ``emitter.emit_message_event(trace_id=...)``):
    what the callee records, not text it returns (``make_header(request_id=...)``,
    ``dict(request_id=...)`` may become text and are reported); a clock written to another entry of a
    state dict than the one the prompt reads (``state["last_seen"] = now()`` beside ``state["rules"]``);
    ``time.strftime`` is given an explicit time; the module
    has no LLM call and no prompt-named constant that an LLM file imports; the value follows a per-request
    input in a prompt builder's template (``f'Info: "{context}" ... {date.today()}'``, no call in the module
    passing it a fixed, per-user or per-session value such as ``self.name``: the text already differs per
    request there; for a prompt module's builder that its own module never calls, the importers' calls count:
    ``build_system_prompt("a pirate")`` in another file is a fixed value); a builder whose every call is the ``content`` of the last user message sent, or that
    returns a conversation sent last (its system messages are checked as such).
    Nor where an id decides without being written: a run's id given as is to an unseen call that makes no text is a
    lookup key, not in the fields or methods of what it returns (``get_run_context(run_id).placeholders(p)``; the
    result written as is, ``slugify(run_id)`` or ``.replace("{ID}", run_id)`` are reported); the bool of a call named
    as a question (``is_feature_enabled(flag, run_id)``, ``has_*``, ``should_*``) or a feature-flag service's variant
    (PostHog, LaunchDarkly, an ``EXPERIMENTATION_PROVIDER``): one of a fixed set of texts. A prompt-named builder
    whose every call in the module is added after other text (``ctx_text + _run_context_prompt(ctx)``) is judged
    where that text goes; one annotated to return neither text nor a container of it (``-> Handler``) builds no
    prompt. A system message after others in a list that goes out last is the newest turn, so is one after the
    spread history (``[system, *history, note, user]``), and one a LangGraph node returns as a state update
    (``return {"messages": [SystemMessage(...)]}``) is appended once.
    """

    code = "PC101"
    name = "volatile-in-system-prompt"
    severity = Severity.ERROR
    message = (
        "{sources} {reach} {slot}: the prompt prefix changes on every request, so provider caches "
        "(exact-prefix matching) never hit; move the {value} into the final user message"
    )

    daily_message = (
        "{sources} {reach} {slot} as a date: the prompt prefix changes once a day, so the first request of each "
        "day writes a new cache entry instead of reading the old one; move the {value} into the final user message"
    )

    hour_message = (
        "{sources} {reach} {slot} to the hour: the prompt prefix changes once an hour, so the first request of each "
        "hour writes a new cache entry instead of reading the old one; move the {value} into the final user message"
    )

    minute_message = (
        "{sources} {reach} {slot} to the minute: the prompt prefix changes every minute, so only requests sent in "
        "the same minute share a cache entry; move the {value} into the final user message"
    )

    import_message = (
        "{sources} {reach} {slot} once, when the module is imported: the prefix is fixed for the life of the "
        "process (and the value goes stale in a long-running one), and each process started at another time sends "
        "another prefix; move the {value} into the final user message"
    )

    object_message = (
        "{sources} {reach} {slot} once per object (set in __init__): each new object sends another prefix, so "
        "objects made per request or per session never share a cache entry; move the {value} into the final user "
        "message"
    )

    def findings(self, flow) -> list:
        """A volatile source on a value that reaches the system prompt (a user identity beside it is PC102's)."""
        if flow.area != "system" or not flow.has(S.VOLATILE) or flow.after_last_breakpoint or flow.behind_template_input is True:
            return []
        clocks = flow.of(S.VOLATILE)
        if flow.slot.sanitiser != "sdk" and all(s.import_time and s.daily for s in clocks):
            return []  # a date fixed per process: every process started that day sends the same prefix (issue 11)
        issue = self.issue(flow, detail=clocks[0].detail, sources=clocks)  # a user's name beside it: PC102
        if flow.behind_template_input == IMPORTERS:  # the importers' calls decide, when they can be settled
            issue.fixed_call_only = True
            if definition_symbols(self.flow, issue) is None:
                return []  # the module reads the definition itself (gpt-researcher's PromptFamily): not settled
        return [issue]

    def issue_message(self, issue):
        """A clock read only as a date says that it changes once a day, not on every request (issue 11)."""
        message = super().issue_message(issue)
        if _at_import(issue) and hasattr(message, "template"):
            return dataclasses.replace(message, template=self.import_message)
        if (period := _period(issue)) and hasattr(message, "template"):
            template = {"day": self.daily_message, "hour": self.hour_message, "minute": self.minute_message}[period]
            return dataclasses.replace(message, template=template)
        if _per_object(issue) and hasattr(message, "template"):
            return dataclasses.replace(message, template=self.object_message)
        return message

    def issue_severity(self, issue):
        """A clock read only as a date (or to the hour) costs one cache write a day (an hour): a warning, not an
        error (issue 11)."""
        return Severity.WARNING if _period(issue) in ("day", "hour") or _at_import(issue) else None

    VALID = PC101_VALID + PC101_VALID_BLIND + PC101_OWN_VALID
    INVALID = PC101_INVALID + PC101_OWN_INVALID


class PerRequestDataInSystemPrompt(FlowRule):
    """
    ## What it does
    Finds per-user or per-request data in the system prompt: identities
    (user, name, email, tenant, account, organisation id, locale, time zone,
    a plan, level or organisation named with whose it is: ``billing_plan``,
    ``member_level``, ``user_org``; ``request.user``, the requesting user's
    Flask or Quart ``session``, the ``.get()`` of a ``contextvars.ContextVar``
    named for whose value it holds (``current_org``, not ``current_agent``); not a
    bare ``plan``, ``level`` or ``org``, which name an agent's plan, a log or
    trust level and a deployment's API organisation more often than a user, nor
    ``flask.g``), or a parameter of the request handler
    interpolated into a template with static text, also text derived from the
    request added to the system message of the conversation
    (``if messages[0]["role"] == "system": messages[0]["content"] += knowledge``
    with ``knowledge`` retrieved for ``messages[-1]``).

    ## Why is this bad?
    The instructions are the same for everyone, but with a user's name in
    them every user (or every call) gets a private copy of the prefix. Each
    copy is its own cache entry: written once at the cache-write price and
    rarely read again.

    A prefix shorter than the model's minimum cacheable length is never
    cached, so this costs nothing yet in a **one-shot** request (its
    messages a list literal with nothing spliced in, no tools, no
    ``previous_response_id=`` or ``**kwargs``) whose text is below that
    minimum: the finding is then **info**, and says how many tokens the
    request shows (about 4 characters a token: its literals through names,
    ``.format``, same-module functions, a structured-output schema's class,
    and the constants of the modules in the run; per-request values count
    0) against which minimum (the ``model=``'s in the providers data, else
    the smallest of the hosted models there). It becomes a cost once the
    prompt grows. Text the code does not show (a file read, a prompt
    registry, a ``system_prompt`` parameter, a template from a module
    outside the run) and a model the providers data does not list (a
    self-hosted one: vLLM and SGLang cache from the first block) keep the
    warning.

    ## Example
    ```python
    system=f"{POLICY}\\nYou are talking to {user.full_name} <{user.email}>."
    ```

    ## Use instead
    ```python
    system=POLICY,
    messages=[{"role": "user", "content": f"I am {user.full_name}.\\n\\n{question}"}],
    ```

    ## When it does not fire
    - A whole parameter passed straight through (`def call(system):
      create(system=system)`: a generic wrapper), also with only whitespace
      added (`system + "\\n"`, `"\\n\\n".join(system_parts)`).
    - A parameter named as the system prompt (`system_prompt`, `system_message`,
      `instructions`, `system`) with any text added (`system_prompt + "\\nCite
      sources."`: the prompt it was given, passed through).
    - A system text built once per object in `__init__` (`self.system = f"You
      support {product}."`); an identity read in a method (`self.user.name`,
      `self.customer_name`) is reported.
    - An Anthropic system block after the request's last `cache_control`
      breakpoint (when the module marks no message).
    - An identity-named module constant (`reading_level = "grade 8"`: identity
      needs a per-request origin, a parameter, a request object or a value
      computed at run time); data placed in the user turn.
    - A parameter that every call in the module binds to one fixed value (a
      literal, a module constant, a script's command-line arguments parsed at
      module level, a value the script's `main()` reads once outside any loop,
      an object built from source constants only), when all its callers are
      visible: a private or nested function, or any function of a script (`if
      __name__ == "__main__":`) or of a pytest module (by file name:
      `test_*.py`, `*_test.py`, `conftest.py`).
    - A parameter whose only value in the module is its literal default (no call
      passes it), also one call up (`writeup(drafts, num_rounds=20)` passing
      `num_rounds` on to the prompt's function in its loop).
    - A parameter typed as a class (`type[...]`: code) or as a database handle
      written with its client module (`conn: psycopg.Connection`,
      `sqlalchemy.orm.Session`; not a bare `Session`, which may be a chat
      session): what it reads is per-request only through the query's arguments,
      reported themselves.
    - LangGraph's `Configuration.from_runnable_config(config)` (the run's
      settings: models, limits, the assistant's prompt; its `user_id` field, or
      a key read from `config` itself, is still reported).
    - The `messages` / `tools` a converter is given as a whole, and their head
      `messages[0]` (the system message, passed through; a value picked from
      another message, such as a language detected from `messages[-1]`, is
      reported).
    - A parameter's prompt field written back into the same field with text
      added (`ModelInputData(instructions=data.instructions + " Be brief.")`: a
      prompt passed through); a message's `content` converted into the message
      it becomes (`{"role": "system", "content": _serialize(message.content)}`;
      not with text joined to it: `"Write like: " + message.content` is
      reported).
    - The reply a prompt-named request handler returns (`check_if_safe_prompt`),
      or a prompt-named step that runs an object built from its prompt
      (`TextPromptBlock(prompt=p).execute()`).
    - A user's id beside another entity's id in a lookup
      (`get_workflow(workflow_id=w, organization_id=org_id)`) scopes it: what
      comes back is the workflow's; alone (`db.get_projects(user_id)`) it is the
      user's data and is reported.
    - Flag variants and predicates as for PC101; a builder whose every result
      the module logs or gives a flag service, unsent.
    - A public function's parameter named for the application's configuration
      (`app_config`, `global_settings`; not a bare `config`, a LangGraph node's
      run values), and the prompt library a holder passed in returns
      (`preprompts_holder.get_preprompts()`): read at start-up.
    - A token count handed to a helper that makes no text
      (`get_code_message(count_tokens(messages))`): it sizes what comes back.
    - A system note appended to an object's history outside `__init__`
      (`self.add_message({"role": "system", "content": f"Ran: {cmd}"})`; no
      prompt constant in it, not under `if not self.messages:`, no reset of the
      list before it): a turn of it.

    A number or a `Literal` annotation does not make a parameter a setting: a
    customer number or a plan tier is per-user data.
    """

    code = "PC102"
    name = "per-request-data-in-system-prompt"
    severity = Severity.WARNING
    message = (
        "{sources} {reach} {slot}: " + PER_REQUEST_CLAIM
    )

    def findings(self, flow) -> list:
        """An identity, or a parameter that differs between calls, in the system prompt; a value that is also
        volatile, shuffled or a summary is reported by that rule (PC101, PC303, PC202) when it is enabled. Unsorted
        JSON of per-request data is two problems (key order: PC304, ``sort_keys=True``; per-request data: this
        rule, move it to the user turn), both reported."""
        if flow.area != "system" or flow.after_last_breakpoint or self.owned_by(flow, (S.SHUFFLED, "PC303"), (S.SUMMARY, "PC202")):
            return []
        clocks = self.owned_by(flow, (S.VOLATILE, "PC101"))
        # beside a clock (PC101's), a user's name or a per-request parameter is still this rule's (newcomer, stop
        # 33): not a name the clock's own value carries (`session_id`), nor the parameter a caller's clock came in by
        volatile = flow.of(S.VOLATILE) if clocks else ()
        taken, carriers = {id(s.origin) for s in volatile}, {(s.func_id, s.index) for s in volatile if s.func_id}
        named = {s.detail for s in volatile}  # `now`, `session_id`: a parameter named as a clock or an id
        identities = tuple(s for s in flow.of(S.IDENTITY) if s.origin is None or id(s.origin) not in taken)
        params = tuple(p for p in flow.per_request_params() if (p.func_id, p.index) not in carriers and p.detail not in named)
        if identities:
            detail = f"the user identity `{identities[0].detail}`"
            issue = self.issue(flow, detail=detail, sources=identities + params)
        elif params:
            issue = self.issue(flow, detail=f"the per-request parameter `{params[0].detail}`", sources=params)
        else:
            return []
        issue.weight = one_shot_weight(self.flow, flow.slot)  # below the minimum cacheable length: info (the run settles it)
        return [issue]

    VALID = [
        # Review of stop 30: an attribute of the same name (`args.translate`) does not hand a function on; a caller's
        # own prompt-named parameter with text is a prompt passed through, not per-request data.
        "import argparse\nimport anthropic\nclient = anthropic.Anthropic()\ndef translate(text, style):\n    return client.messages.create(model='m', max_tokens=9, system=f\"Translate in a {style} register.\", messages=[{\"role\": \"user\", \"content\": text}])\ndef main():\n    parser = argparse.ArgumentParser()\n    parser.add_argument(\"--translate\", action=\"store_true\")\n    args = parser.parse_args()\n    if args.translate:\n        print(translate(input(), \"formal\"))\nif __name__ == \"__main__\":\n    main()\n",
        "from openai import OpenAI\nclient = OpenAI()\ndef _ask(system_prompt, q):\n    return client.chat.completions.create(model=\"m\", messages=[{\"role\": \"system\", \"content\": system_prompt + \"\\nCite sources.\"}, {\"role\": \"user\", \"content\": q}])\ndef answer(system_prompt, q):\n    return _ask(f\"{system_prompt}\\nBe brief.\", q)\n",
        # Issue 11 (AI-Scientist, blind set 6): a script's function passes on its caller's parameter, whose only value
        # in the module is its default: the same in every call of the loop.
        'from openai import OpenAI\nSYSTEM = "You add citations. You have {total_rounds} rounds."\ndef get_prompt(client, draft, current_round, total_rounds):\n    return client.chat.completions.create(model="m", messages=[{"role": "system", "content": SYSTEM.format(total_rounds=total_rounds)}, {"role": "user", "content": f"Round {current_round}: {draft}"}])\ndef writeup(client, drafts, num_rounds=20):\n    for i, draft in enumerate(drafts):\n        get_prompt(client, draft, i, num_rounds)\nif __name__ == "__main__":\n    writeup(OpenAI(), open("d").read().split("\\n\\n"))\n',
        # Issue 11 (DocsGPT, blind set 11): the system prompt passed in whole, with static text appended.
        _OPENAI + 'def build_messages(system_prompt, history, query):\n    system_prompt = system_prompt + "\\n\\nCite your sources."\n    return [{"role": "system", "content": system_prompt}, *history, {"role": "user", "content": query}]\ndef ask(history, query):\n    return client.chat.completions.create(model="m", messages=build_messages(load_prompt(), history, query))\n',
        # Issue 11: a request dict sent as `**params` with the user's name in the newest user turn.
        _CLAUDE + "def ask(user, history, q):\n    params = {'model': 'm', 'max_tokens': 512, 'system': 'You are helpful.'}\n    params['messages'] = history + [{'role': 'user', 'content': f'{user.name}: {q}'}]\n    return client.messages.create(**params)\n",
        _CLAUDE + f"RULES = open('rules.md').read()\ndef ask(user, q):\n    return client.messages.create(model='m', system=[{{'type': 'text', 'text': RULES, {_CC}}}, {{'type': 'text', 'text': f'You talk to {{user.name}}.'}}], messages=[q])\n",
        # Issue 11 (openai-agents-python): a task definition built from constants only (scenario steps) is the same
        # in every process, and a pytest module's functions are called only by it.
        Valid(_OPENAI + "from .types import Step\nTOOL = 'echo'\ndef run_step(step, q):\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': f'Always call {step.tool_name}.'}, {'role': 'user', 'content': q}])\ndef test_steps():\n    steps = [Step(tool_name=TOOL), Step(tool_name='note')]\n    run_step(steps[0], 'hi')\n    run_step(steps[1], 'hi')\n", path="tests/test_hitl_session_scenario.py"),
        # Issue 11 (OpenHands): a system message built once per conversation object in `__init__`; a converter that
        # re-maps the system message it is given and describes the agent's tools.
        _OPENAI + "class FakeUser:\n    def __init__(self, issue, hints):\n        self.history = [{'role': 'system', 'content': f'You reported: {issue}\\nHints: {hints}'}]\n    def reply(self, q):\n        self.history.append({'role': 'user', 'content': q})\n        return client.chat.completions.create(model='m', messages=self.history)\n",
        _OPENAI + "def convert(messages, tools):\n    suffix = 'Tools:\\n' + describe(tools)\n    out = []\n    for m in messages:\n        content = m['content']\n        if m['role'] == 'system':\n            content += suffix\n            out.append({'role': 'system', 'content': content})\n        else:\n            out.append(m)\n    return client.chat.completions.create(model='m', messages=out)\n",
        # Issue 11 (pydantic-evals): parameters typed as a class are code; a count whose only value in the module is
        # its default is a setting.
        _CLAUDE + "from typing import Sequence\ndef generate(*, dataset_type: type[Dataset], evaluators: Sequence[type[Evaluator]] = (), n_examples: int = 3):\n    schema = dataset_type.schema_with(evaluators)\n    return client.messages.create(model='m', system=f'Follow this schema:\\n{schema}\\nInclude {n_examples} cases.', messages=[])\n",
        # Issue 11 (gptme llm_anthropic.py): an optional class, annotated in a string, is code as well.
        _CLAUDE + "from pydantic import BaseModel\ndef chat(messages, output_schema: 'type[BaseModel] | None' = None):\n    system = [{'type': 'text', 'text': 'Be brief.'}]\n    if output_schema is not None:\n        system.append({'type': 'text', 'text': f'Answer as {output_schema.__name__}: {output_schema.model_json_schema()}'})\n    return client.messages.create(model='m', system=system, messages=messages)\n",
        _CLAUDE + "from typing import Optional\ndef chat(messages, schema: Optional[type[Answer]] = None):\n    return client.messages.create(model='m', system=f'Schema: {schema}', messages=messages)\n",
        # Issue 11 (aider): the `locale` module and Babel's `Locale` class are code; the host's locale is per process.
        _CLAUDE + "import locale\ntry:\n    from babel import Locale\nexcept ImportError:\n    Locale = None\ndef ask(q):\n    lang = Locale.parse(locale.getlocale()[0]).get_display_name('en') if Locale else 'English'\n    return client.messages.create(model='m', system=f'Reply in {lang}.', messages=[q])\n",
        # Issue 11 (openai-agents-python): a value a script's entry point reads once (`input()` in `main()`, outside
        # any loop) is per process; a parameter's prompt field plus constant text is a prompt passed through.
        _OPENAI + "import asyncio\nasync def run(path):\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': f'Answer about the repo at {path}.'}, {'role': 'user', 'content': 'Who commits most?'}])\nasync def main():\n    path = input('Repository: ')\n    await run(path)\nif __name__ == '__main__':\n    asyncio.run(main())\n",
        # Issue 11 (browser-use serializers): a message's own content converted into the system message it
        # becomes, through a helper that tags refusal parts (`f'[Refusal] {part.refusal}'`).
        _OPENAI + "class Serializer:\n    @staticmethod\n    def _content(content):\n        if isinstance(content, str):\n            return content\n        return [{'type': 'text', 'text': p.text if p.type == 'text' else f'[Refusal] {p.refusal}'} for p in content]\n    @staticmethod\n    def serialize(message):\n        if isinstance(message, SystemMessage):\n            return {'role': 'system', 'content': Serializer._content(message.content)}\n        return {'role': 'user', 'content': Serializer._content(message.content)}\ndef ask(messages):\n    return client.chat.completions.create(model='m', messages=[Serializer.serialize(m) for m in messages])\n",
        # Issue 11 (khoj): a prompt-named request handler returns the model's reply (keyed by the user), not a prompt.
        _OPENAI + "from .adapters import get_chat_model, send_message_to_model\nasync def send_message_to_model_wrapper(query, system_message='', user=None):\n    chat_model = await get_chat_model(user)\n    return send_message_to_model(chat_model=chat_model, messages=[{'role': 'system', 'content': system_message}, {'role': 'user', 'content': query}])\nasync def check_if_safe_prompt(prompt, user=None):\n    response = await send_message_to_model_wrapper(f'Is this safe? {prompt}', user=user)\n    return response.text.startswith('yes'), response.text\n",
        # Issue 11 (open-interpreter llm.run): the head of the conversation given as a whole (its system message)
        # split off and put back in front: passed through.
        "import litellm\ndef run(messages):\n    system_message = messages[0]['content']\n    messages = trim(messages[1:], system_message=system_message)\n    messages = [{'role': 'system', 'content': system_message}] + messages\n    return litellm.completion(model='m', messages=messages)\n",
        "from agents import Agent, ModelInputData\ndef filter_input(data):\n    return ModelInputData(input=data.model_data.input, instructions=(data.model_data.instructions or '') + ' Reply briefly.')\n",
        # Issue 11, from real code (openai-agents-python examples): per-process values, not per-request data.
        _CLAUDE + "import argparse\ndef main(repo):\n    return client.messages.create(model='m', system=f'You inspect {repo}.', messages=[])\nif __name__ == '__main__':\n    args = argparse.ArgumentParser().parse_args()\n    main(args.repo)\n",
        _CLAUDE + "SECRET = 'EXAMPLE_SECRET'\ndef _agent(secret_name, q):\n    return client.messages.create(model='m', system=f'Never print ${secret_name}.', messages=[q])\ndef a(q):\n    return _agent(SECRET, q)\ndef b(q):\n    return _agent(secret_name=SECRET, q=q)\n",
        _CLAUDE + "def call(system, q):\n    return client.messages.create(model='m', system=system, messages=[{'role': 'user', 'content': q}])\n",
        _CLAUDE + "class Bot:\n    def __init__(self, product):\n        self.system = f'You support {product}.'\n    def ask(self, q):\n        return client.messages.create(model='m', system=self.system, messages=[{'role': 'user', 'content': q}])\n",
        _OPENAI + "def ask(user, q):\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': 'Help.'}, {'role': 'user', 'content': f'{user.name}: {q}'}])\n",
        # Generic wrappers: an escape sequence is a line break, not static text.
        _CLAUDE + "def call(system, q):\n    return client.messages.create(model='m', system=system + '\\n', messages=[{'role': 'user', 'content': q}])\n",
        _CLAUDE + "def call(system, q):\n    return client.messages.create(model='m', system=f'{system}\\n', messages=[{'role': 'user', 'content': q}])\n",
        _CLAUDE + "def call(system_parts, q):\n    return client.messages.create(model='m', system='\\n\\n'.join(system_parts), messages=[{'role': 'user', 'content': q}])\n",
        # Second review (id/): per-request values in the user turn are placed right; a bare plan or level names no
        # user; `flask.g` holds the request's connections as often as its user.
        _OPENAI + "import contextvars\nfrom flask import session\ncurrent_org = contextvars.ContextVar('current_org')\ndef ask(q):\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': 'Help.'}, {'role': 'user', 'content': f\"{current_org.get()} / {session['level']}: {q}\"}])\n",
        _OPENAI + "from .tools import registry\ndef ask(q):\n    trust_level = registry.level_of('search')\n    plan = registry.plan()\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': f'Plan: {plan}. Trust: {trust_level}.'}, {'role': 'user', 'content': q}])\n",
        # Review (s26): a team's or a course's plan and level, and a ContextVar holding the framework's current agent,
        # name no user.
        _OPENAI + "from .config import CONFIG\ndef researcher(task, history):\n    team_plan = CONFIG.team_plan\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': f'Follow the team plan: {team_plan}'}, *history, task])\n",
        _OPENAI + "import contextvars\nrequest_config = contextvars.ContextVar('request_config')\ndef step(history):\n    cfg = request_config.get()\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': cfg.system_prompt}, *history])\n",
        _OPENAI + "import contextvars\ncurrent_agent = contextvars.ContextVar('current_agent')\ndef step(history):\n    agent = current_agent.get()\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': agent.instructions}, *history])\n",
        _OPENAI + "from flask import g\ndef ask(q):\n    rules = g.db.execute('SELECT text FROM rules').fetchone()[0]\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': rules}, {'role': 'user', 'content': q}])\n",
        # A module-level literal is one value for everyone, whatever its name says.
        _CLAUDE + "reading_level = 'grade 8'\ndef ask(q):\n    return client.messages.create(model='m', system=f'Write at {reading_level}.', messages=[])\n",
        # Issue 11: a store into message 0 with no test that it is the system message (an Anthropic
        # conversation starts with a user message) is no system slot.
        _CLAUDE + "def ask(messages, notes):\n    messages[0]['content'] += f'\\nNotes: {notes}'\n    return client.messages.create(model='m', max_tokens=9, messages=messages[-3:])\n",
        # Issue 11 (shared case pc304_glossary_in_system.py): a database handle is not request data; a constant query.
        _CLAUDE + "import psycopg\ndef ask(conn: psycopg.Connection, q):\n    row = conn.execute('SELECT text FROM rules').fetchone()\n    return client.messages.create(model='m', max_tokens=9, system=row[0], messages=[q])\n",
        # Issue 11 (OpenManus, blind set 17): a `username` of a settings object another module makes at import is a
        # setting read at start-up, not a user's identity (flask's `g.user.name` or `current_user.email` still are).
        _OPENAI + "from app.config import config\ndef browse(q):\n    proxy = f'{config.browser_config.proxy.username}@{config.browser_config.proxy.server}'\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': f'Browse through {proxy}.'}, {'role': 'user', 'content': q}])\n",
        # Issue 11 (open_deep_research): LangGraph's `Configuration.from_runnable_config(config)` is the run's
        # settings, one value per deployment or assistant.
        "from langchain_core.messages import HumanMessage, SystemMessage\nfrom langchain_core.runnables import RunnableConfig\nfrom langchain.chat_models import init_chat_model\nfrom app.configuration import Configuration\nmodel = init_chat_model('gpt-4.1')\nasync def supervisor(state, config: RunnableConfig):\n    configurable = Configuration.from_runnable_config(config)\n    system = f'You lead the research. Stop after {configurable.max_iterations} rounds.'\n    return await model.ainvoke([SystemMessage(content=system), HumanMessage(content=state['brief'])])\n",
    ] + PC102_VALID_BLIND + PC102_OWN_VALID
    INVALID = PC102_INVALID
