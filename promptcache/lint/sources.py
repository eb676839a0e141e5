"""The catalogue of taint sources and sanitisers (lint-rules.md, "Shared definitions").

Every recogniser here answers one question about a qualified call name or an
identifier; the taint engine (:mod:`promptcache.lint.taint`) asks them.

Kinds of source:

- ``volatile``: differs on every call (clock, uuid, random, pid, request ids);
- ``identity``: differs per user (user, email, tenant, account, locale, plan);
- ``param``: a parameter of the function holding the sink (per-request data
  once it is interpolated into a template with static text);
- ``summary``: a rewritten summary of the conversation;
- ``unordered`` / ``fs_order`` / ``mcp``: order not fixed by the program
  (sets, completion order / directory listings / MCP ``list_tools()``);
  ``sorted()`` and ``.sort()`` are the sanitisers;
- ``mcp_call``: a ``list_tools()`` result, sorted or not (re-listing per turn);
- ``shuffled``: ``random.shuffle/sample`` or a permutation; ``random.choices`` (a draw: also volatile);
- ``unsorted_json``: ``json.dumps`` of a runtime-built mapping without ``sort_keys=True``;
- ``env``: an environment variable (differs per deployment).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field

import libcst as cst

VOLATILE = "volatile"
IDENTITY = "identity"
PARAM = "param"
SUMMARY = "summary"
UNORDERED = "unordered"
FS_ORDER = "fs_order"
MCP = "mcp"
MCP_CALL = "mcp_call"
SHUFFLED = "shuffled"
UNSORTED_JSON = "unsorted_json"
ENV = "env"

ORDER_KINDS = frozenset({UNORDERED, FS_ORDER, MCP, SHUFFLED})
# What a number computed from a value no longer carries: the order of elements or keys.
ORDERING_KINDS = ORDER_KINDS | {MCP_CALL, UNSORTED_JSON}

# "system", but not inside filesystem / subsystem / ecosystem (openai-agents-python's
# `_build_filesystem_test_session()` was read as a system-prompt builder); no name that ends in "prompt"
# and a word for what names, counts or locates a prompt (skyvern's `get_llm_handler_for_prompt_type()`
# returns an LLM handler, `SYSTEM_PROMPT_NAME` a template's name, `prompt_tokens` a count: blind set 18).
DEFAULT_PROMPT_NAME_REGEX = (
    r"(?i)^(?!.*prompt_?(?:type|id|name|key|version|hash|tokens?|count|len|length|file|path|dir|flag)s?$)"
    r".*?(prompt|(?<!file)(?<!sub)(?<!eco)system|instruction|preamble)"
)
DEFAULT_VOLATILE_NAME_REGEX = (
    r"(?i)(^|_)((request|trace|session|run|correlation|span)_?id|nonce|timestamp|now)$"
)

_VOLATILE_CALLS = frozenset(
    {
        "datetime.datetime.now",
        "datetime.datetime.utcnow",
        "datetime.datetime.today",
        "datetime.date.today",
        "time.time",
        "time.time_ns",
        "time.ctime",
        "time.localtime",
        "time.gmtime",
        "time.monotonic",
        "time.perf_counter",
        "uuid.uuid1",
        "uuid.uuid4",
        "uuid.uuid6",
        "uuid.uuid7",
        "os.urandom",
        "os.getpid",
        "django.utils.timezone.now",
        "django.utils.timezone.localtime",
        "pendulum.now",
        "pendulum.today",
        "arrow.now",
        "arrow.utcnow",
    }
)
# Clock reads at day precision (the value changes once a day, not per request).
DATE_CALLS = frozenset({"datetime.date.today", "pendulum.today"})
_VOLATILE_PREFIXES = ("random.", "secrets.", "numpy.random.")
_SHUFFLE_CALLS = frozenset(
    {"random.shuffle", "random.sample", "numpy.random.permutation", "numpy.random.shuffle"}
)
_UNORDERED_CALLS = frozenset(
    {"set", "frozenset", "asyncio.as_completed", "asyncio.wait", "concurrent.futures.as_completed"}
)
_FS_CALLS = frozenset(
    {
        "os.listdir",
        "os.scandir",
        "os.walk",
        "os.fwalk",
        "glob.glob",
        "glob.iglob",
        "importlib.metadata.entry_points",
        "importlib_metadata.entry_points",
        "pkg_resources.iter_entry_points",
        "pkgutil.iter_modules",
        "pkgutil.walk_packages",
    }
)
_FS_METHODS = frozenset({"glob", "rglob", "iterdir"})
_ENV_CALLS = frozenset({"os.getenv", "os.environ.get", "os.environ.__getitem__"})
# The signed-cookie session of the user making the request (Flask, Quart): whatever it holds is that user's.
# Not `flask.g` (it holds the request's connections as often as its user) nor `flask.request` (its body is the turn).
_USER_SESSIONS = frozenset({"flask.session", "quart.session"})
# A context-local value (``ContextVar.get()``): set per request or task by design (PEP 567); a user's data when the
# variable says whose (``current_org``, ``request_user``), not a framework's current agent or a test override.
_CONTEXT_VARS = frozenset({"contextvars.ContextVar"})
_CONTEXT_IDENTITY_RE = re.compile(
    r"(?i)(^|_)(user|tenant|org|organi[sz]ation|account|customer|member|locale|time_?zone|tz)"
    r"(_?(id|name))?(_?(var|ctx|context))?$"
)
# Calls whose result is a count or a flag: it carries nothing of its argument.
_OPAQUE_CALLS = frozenset({"len", "any", "all", "bool", "isinstance", "id", "print", "callable", "type"})
# Calls whose result is a number made from the argument's value: ``int(time.time())`` is still the clock,
# but the order of the argument's elements is gone.
_VALUE_CALLS = frozenset({"int", "float", "round", "abs", "sum", "min", "max", "hash", "divmod", "pow"})
# Random generators: seeded with an argument they are deterministic (the seed's taint is theirs);
# without one they are seeded from the OS, so they are volatile.
_SEEDED_GENERATORS = frozenset({"random.Random", "numpy.random.default_rng", "numpy.random.RandomState", "numpy.random.Generator"})
# Order-free set operations: ``d.keys() & other`` and ``d.items() - other`` give sets.
_DICT_VIEWS = frozenset({"keys", "items"})
_COMPLETION_ORDER = frozenset({"asyncio.as_completed", "asyncio.wait", "concurrent.futures.as_completed"})

# A user's plan, level or organisation only with a word naming whose it is (`billing_plan`, `member_level`,
# `user_org`): a bare `plan`, `level` or `org` names no user (`trust_level`, a deployment's API organisation).
_OWNER = r"(user|account|customer|subscription|billing|member(ship)?|tenant)"
_OWNED = r"(level|plan|tier|org|organi[sz]ation)"
_IDENTITY_RE = re.compile(
    r"(?i)(^|_)(user(_?name|_?id)?|e_?mail(_address)?|tenant(_?id)?|account(_?(id|number|name))?|"
    rf"org_?id|organi[sz]ation_?id|locale|time_?zone|tz|{_OWNER}_?{_OWNED}|customer(_?(id|name))?)$"
)
# Attribute names that identify a user whatever object they hang off (``ctx.user_id``, ``msg.email``,
# ``x.user_plan``); a bare ``x.org`` no more than a bare ``org``, nor ``settings.billing_plan`` (a deployment's): the
# other owners count as variable names, read on the request path.
_IDENTITY_ATTR_RE = re.compile(
    r"(?i)(^|_)(user(_?name|_?id)?|e_?mail(_address)?|tenant(_?id)?|account(_?(id|number))?|org_?id|"
    rf"organi[sz]ation_?id|user_?{_OWNED})$"
)
# "digest" alone is a hash far more often than a summary (`digest = sha256(v).hexdigest()`): only a
# conversation's digest (`chat_digest`) counts.
_SUMMARY_NAME_RE = re.compile(r"(?i)(^|_)(summary|recap|synopsis)$|(conversation|chat|history|thread|dialog)_?digest$")
_SUMMARISE_CALL_RE = re.compile(r"(?i)(summar|compress|condense|compact|recap)")
_SUMMARISE_TEXT_RE = re.compile(r"(?i)\b(summari[sz]e|summary|condense|compress|recap)\b")
_CONVERSATION_RE = re.compile(r"(?i)\b(chat|conversation|history|transcript|dialog(ue)?|thread|messages|turns)\b")
_HISTORY_WORD_RE = re.compile(r"(?i)(history|conversation|thread|messages|msgs|chat|memory|context|transcript|turns|dialog)")
_RECORD_TIME_RE = re.compile(r"(?i)(^|_)(created|updated|modified|deleted|creation)(_?(at|on|utc|time|date))?$|_utc$")
_CONSTANT_RE = re.compile(r"^_?[A-Z][A-Z0-9_]*$")
_RENDERS_RE = re.compile(r"(?i)render|format|substitute|template|prompt|instruction|preamble|header|banner|"
                         r"(?<!file)(?<!sub)(?<!eco)system")
_TIME_ZONE_RE = re.compile(r"(?i)(^|_)(time_?zone|tz)$")
_TIME_RE = re.compile(r"(?i)(date_?time|time_?stamp|(^|_)(time|date|now|clock|at|tzinfo)($|_)|astimezone|localize|strftime|isoformat)")


def volatile_call(qualified: str, n_args: int) -> bool:
    """True for a call whose value changes on every call (clock, uuid, random, pid).

    ``time.strftime`` counts only without its time argument.
    """
    if qualified in _VOLATILE_CALLS:
        return True
    if qualified == "time.strftime":
        return n_args < 2
    return qualified.startswith(_VOLATILE_PREFIXES) and qualified not in _SHUFFLE_CALLS


def draw_call(qualified: str) -> bool:
    """``random.choices``: items drawn with replacement, new content on each call (volatile text in the system
    prompt, PC101; drawn few-shot messages or tools in the prefix, PC303)."""
    return qualified == "random.choices"


def shuffle_call(qualified: str) -> bool:
    """``random.shuffle/sample`` and numpy permutations: the order (and for ``sample`` the subset) of given items.
    ``random.choices`` draws with replacement, new content on each call: a volatile call, not a shuffle."""
    return qualified in _SHUFFLE_CALLS


def unordered_call(qualified: str) -> bool:
    """``set()``, ``frozenset()`` and completion-order iterators."""
    return qualified in _UNORDERED_CALLS


def fs_order_call(qualified: str | None, method: str | None) -> bool:
    """Directory listings, globs, entry points: order set by the filesystem or installer."""
    return (qualified is not None and qualified in _FS_CALLS) or (method is not None and method in _FS_METHODS)


FILE_OPENS = frozenset({"open", "io.open", "codecs.open"})  # a file's text read at run time


def user_session(qualified: str | None) -> bool:
    """``flask.session`` / ``quart.session``: the requesting user's own session data."""
    return qualified in _USER_SESSIONS


