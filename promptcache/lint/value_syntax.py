"""What a value is, read from its syntax: reasons its taint does not make it per-request prompt text.

The taint engine (:mod:`promptcache.lint.taint`) asks these when it meets a shape that real LLM-app code uses
for something other than per-request data (issue 11, each from a false positive in pydantic-ai, aider,
openai-agents-python or OpenHands):

- a parameter's prompt field (``data.instructions``): a prompt passed through;
- a parameter annotated as a number, a flag, a class or a literal choice: a task setting;
- an import of a module or a class (``import locale``, ``from babel import Locale``): code;
- ``d["title"] = ...``: a key written in the source, added in program order;
- a call of a class by its CamelCase name, whose id and timestamp keywords are metadata;
- ``list_tools()`` of a parameter annotated with a class that is no MCP session or client: an app's registry.
"""

from __future__ import annotations

import re

import libcst as cst

from promptcache.lint.expressions import last_name
from promptcache.lint.imports import is_standard_library
from promptcache.lint.index import Binding, Scope
from promptcache.lint.walk import descendants

# `data.instructions`, `config.system_prompt`: the prompt field of an object passed in.
PROMPT_FIELD = re.compile(r"(?i)^_?(system_?prompt|instructions|system_?message|system)$")
# `preprompts_holder.get_preprompts()`: a getter of the prompt library an object passed in holds (not
# `request.get_system_prompt()`, a request's own prompt; see call_taint).
PROMPT_GETTER = re.compile(r"(?i)^_?(get|load|read)_(pre_?prompts|prompts|prompt_templates)$")

_CLASS_TYPES = frozenset({"type", "Type"})
_SEQUENCES = frozenset({"Sequence", "list", "List", "tuple", "Tuple", "Iterable", "set", "frozenset", "Collection"})


def class_annotation(param: cst.CSTNode) -> bool:
    """A parameter annotated as a class (``dataset_type: type[Dataset]``, ``Sequence[type[Evaluator]]``): its
    value is code, whose rendering (a schema) the code fixes, not per-request text (pydantic-evals'
    ``generate_dataset``; issue 11). A number or a literal choice (``customer_number: int``,
    ``tier: Literal[...]``) is data like any other: only its call sites say it is fixed (issue 11 review)."""
    ann = param.annotation.annotation if isinstance(param, cst.Param) and param.annotation is not None else None
    return ann is not None and _setting_type(ann)


_HANDLE = re.compile(r"^(Async)?(Connection|Cursor|Session|Engine|Pool)$")
# Database client modules whose handle classes are written qualified (`psycopg.Connection`, `sqlalchemy.orm.Session`).
_DB_MODULES = frozenset({"psycopg", "psycopg2", "asyncpg", "sqlite3", "aiosqlite", "sqlalchemy", "pymysql", "duckdb",
                         "redis", "pymongo", "motor"})


def handle_annotation(param: cst.CSTNode) -> bool:
    """A parameter annotated as a database handle, written qualified by its client module
    (``conn: psycopg.Connection``, ``db: sqlalchemy.orm.Session | None``, ``sqlite3.Cursor``): the value is a connection to outside state, not request text. What a query through it
    reads is per-request only through the query's arguments, which carry their own taint (the shared case
    ``pc304_glossary_in_system.py``: a glossary read with a constant query; issue 11)."""
    ann = param.annotation.annotation if isinstance(param, cst.Param) and param.annotation is not None else None
    return ann is not None and _handle_type(ann)


# A plain `config` / `settings` is not here: a LangGraph node's `config` carries the run's configurable values.
# Not `model_settings` / `llm_config`: per run in pydantic-ai and AutoGen.
_CONFIG_PARAM = re.compile(r"(?i)^_?(app|application|global|server|service|project)_?(config|configuration|settings|cfg|conf)$")


