"""The engine-loop thread under faults: a failing command is contained, a dead loop answers 503 and wakes
every waiter (nothing waits forever)."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from fastapi.testclient import TestClient
from server_support import tiny_llama

from local_backend import LocalEngine
from local_backend.server import create_app
from local_backend.server.engine_loop import EngineLoop
from local_backend.server.errors import APIError
from local_backend.tokenizer import ChatMLTokenizer

WAIT_S = 30.0
"""How long a call may take before the test calls it a hang (a pass answers in well under a second)."""

CHAT = {"model": "m", "max_tokens": 2, "messages": [{"role": "user", "content": "hi"}]}


class FaultyEngine(LocalEngine):
    """A real engine with switchable faults standing in for bugs: ``abort_request`` raises, or the loop's own
    ``has_unfinished_requests`` check raises (which kills the engine-loop thread)."""

    abort_fails = False
    loop_check_fails = False

    def abort_request(self, request_id: str) -> bool:
        if self.abort_fails:
            raise RuntimeError("simulated abort bug")
        return super().abort_request(request_id)

    def has_unfinished_requests(self) -> bool:
        if self.loop_check_fails:
            raise RuntimeError("simulated engine-loop bug")
        return super().has_unfinished_requests()


def faulty_engine() -> FaultyEngine:
    return FaultyEngine(tiny_llama(), tokenizer=ChatMLTokenizer(), num_blocks=256)


def within(seconds: float, fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` on a daemon thread; fail (not hang) if it has not returned in ``seconds``."""
    result: dict[str, object] = {}

    def run() -> None:
        try:
            result["value"] = fn(*args, **kwargs)
        except BaseException as exc:  # handed back to the test
            result["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail(f"{getattr(fn, '__name__', fn)} did not return within {seconds:.0f} s: it waits on a dead loop")
    if "error" in result:
        raise result["error"]
    return result["value"]


def test_a_failing_command_is_logged_and_the_loop_keeps_serving():
    engine = faulty_engine()
    loop = EngineLoop(engine)
    loop.start()
    try:
        async def scenario() -> dict:
            engine.abort_fails = True
            loop.abort("no-such-request")  # raises on the engine thread
            stats = await asyncio.wait_for(loop.call(engine.stats), WAIT_S)
            engine.abort_fails = False
            return stats

        assert within(WAIT_S, asyncio.run, scenario())["requests"]["aborted"] == 0
        assert loop.alive
    finally:
        loop.stop()


def test_a_dead_engine_loop_fails_requests_in_flight_and_answers_503():
    engine = faulty_engine()
    with TestClient(create_app(engine)) as client:
        assert client.post("/v1/chat/completions", json=CHAT).status_code == 200
        with client.stream("POST", "/v1/chat/completions",
                           json={**CHAT, "max_tokens": 4000, "ignore_eos": True, "stream": True}) as stream:
            lines = stream.iter_lines()
            assert next(lines).startswith("data: ")
            engine.loop_check_fails = True  # the thread dies at its next check
            rest = within(WAIT_S, list, lines)
        errors = [line for line in rest if '"error"' in line]
        assert errors and "the engine loop died: RuntimeError: simulated engine-loop bug" in errors[0]
        assert [line for line in rest if line][-1] == "data: [DONE]"

        deadline = time.monotonic() + WAIT_S
        while client.get("/health").status_code != 503:
            assert time.monotonic() < deadline, "/health never reported the dead loop"
            time.sleep(0.05)
        assert "simulated engine-loop bug" in client.get("/health").json()["error"]
        for method, path, body in (("POST", "/v1/chat/completions", CHAT), ("GET", "/metrics", None),
                                   ("POST", "/v1/messages", {**CHAT, "stream": True}),
                                   ("POST", "/v1/cache/reset", None)):
            refused = within(WAIT_S, client.request, method, path, json=body)
            assert refused.status_code == 503, (path, refused.text)
            assert "engine loop is not running (RuntimeError: simulated engine-loop bug)" in refused.text
        assert within(WAIT_S, client.post, "/v1/messages", json=CHAT).json()["error"]["type"] == "overloaded_error"


def test_submit_and_call_refuse_before_start_and_after_stop():
    loop = EngineLoop(faulty_engine())

    async def refused() -> list[int]:
        statuses = []
        for attempt in (lambda: loop.submit("r", [1, 2, 3], None), lambda: loop.call(lambda: None)):
            with pytest.raises(APIError) as caught:
                result = attempt()
                if asyncio.iscoroutine(result):
                    await result
            statuses.append(caught.value.status)
        return statuses

    assert asyncio.run(refused()) == [503, 503]
    loop.start()
    loop.stop()
    assert not loop.alive and asyncio.run(refused()) == [503, 503]