def context_var(qualified: str | None, name: str) -> bool:
    """A ``contextvars.ContextVar`` bound to ``name``, a name that says whose value it holds (``current_org``): its
    ``.get()`` is the current request's user's."""
    return qualified in _CONTEXT_VARS and bool(_CONTEXT_IDENTITY_RE.search(name))


def env_call(qualified: str) -> bool:
    return qualified in _ENV_CALLS


def opaque_call(qualified: str) -> bool:
    """Builtins whose result is a count or a flag, not the argument's content (``len``, ``isinstance``)."""
    return qualified in _OPAQUE_CALLS


def value_call(qualified: str) -> bool:
    """Builtins whose result is a number made from the argument (``int``, ``round``): ordering taint is dropped, the rest kept."""
    return qualified in _VALUE_CALLS


def seeded_generator(qualified: str) -> bool:
    """``random.Random(...)`` and numpy generators: deterministic when given a seed."""
    return qualified in _SEEDED_GENERATORS


def dict_view(method: str) -> bool:
    """``keys`` / ``items``: dict views, whose ``&``, ``|``, ``-``, ``^`` give sets."""
    return method in _DICT_VIEWS


def completion_order(detail: str) -> bool:
    """True when an unordered source's ``detail`` names a completion-order iterator (not a set)."""
    return detail.removesuffix("()") in _COMPLETION_ORDER