def config_param(param: cst.CSTNode, func: Scope) -> bool:
    """A parameter named for the application's configuration (``app_config: AppConfig``, ``global_settings``):
    values read at start-up and handed down, one per process or deployment, not per request (issue 11: deer-flow's
    ``app_config``, "configuration read at start-up"). Its user- and id-named fields (``app_config.user_id``) stay
    sources by their names; a parameter annotated as a request or a message is not configuration. Only for a public
    function ``func`` of a module or class, whose callers are elsewhere: a private or nested one's callers are in
    view, and what they pass decides (``_ask(request.user.profile, q)`` is reported). Also a parameter of any name
    annotated with a ``*Settings`` class (browser-use's ``settings: MessageCompactionSettings | None``; blind set 31;
    not ``*Config``: LangGraph's ``RunnableConfig`` carries the run's values)."""
    if not isinstance(param, cst.Param) or func.name.startswith("_") and not func.name.startswith("__") \
            or func.parent is not None and func.parent.kind == "function":
        return False
    types = annotation_types(param.annotation.annotation) if param.annotation is not None else []
    if types and all(last_name(x).endswith("Settings") for x in types):
        return True
    return bool(_CONFIG_PARAM.match(param.name.value)) and not any(
        re.search(r"(?i)request|message|query|input|state", last_name(x) or "") for x in types)


def _handle_type(ann: cst.BaseExpression) -> bool:
    sides = annotation_types(ann)
    return bool(sides) and all(_handle_class(x) for x in sides)


def _handle_class(ann: cst.BaseExpression) -> bool:
    if not isinstance(ann, cst.Attribute):
        return False  # a bare `Session` / `Connection` may be a chat session or a socket (issue 11 review)
    root = ann
    while isinstance(root, cst.Attribute):
        root = root.value
    return isinstance(root, cst.Name) and root.value in _DB_MODULES and bool(_HANDLE.match(ann.attr.value))


