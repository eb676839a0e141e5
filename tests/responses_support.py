"""OpenAI Responses bodies as the real ``openai`` client sends them, captured through ``httpx2.MockTransport``.

A uniquely named module (not ``conftest``) so test files of any folder import it unambiguously. Nothing of
promptcache is mocked: the SDK builds the request, the transport only records its bytes and answers a
minimal Response object.
"""

from __future__ import annotations

import json
from typing import Any

import httpx2
import openai

from promptcache.trace.records import TraceRecord

LONG_INSTRUCTIONS = "\n\n".join(
    f"Rule {i}: you are the support agent of Example Outdoor; answer in two sentences, cite the order number, "
    f"never promise a refund before the warehouse confirms the return (section {i} of the handbook)."
    for i in range(1, 61))
"""About 2,400 tokens of stable instructions: above OpenAI's 1,024-token minimum."""

LOOKUP_TOOL = {"type": "function", "name": "lookup_order", "description": "Find an order by its number.",
               "parameters": {"type": "object", "properties": {"order": {"type": "string"}}, "required": ["order"]},
               "strict": False}


def reply(response_id: str = "resp_1", text: str = "It shipped on Monday.", usage: dict | None = None) -> dict:
    """A minimal completed Response object (``openai/types/responses/response.py``) with one message."""
    return {"id": response_id, "object": "response", "created_at": 1, "model": "gpt-4.1-mini", "status": "completed",
            "output": [{"id": f"msg_{response_id}", "type": "message", "role": "assistant", "status": "completed",
                        "content": [{"type": "output_text", "text": text, "annotations": []}]}],
            "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
            "usage": usage or {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                               "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                               "total_tokens": 15}}


def capture(answer: dict | None = None, **create: Any) -> tuple[bytes, Any]:
    """``(body bytes, Response)`` of ``openai.OpenAI().responses.create(**create)`` answered with ``answer``."""
    seen: list[bytes] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request.content)
        return httpx2.Response(200, json=answer or reply())

    client = openai.OpenAI(api_key="test", http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
                           max_retries=0)
    response = client.responses.create(**create)
    return seen[0], response


def sent(**create: Any) -> dict:
    """The JSON body the real client sends for ``responses.create(**create)`` (key order kept)."""
    return json.loads(capture(**create)[0])


def record(t: float, session: str, answer: dict | None = None, **create: Any) -> TraceRecord:
    """A trace record of one ``responses.create`` call: the wire bytes, the usage and the Response's id and output."""
    content, response = capture(answer, **create)
    data = response.model_dump(mode="json", exclude_none=True)
    return TraceRecord.from_wire(t, "openai.responses", session, content, usage=data.get("usage"),
                                 response={"id": data["id"], "output": data["output"]})


CALL_OUTPUT = {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "lookup_order",
               "arguments": '{"order": "1042"}', "status": "completed"}


def agent_trace() -> list[TraceRecord]:
    """Four recorded ``responses.create`` calls (long instructions, one function tool):

    0. ``s1``: "Where is order 1042?"; the reply calls ``lookup_order`` (``resp_a``);
    1. ``s1``: chained onto ``resp_a`` (``previous_response_id``), sends the call's output;
    2. ``s2``: a new session whose instructions differ in one word of rule 30;
    3. ``s3``: chained onto ``resp_gone``, a response the trace does not hold.
    """
    common = {"model": "gpt-4.1-mini", "instructions": LONG_INSTRUCTIONS, "tools": [LOOKUP_TOOL]}
    calling = {**reply("resp_a"), "output": [CALL_OUTPUT]}
    return [
        record(0.0, "s1", calling, input="Where is order 1042?", **common),
        record(4.5, "s1", reply("resp_b", "It shipped on Monday."), previous_response_id="resp_a",
               input=[{"type": "function_call_output", "call_id": "call_1", "output": '{"status": "shipped"}'}],
               **common),
        record(9.0, "s2", reply("resp_c", "Hello!"), input="Hello",
               **{**common, "instructions": LONG_INSTRUCTIONS.replace("Rule 30: you are", "Rule 30: you were")}),
        record(12.0, "s3", reply("resp_d"), previous_response_id="resp_gone", input="Hi again", **common),
    ]