def is_constant_name(name: str) -> bool:
    """``SYSTEM_PROMPT``-style module constants (all caps)."""
    return bool(_CONSTANT_RE.match(name))


def identity_name(name: str) -> bool:
    """True for identifiers naming a user, tenant, account, locale or a user's plan (not all-caps constants)."""
    return not is_constant_name(name) and bool(_IDENTITY_RE.search(name))


# Packages whose module-level objects are the current request's (flask's `request`, `g`, `session`, flask_login's
# `current_user`, streamlit's `session_state`, chainlit's `user_session`): what they hold is per-request data.
REQUEST_CONTEXTS = frozenset({"flask", "quart", "flask_login", "werkzeug", "django", "starlette", "fastapi", "sanic",
                              "aiohttp", "tornado", "streamlit", "chainlit", "gradio", "contextvars", "starlette_context"})
_SETTINGS_RE = re.compile(r"(^|_)(config|configs|configuration|settings|setting|cfg|conf|env|options)($|_)", re.IGNORECASE)


def imported_setting(names: list[str]) -> bool:
    """``config.browser_config.proxy.username`` (OpenManus): an identity-named attribute read off an imported object
    through a settings-named step (``names``: the root and the attributes before the last) is a setting read at
    start-up, not a user's data. Any other imported object may be the app's own request context
    (``request_ctx.user_id``, a thread-local, a re-exported ``g``): its identity attributes stand."""
    return any(_SETTINGS_RE.search(n) for n in names)


