"""Direct tests of the public pieces of promptcache.trace.shape the server uses on live requests:
cache_control_issue (one marker's shape) and tool_issues (a request's tool definitions), each branch with its
exact message and path."""

from __future__ import annotations

import pytest

from promptcache.providers.apis import ANTHROPIC_MESSAGES, OPENAI_CHAT
from promptcache.trace.shape import TraceIssue, cache_control_issue, tool_issues, validate_body

SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}}
CC_FIX = "use {'type': 'ephemeral'} with optional ttl '5m' or '1h'"
OPENAI_SHAPE = "{'type': 'function', 'function': {'name': ..., 'parameters': {...}}}"


def anthropic_tool(name: object = "search", **extra: object) -> dict:
    return {"name": name, "input_schema": SCHEMA, **extra}


def openai_tool(name: object = "search", **function: object) -> dict:
    return {"type": "function", "function": {"name": name, "parameters": SCHEMA, **function}}


def found(issues: list[TraceIssue]) -> list[tuple[str, str]]:
    return [(issue.path, issue.message) for issue in issues]


# --- cache_control_issue -------------------------------------------------------------------------------------

@pytest.mark.parametrize("cc", [{"type": "ephemeral"}, {"type": "ephemeral", "ttl": "5m"},
                                {"type": "ephemeral", "ttl": "1h"}])
def test_a_well_formed_marker_has_no_issue(cc: dict) -> None:
    assert cache_control_issue(cc) is None


@pytest.mark.parametrize(("cc", "shown"), [
    ("ephemeral", "'ephemeral'"),                                            # not an object
    (None, "None"),
    ({}, "{}"),                                                              # no type
    ({"type": "persistent"}, "{'type': 'persistent'}"),                      # unknown type
    ({"type": "ephemeral", "ttl": "10m"}, "{'type': 'ephemeral', 'ttl': '10m'}"),  # unknown TTL
    ({"type": "ephemeral", "ttl": None}, "{'type': 'ephemeral', 'ttl': None}"),
    ({"type": "ephemeral", "scope": "global"}, "{'type': 'ephemeral', 'scope': 'global'}"),  # extra key
])
def test_a_malformed_marker_is_named_with_the_fix(cc: object, shown: str) -> None:
    assert cache_control_issue(cc) == f"bad cache_control {shown}; {CC_FIX}"


# --- tool_issues: Anthropic ----------------------------------------------------------------------------------

def test_valid_anthropic_tools_have_no_issue_and_extra_keys_are_allowed() -> None:
    tools = [anthropic_tool("search", description="Find."), anthropic_tool("lookup-order_2", type="custom"),
             anthropic_tool("fetch", cache_control={"type": "ephemeral", "ttl": "1h"})]
    assert tool_issues(ANTHROPIC_MESSAGES, tools) == []
    assert tool_issues(ANTHROPIC_MESSAGES, []) == []


def test_anthropic_server_tools_need_no_name_check_or_schema() -> None:
    assert tool_issues(ANTHROPIC_MESSAGES, [{"type": "web_search_20250305", "name": "web_search"},
                                            {"type": "bash_20250124"}]) == []


def test_anthropic_tools_that_are_not_a_list() -> None:
    assert found(tool_issues(ANTHROPIC_MESSAGES, {"name": "search"})) == [
        ("tools", "tools must be a list of tool definitions")]


def test_an_anthropic_tool_that_is_not_an_object() -> None:
    assert found(tool_issues(ANTHROPIC_MESSAGES, [anthropic_tool(), "search"])) == [
        ("tools[1]", "a tool must be an object with 'name' and 'input_schema', not str")]


@pytest.mark.parametrize(("name", "shown"), [(None, "None"), ("", "''"), ("web search", "'web search'"),
                                             (7, "7"), ("n" * 129, repr("n" * 129))])
def test_an_anthropic_tool_name_must_match_the_pattern(name: object, shown: str) -> None:
    tool = {"input_schema": SCHEMA} if name is None else anthropic_tool(name)
    assert found(tool_issues(ANTHROPIC_MESSAGES, [tool])) == [
        ("tools[0]", f"tool name {shown} must match ^[a-zA-Z0-9_-]{{1,128}}$")]


def test_a_128_character_anthropic_name_is_valid() -> None:
    assert tool_issues(ANTHROPIC_MESSAGES, [anthropic_tool("n" * 128)]) == []


def test_a_duplicate_anthropic_tool_name() -> None:
    assert found(tool_issues(ANTHROPIC_MESSAGES, [anthropic_tool(), anthropic_tool("other"), anthropic_tool()])) == [
        ("tools[2]", "duplicate tool name 'search'")]


def test_an_anthropic_tool_without_input_schema() -> None:
    assert found(tool_issues(ANTHROPIC_MESSAGES, [{"name": "search", "description": "Find."}])) == [
        ("tools[0]", "input_schema of 'search' is required: a JSON schema object such as "
                     "{'type': 'object', 'properties': {}}")]


@pytest.mark.parametrize("schema", [{"type": "array"}, {"properties": {}}, "object", None])
def test_an_anthropic_input_schema_must_be_an_object_schema(schema: object) -> None:
    assert found(tool_issues(ANTHROPIC_MESSAGES, [{"name": "search", "input_schema": schema}])) == [
        ("tools[0]", "input_schema of 'search' must be an object schema")]