def annotation_types(ann: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The types an annotation allows besides ``None``: ``"X | None"``, ``Optional[X]``, ``Union[X, Y]``,
    ``Annotated[X, ...]`` and ``X | Y`` unwrapped (a string annotation parsed); ``[]`` when it is only ``None`` or
    does not parse."""
    if isinstance(ann, cst.SimpleString):
        try:
            return annotation_types(cst.parse_expression(ann.evaluated_value))
        except (cst.ParserSyntaxError, ValueError, TypeError):
            return []
    if isinstance(ann, cst.BinaryOperation) and isinstance(ann.operator, cst.BitOr):
        return [*annotation_types(ann.left), *annotation_types(ann.right)]
    if isinstance(ann, cst.Subscript) and last_name(ann.value) in ("Optional", "Union", "Annotated") \
            and all(isinstance(el.slice, cst.Index) for el in ann.slice):
        members = ann.slice[:1] if last_name(ann.value) == "Annotated" else ann.slice  # `Annotated[T, meta]`: T
        return [t for el in members for t in annotation_types(el.slice.value)]
    return [] if isinstance(ann, cst.Name) and ann.value == "None" else [ann]


# A type that may hold prompt text or messages: text itself, the untyped, containers, and classes named for text.
_TEXT_TYPES = frozenset({"str", "Any", "object", "LiteralString", "Template", "bytes", "Markup", "SafeString", "SafeText"})
_WRAPPERS = frozenset({"Optional", "Union", "Annotated"})
_TEXT_CLASS = re.compile(r"(?i)prompt|message|instruction|content|text|template|part|block|param|turn|chat|context|"
                         r"input|query|request|system|str")
_CONTAINERS = frozenset({*_SEQUENCES, "dict", "Dict", "Mapping", "MutableMapping", "MutableSequence", "Iterator",
                         "Generator", "AsyncIterator", "AsyncGenerator", "Union", "Awaitable", "Coroutine"})


_TOKEN_COUNT = re.compile(r"(?i)^((count|num|get_num)_?(\w+_)?tokens(_from_\w+)?|\w*token_count)$")
_TIMER = re.compile(r"^(monotonic|perf_counter)(_ns)?$")
_DEADLINE_KEYWORD = re.compile(r"(?i)deadline|timeout|expir|until|ttl|_at$")
_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide)


def sizing_argument(arg: cst.Arg) -> bool:
    """``arg`` sizes or times what a call returns rather than being its text: a token count
    (``get_code_message(count_prompt_tokens(messages))``, ``max_tokens - count_tokens(h)``: the code context
    under a budget, mentat), or a monotonic-clock reading given as a deadline or timeout keyword
    (``make_finish_tool(deadline_at=monotonic() + s if s else None)``, skyvern). Asked only of a call whose body
    is not seen and whose name makes no text (issue 11); ``len(h)`` or an elapsed time may be written out."""
    e = arg.value
    if _reading(e, _TOKEN_COUNT):
        return True
    return arg.keyword is not None and bool(_DEADLINE_KEYWORD.search(arg.keyword.value)) and _reading(e, _TIMER)


def _reading(e: cst.BaseExpression, calls: re.Pattern) -> bool:
    """``e`` is a call named by ``calls``, or a sum, difference, scaling or conditional of one with numbers and
    names (``budget - count_tokens(h)``, ``monotonic() + s if s is not None else None``)."""
    if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, _ARITHMETIC):
        return (_reading(e.left, calls) or _reading(e.right, calls)) and all(
            _reading(x, calls) or isinstance(x, (cst.Integer, cst.Float, cst.Name, cst.Attribute)) for x in (e.left, e.right))
    if isinstance(e, cst.IfExp):
        return any(_reading(x, calls) for x in (e.body, e.orelse)) and all(
            _reading(x, calls) or isinstance(x, cst.Name) and x.value == "None" for x in (e.body, e.orelse))
    while isinstance(e, cst.Await):
        e = e.expression
    return isinstance(e, cst.Call) and bool(calls.match(last_name(e.func) or ""))


def mapping_iterated(comp: cst.DictComp) -> cst.BaseExpression | None:
    """``m`` when ``comp`` iterates only ``m.items()`` / ``m.keys()`` (also through ``list(...)`` or a slice),
    keyed by the loop's key; None otherwise."""
    if comp.for_in.inner_for_in is not None:
        return None
    it = comp.for_in.iter
    while isinstance(it, cst.Subscript) or isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "list" and it.args:
        it = it.value if isinstance(it, cst.Subscript) else it.args[0].value
    if not (isinstance(it, cst.Call) and isinstance(it.func, cst.Attribute) and it.func.attr.value in ("items", "keys") and not it.args):
        return None
    target = comp.for_in.target
    key = target.elements[0].value if isinstance(target, cst.Tuple) and target.elements else target
    if not (isinstance(key, cst.Name) and isinstance(comp.key, cst.Name) and comp.key.value == key.value):
        return None
    return it.func.value


def caller_mapping(index, e: cst.BaseExpression, scope, depth: int = 0) -> bool:
    """``e`` is a parameter, or a field of one (``schema.get("properties") or {}``, ``body["properties"]``): a
    mapping the caller built, in the order it was built (a schema), not one built here from a set (``index``: the
    module's :class:`~promptcache.lint.index.ModuleIndex`, ``scope`` where ``e`` is read)."""
    while isinstance(e, cst.BooleanOperation):
        e = e.left  # `props or {}`
    if isinstance(e, cst.Call) and isinstance(e.func, cst.Attribute) and e.func.attr.value == "get":
        e = e.func.value
    elif isinstance(e, cst.Subscript):
        e = e.value
    if not isinstance(e, cst.Name) or depth > 3:
        return False
    bindings = index.lookup(e.value, scope)[1]
    return bool(bindings) and all(b.kind == "param" or b.kind == "assign" and b.value is not None
                                  and caller_mapping(index, b.value, b.scope, depth + 1) for b in bindings)


_HISTORY_NAME = re.compile(r"(?i)^_?(messages|msgs|history|chat_history|message_history|conversation|turns)$")


def sent_history(body: cst.CSTNode, history: cst.BaseExpression) -> bool:
    """``history`` (a name or ``self.attr`` named as the conversation) is sent from ``body``: spread into a list
    (``*history``) or given as ``messages=`` / ``input=`` / ``contents=``; not an inbox that is only counted."""
    if not _HISTORY_NAME.match(last_name(history)):
        return False
    def same(x: cst.CSTNode) -> bool:
        return isinstance(x, type(history)) and last_name(x) == last_name(history) and (
            not isinstance(x, cst.Attribute) or last_name(x.value) == last_name(history.value))
    return any(isinstance(n, cst.StarredElement) and same(n.value) or isinstance(n, cst.Arg) and n.keyword is not None
               and n.keyword.value in ("messages", "input", "contents") and same(n.value)
               for n in descendants(body, (cst.StarredElement, cst.Arg)))


def returns_not_text(func: cst.CSTNode) -> bool:
    """``func`` is annotated to return neither text nor a container of it (``-> LLMAPIHandler``, ``-> bool``): a
    function named for a prompt that returns a handler or a flag (skyvern's ``resolve_prompt_type_handler``; issue
    11) builds no prompt. ``-> str``, ``-> list[Message]``, ``-> ChatPromptTemplate`` and no annotation may."""
    ann = func.returns.annotation if isinstance(func, cst.FunctionDef) and func.returns is not None else None
    sides = annotation_types(ann) if ann is not None else []
    return bool(sides) and not any(_may_be_text(x) for x in sides)


def returns_scored(func: cst.CSTNode) -> bool:
    """``func`` is annotated to return a sequence of tuples with a float (``-> List[Tuple[dict, float, dict]]``):
    ranked search results with their scores, not tool definitions or messages, which an SDK never takes as tuples."""
    ann = func.returns.annotation if isinstance(func, cst.FunctionDef) and func.returns is not None else None
    return any(isinstance(x, cst.Subscript) and last_name(x.value) in _SEQUENCES - {"tuple", "Tuple"}
               and any(isinstance(el.slice, cst.Index) and isinstance(el.slice.value, cst.Subscript)
                       and last_name(el.slice.value.value) in ("tuple", "Tuple")
                       and any(isinstance(t.slice, cst.Index) and last_name(t.slice.value) == "float"  # a score
                               for t in el.slice.value.slice) for el in x.slice)
               for x in (annotation_types(ann) if ann is not None else []))


def _may_be_text(ann: cst.BaseExpression) -> bool:
    """``ann`` may hold text: a text type, a container, a class named for text, or a wrapper of one
    (``typing.Optional[str]``, ``Annotated[str, ...]``: the first type counts); unknown shapes may."""
    if isinstance(ann, cst.Subscript):
        head = last_name(ann.value)
        if head in _WRAPPERS:
            types = [el.slice.value for el in ann.slice if isinstance(el.slice, cst.Index)]
            return any(_may_be_text(t) for t in (types[:1] if head == "Annotated" else types)) or not types
        return head in _CONTAINERS or _may_be_text(ann.value)
    name = last_name(ann)
    return not name or name in _TEXT_TYPES or name in _CONTAINERS or bool(_TEXT_CLASS.search(name))


def _setting_type(ann: cst.BaseExpression) -> bool:
    sides = annotation_types(ann)  # a string annotation: "type[BaseModel] | None" (gptme; issue 11)
    return bool(sides) and all(_class_type(x) for x in sides)


def _class_type(ann: cst.BaseExpression) -> bool:
    if isinstance(ann, cst.Name):
        return ann.value in _CLASS_TYPES
    if isinstance(ann, cst.Attribute):
        return ann.attr.value in _CLASS_TYPES
    if isinstance(ann, cst.Subscript):
        head = last_name(ann.value)
        if head in _CLASS_TYPES:
            return True
        if head in _SEQUENCES and len(ann.slice) == 1 and isinstance(ann.slice[0].slice, cst.Index):
            return _setting_type(ann.slice[0].slice.value)
    return False


def imports_code(b: Binding) -> bool:
    """An import of a module (``import locale``), of a class (``from babel import Locale``) or from the standard
    library (``from datetime import timezone``), not of a value such as ``flask_login.current_user``."""
    if isinstance(b.node, cst.Import):
        return True
    qualified = b.qualified or ""
    if is_standard_library(qualified):
        return True  # `from datetime import timezone`: the standard library holds code, not a user's data (letta)
    last = qualified.rsplit(".", 1)[-1]
    return last[:1].isupper() and not last.isupper()


def literal_key(stmt: cst.CSTNode) -> bool:
    """``d["title"] = ...``: a key written in the source adds keys in program order, not the data's
    (``schema["title"] = name`` on a pydantic-generated schema, pydantic-ai; issue 11)."""
    targets = [t.target for t in stmt.targets] if isinstance(stmt, cst.Assign) else []
    return bool(targets) and all(
        isinstance(t, cst.Subscript) and len(t.slice) == 1 and isinstance(t.slice[0].slice, cst.Index)
        and isinstance(t.slice[0].slice.value, cst.SimpleString) for t in targets)


def constructor_call(func: cst.BaseExpression) -> bool:
    """A call of a class by its CamelCase name (``Part(...)``, ``messages.ModelRequest(...)``,
    ``RunContext[Deps](...)``), not ``dict``."""
    if isinstance(func, cst.Subscript):
        func = func.value
    name = last_name(func).lstrip("_")
    return name[:1].isupper() and not name.isupper()


def guard_flag(e: cst.IfExp) -> tuple[str, cst.BaseExpression] | None:
    """``(flag, arm)`` for ``a if flag else b`` (arm ``a``) and ``b if not flag else a`` (arm ``a``): the arm that runs
    only when the bare name ``flag`` is true; None for any other test."""
    test = e.test
    if isinstance(test, cst.Name):
        return test.value, e.body
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) and isinstance(test.expression, cst.Name):
        return test.expression.value, e.orelse
    return None