def identity_attribute(name: str) -> bool:
    """True for attribute names that identify a user on any object (``x.user_id``, ``x.email``).

    Broader words (plan, level, locale, customer) count only on an identity
    base (``user.plan``) or as variable names, so ``row.plan`` is not identity.
    """
    return bool(_IDENTITY_ATTR_RE.search(name))


def time_zone_name(name: str) -> bool:
    """``timezone``, ``user_tz``: a time zone, which renders a time rather than being text of its own."""
    return bool(_TIME_ZONE_RE.search(name))


def renders_text(name: str) -> bool:
    """A callee named to render text (``render_header``, ``format_prompt``, ``build_system``): its arguments are
    written into what it returns."""
    return bool(_RENDERS_RE.search(name))


def time_call(name: str) -> bool:
    """A callee or a value named for a time (``format_datetime``, ``now``, ``astimezone``, ``edited_at``,
    ``memory_edit_timestamp``): what a time zone given with it renders."""
    return bool(_TIME_RE.search(name))


def record_time_name(name: str) -> bool:
    """Names of when a record was made or changed (``Tool(creation_utc=now)``, parlant; ``updated_at``): a
    constructor's metadata keyword, like an id, until the field is read back by that name."""
    return bool(_RECORD_TIME_RE.search(name))


def summary_name(name: str) -> bool:
    """True for ``summary`` / ``recap`` / ``synopsis`` style identifiers."""
    return bool(_SUMMARY_NAME_RE.search(name))


def summarise_callee(name: str) -> bool:
    """True for ``summarize_*`` / ``compress_*`` / ``condense`` / ``compact_*`` function names.

    Not a class (``ReasoningSummary(...)`` builds a data object) and not a name whose summarising word
    follows ``before`` / ``after`` / ``until`` / ``since`` / ``for`` (``_trim_before_compaction()`` trims:
    pydantic-ai; ``_format_messages_for_summary()`` formats: crewAI; issue 11).
    """
    if not _SUMMARISE_CALL_RE.search(name) or (name.lstrip("_")[:1].isupper() and not name.isupper()):
        return False
    words = [w.lower() for w in re.findall(r"[A-Za-z][a-z0-9]*|[A-Z]+(?![a-z])", name)]
    for i, word in enumerate(words):
        if _SUMMARISE_CALL_RE.match(word):
            return not (i and words[i - 1] in ("before", "after", "until", "since", "for"))
    return True


def history_word(name: str) -> bool:
    """True when an identifier speaks of the conversation (history, thread, messages, ...)."""
    return bool(_HISTORY_WORD_RE.search(name))


def asks_to_summarise(text: str) -> bool:
    """True when prompt text asks the model to summarise a conversation."""
    return bool(_SUMMARISE_TEXT_RE.search(text)) and bool(_CONVERSATION_RE.search(text))