def test_an_anthropic_tool_cache_control_is_checked_in_order() -> None:
    tools = [anthropic_tool("a", cache_control={"type": "ephemeral", "ttl": "30m"}),
             anthropic_tool("b", cache_control={"type": "ephemeral"}),               # 5m
             anthropic_tool("c", cache_control={"type": "ephemeral", "ttl": "1h"})]  # 1h after 5m
    assert found(tool_issues(ANTHROPIC_MESSAGES, tools)) == [
        ("tools[0].cache_control", f"bad cache_control {{'type': 'ephemeral', 'ttl': '30m'}}; {CC_FIX}"),
        ("tools[2].cache_control", "a ttl='1h' breakpoint follows a ttl='5m' one at tools.1.cache_control; "
                                   "cache_control blocks with a longer TTL must come before shorter ones (put the 1h "
                                   "markers on the earlier, more stable blocks)")]


def test_a_server_tool_cache_control_is_checked_too() -> None:
    assert found(tool_issues(ANTHROPIC_MESSAGES, [{"type": "bash_20250124", "name": "bash",
                                                   "cache_control": {"type": "auto"}}])) == [
        ("tools[0].cache_control", f"bad cache_control {{'type': 'auto'}}; {CC_FIX}")]


def test_the_path_prefix_is_the_callers() -> None:
    issues = tool_issues(ANTHROPIC_MESSAGES, [anthropic_tool(), anthropic_tool()], path="body.tools")
    assert found(issues) == [("body.tools[1]", "duplicate tool name 'search'")]
    assert str(issues[0]) == "body.tools[1]: duplicate tool name 'search'"


# --- tool_issues: OpenAI -------------------------------------------------------------------------------------

def test_valid_openai_tools_have_no_issue() -> None:
    tools = [openai_tool("search", description="Find.", strict=True), {"type": "function", "function": {"name": "ping"}}]
    assert tool_issues(OPENAI_CHAT, tools) == []


def test_openai_extra_keys_pass_here_but_not_in_the_trace_body_checks() -> None:
    tool = {**openai_tool(), "cache_hint": 1}
    tool["function"] = {**tool["function"], "examples": []}
    assert tool_issues(OPENAI_CHAT, [tool]) == []
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}], "tools": [tool]}
    assert found(validate_body(OPENAI_CHAT, body)) == [
        ("body.tools[0]", f"unknown tool key(s) ['cache_hint']; a tool is {OPENAI_SHAPE}"),
        ("body.tools[0]", "unknown function key(s) ['examples']; the SDK sends name, description, parameters and "
                          "strict")]


def test_openai_tools_that_are_not_a_list() -> None:
    assert found(tool_issues(OPENAI_CHAT, "search")) == [("tools", "tools must be a list of tool definitions")]


def test_an_openai_tool_that_is_not_an_object() -> None:
    assert found(tool_issues(OPENAI_CHAT, [3])) == [("tools[0]", f"a tool must be an object {OPENAI_SHAPE}, not int")]


@pytest.mark.parametrize(("tool", "shown"), [
    ({"function": {"name": "search"}}, "None"),
    ({"type": "custom", "name": "search"}, "'custom'"),
    ({"name": "search", "input_schema": SCHEMA}, "None"),  # an Anthropic-shaped tool sent to OpenAI
])
def test_an_openai_tool_type_must_be_function(tool: dict, shown: str) -> None:
    assert found(tool_issues(OPENAI_CHAT, [tool])) == [
        ("tools[0]", f"type must be 'function' (got {shown}); a tool is {OPENAI_SHAPE}")]


@pytest.mark.parametrize(("function", "shown"), [(None, "None"), ("search", "'search'"), ([], "[]")])
def test_an_openai_tool_needs_a_function_object(function: object, shown: str) -> None:
    tool = {"type": "function"} if function is None else {"type": "function", "function": function}
    assert found(tool_issues(OPENAI_CHAT, [tool])) == [
        ("tools[0]", "'function' is required: an object with 'name' and optional 'description' and "
                     f"'parameters' (got {shown})")]


@pytest.mark.parametrize(("name", "shown"), [(None, "None"), ("a.b", "'a.b'"), ("n" * 65, repr("n" * 65))])
def test_an_openai_tool_name_must_match_the_pattern(name: object, shown: str) -> None:
    assert found(tool_issues(OPENAI_CHAT, [openai_tool(name)])) == [
        ("tools[0]", f"tool name {shown} must match ^[a-zA-Z0-9_-]{{1,64}}$")]


def test_a_duplicate_openai_tool_name() -> None:
    assert found(tool_issues(OPENAI_CHAT, [openai_tool(), openai_tool()])) == [
        ("tools[1]", "duplicate tool name 'search'")]


@pytest.mark.parametrize("parameters", [{"type": "string"}, {}, []])
def test_openai_parameters_must_be_an_object_schema(parameters: object) -> None:
    assert found(tool_issues(OPENAI_CHAT, [openai_tool(parameters=parameters)])) == [
        ("tools[0]", "parameters of 'search' must be an object schema")]


def test_each_bad_tool_is_reported_and_the_rest_still_checked() -> None:
    tools = [openai_tool("a"), "b", openai_tool("a"), openai_tool("c", parameters={"type": "array"})]
    assert found(tool_issues(OPENAI_CHAT, tools)) == [
        ("tools[1]", f"a tool must be an object {OPENAI_SHAPE}, not str"),
        ("tools[2]", "duplicate tool name 'a'"),
        ("tools[3]", "parameters of 'c' must be an object schema")]


def test_an_unknown_api() -> None:
    assert found(tool_issues("openai.assistants", [openai_tool()])) == [("api", "unknown api 'openai.assistants'")]


def test_a_chat_shaped_tool_in_a_responses_body_lacks_the_flat_name() -> None:
    assert found(tool_issues("openai.responses", [openai_tool()])) == [
        ("tools[0].name", "a function tool needs a string 'name'")]