def typed_elsewhere(index, receiver: cst.BaseExpression, scope) -> bool:
    """``receiver`` is a parameter annotated with a class that is no MCP session, client or server
    (Langchain-Chatchat's ``_api: ApiRequest``, its own HTTP API's tool registry), or ``self.conn`` set only from
    such a parameter (``def __init__(self, conn: Connection): self.conn = conn``, newcomer of stop 36): its
    ``list_tools()`` is not an MCP listing (issue 11, blind set 17)."""
    if isinstance(receiver, cst.Attribute) and isinstance(receiver.value, cst.Name) and scope.cls is not None \
            and receiver.value.value == scope.self_name:
        held = scope.cls.attrs.get(receiver.attr.value, [])
        return bool(held) and all(b.kind == "assign" and isinstance(b.value, cst.Name) and typed_elsewhere(index, b.value, b.scope)
                                  for b in held)
    bindings = index.lookup(receiver.value, scope)[1] if isinstance(receiver, cst.Name) else []
    notes = [b.node.annotation for b in bindings if b.kind == "param" and isinstance(b.node, cst.Param)]
    if len(notes) != 1 or notes[0] is None or len(bindings) != 1:
        return False
    named = index.qualified(notes[0].annotation, scope) or ""
    if not named or named.split(".", 1)[0] in ("typing", "typing_extensions", "collections", "abc") or \
            named in ("object", "Any", "Protocol"):
        return False  # `session: Any`: no evidence either way
    return "mcp" not in named.lower() and not named.endswith(("Session", "Client", "Server", "Group"))


__all__ = ["PROMPT_FIELD", "PROMPT_GETTER", "caller_mapping", "config_param", "mapping_iterated", "sent_history", "sizing_argument", "annotation_types", "returns_scored", "constructor_call", "guard_flag", "imports_code", "literal_key",
           "class_annotation", "handle_annotation", "typed_elsewhere"]