@dataclass(frozen=True)
class Source:
    """One origin of taint.

    ``detail`` names it for messages (``datetime.datetime.now()``, ``user``);
    ``origin`` is the node where it starts (reported for shuffles and
    ``json.dumps``); ``func_id``/``index`` identify a parameter.
    """

    kind: str
    detail: str
    origin_id: int = 0
    func_id: int = 0
    index: int = -1
    templated: bool = False
    picked: bool = False  # one element picked from a parameter by position (`messages[-1]`): not the whole list
    period: str = ""  # a clock read formatted as a date (`date.today()`, `strftime("%Y-%m-%d")`): "day", it changes
    # once a day; "hour" / "minute" for `%H:00` / `%H:%M` (clock_periods.clock_period); "": per request
    import_time: bool = False  # read once, when the module is imported (module or class body): fixed per process
    per_object: bool = False  # read when an object is built (`self.x = now()` in `__init__` only): fixed per object
    key_order: bool = False  # the order a mapping's keys were stored in (`d[k] = v` in a loop): not in `d[k]`
    through_call: bool = False  # an argument of a call whose body is not seen (`store.get(user_id)`): in the result's
    # value, not known to be in its text
    guard_id: int = 0  # taken only when `guard.test`, a parameter, is true (the body of `x if flag else y`)
    keyed: bool = False  # the id an unseen call looked something up by (`get_run(run_id)`): in the result as
    # written, not in a field, a method's result or an element read from it (`get_run(run_id).steps`)
    origin: cst.CSTNode | None = field(default=None, compare=False, hash=False, repr=False)
    guard: cst.IfExp | None = field(default=None, compare=False, hash=False, repr=False)

    @property
    def daily(self) -> bool:
        """A clock read as a date: it changes once a day."""
        return self.period == "day"


EMPTY: frozenset[Source] = frozenset()


def source(kind: str, detail: str, origin: cst.CSTNode | None = None) -> Source:
    return Source(kind, detail, origin_id=id(origin) if origin is not None else 0, origin=origin)


def _flagged(taint: frozenset[Source], flag: str, value: bool, kinds: tuple[str, ...] | None = None) -> frozenset[Source]:
    """``taint`` with the :class:`Source` field ``flag`` set to ``value`` on its sources of ``kinds`` (all: None)."""
    def hit(s: Source) -> bool:
        return (kinds is None or s.kind in kinds) and getattr(s, flag) != value
    if not any(hit(s) for s in taint):
        return taint
    return frozenset(dataclasses.replace(s, **{flag: value}) if hit(s) else s for s in taint)


def templated(taint: frozenset[Source]) -> frozenset[Source]:
    """Mark parameter sources as interpolated into static text."""
    return _flagged(taint, "templated", True, (PARAM,))


def through_call(taint: frozenset[Source]) -> frozenset[Source]:
    """``taint`` as the result of an unseen call that took it as an argument: identity sources marked
    :attr:`Source.through_call` (a lookup keyed by the user returns per-user data, not the user's id)."""
    return _flagged(taint, "through_call", True, (IDENTITY,))


def keyed(taint: frozenset[Source], kinds: tuple[str, ...]) -> frozenset[Source]:
    """``taint``, the id a call was given as a lookup key, with its ``kinds`` sources marked :attr:`Source.keyed`."""
    return _flagged(taint, "keyed", True, kinds)


def unkeyed(taint: frozenset[Source], receiver: frozenset[Source] | None = None) -> frozenset[Source]:
    """``taint`` read through a field, an element or a method of a lookup's result: the lookup keys dropped (only
    those the ``receiver`` carries, when given: ``self.label`` bound elsewhere keeps its own)."""
    if not any(s.keyed for s in taint):
        return taint
    return frozenset(s for s in taint if not (s.keyed and (receiver is None or s in receiver)))


def as_text(taint: frozenset[Source]) -> frozenset[Source]:
    """``taint`` made into text (an f-string, ``+`` with text, a ``str`` method, a literal's element): a lookup
    key in it is in that text now (``f"Trace {get_trace_url(run_id)}"``), whatever is read from it later."""
    return _flagged(taint, "keyed", False)


def written(taint: frozenset[Source]) -> frozenset[Source]:
    """``taint`` written into text or a schema literal (an f-string, a dict's value): an unseen call's result
    (:func:`through_call`) placed there is in that text now (``{"description": describe_account(user)}``)."""
    return _flagged(taint, "through_call", False)


def as_period(t: frozenset[Source], period: str) -> frozenset[Source]:
    """``t`` with its volatile sources marked as changing once a ``period`` (``"day"``, ``"hour"``, ``"minute"``;
    ``""``: left as they are); a month or a year drops them (:mod:`promptcache.lint.clock_periods`)."""
    if period in ("month", "year"):
        return frozenset(s for s in t if s.kind != VOLATILE)
    return _flagged(t, "period", period, (VOLATILE,)) if period else t
