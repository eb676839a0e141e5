"""``previous_response_id`` over a trace: the whole input the Responses API assembles for a chained request.

A Responses request may send only its new input and name the earlier response
(``previous_response_id``); the API then puts that response's own input and
its output items before the new input, so the cache sees one growing prefix.
The new request's ``instructions`` replace the earlier ones ("the instructions
from a previous response will not be carried over", ``openai`` 3.57,
``openai/types/responses/response_create_params.py``), and tools are per
request. The trace holds an earlier response when its record carries
``response`` (``{"id", "output"}``, :class:`~promptcache.trace.records.TraceRecord`).

:class:`ChainResolver` reads the records in trace order and gives each chained
one the body the API assembles: ``input`` = the earlier request's full input
(itself resolved) + the earlier output + its own input, ``previous_response_id``
removed. A chained request whose earlier response is not in the trace (not
recorded, recorded after it, or sent with ``store: false``, which the API keeps
no copy of) raises :class:`UnknownPrefixError`: its prefix is unknown, and
nothing is guessed.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from promptcache.providers.apis import OPENAI_RESPONSES, sdk_ordered
from promptcache.trace.records import TraceRecord

__all__ = ["ChainResolver", "UnknownPrefixError", "input_items"]


class UnknownPrefixError(ValueError):
    """A request chains onto a response the trace does not hold: the chained prefix is unknown.

    Attributes:
        response_id: the ``previous_response_id`` that could not be resolved.
    """

    def __init__(self, response_id: str, why: str) -> None:
        self.response_id = response_id
        super().__init__(f"previous_response_id {response_id!r} {why}: the chained prefix (that response's input "
                         "and output) is unknown, so the request is not read as sent")


def input_items(body: Mapping[str, Any]) -> list[Any]:
    """A Responses body's ``input`` as a list of items (a string input is one user message)."""
    data = body.get("input")
    if isinstance(data, str):
        return [{"role": "user", "content": data}]
    return list(data) if isinstance(data, list) else []


class ChainResolver:
    """Remembers the responses of a trace (or a server) and expands requests that chain onto them.

    Args:
        max_responses: how many responses are kept (oldest dropped first); None: all of them.
    """

    def __init__(self, max_responses: int | None = None) -> None:
        self.max_responses = max_responses
        self.known: OrderedDict[str, tuple[Any, ...]] = OrderedDict()
        self.unstored: set[str] = set()

    def expanded(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """``body`` with its chain resolved (a new dict; a plain copy when it chains onto nothing).

        Raises:
            UnknownPrefixError: ``previous_response_id`` names a response that is not known.
        """
        previous = body.get("previous_response_id")
        if previous is None or not isinstance(previous, str):
            return dict(body)
        chain = self.known.get(previous)
        if chain is None:
            why = ("was sent with store: false, so the API keeps no copy to chain onto" if previous in self.unstored
                   else "names a response that is not in the trace (no earlier record carries it in 'response')")
            raise UnknownPrefixError(previous, why)
        self.known.move_to_end(previous)
        out = {key: value for key, value in body.items() if key != "previous_response_id"}
        out["input"] = [*chain, *input_items(body)]
        return sdk_ordered(OPENAI_RESPONSES, out)

    def remember(self, response_id: str, body: Mapping[str, Any], output: list[Any]) -> None:
        """Keep ``response_id``: the (resolved) request ``body``'s input and the response's ``output`` items,
        unless the request was sent with ``store: false``."""
        if body.get("store") is False:
            self.unstored.add(response_id)
            return
        self.known[response_id] = (*input_items(body), *output)
        self.known.move_to_end(response_id)
        while self.max_responses is not None and len(self.known) > self.max_responses:
            self.known.popitem(last=False)

    def resolve(self, record: TraceRecord) -> TraceRecord:
        """The record as the API reads it (:meth:`expanded`), and its response remembered when it carries one.

        Records of other APIs are returned unchanged.

        Raises:
            UnknownPrefixError: the record chains onto a response the trace does not hold (before it).
        """
        if record.api != OPENAI_RESPONSES:
            return record
        body = self.expanded(record.body)
        if "previous_response_id" in record.body:
            record = dataclasses.replace(record, body=body, body_json=None, continues=record.body["previous_response_id"])
        response = record.response
        if isinstance(response, Mapping) and isinstance(response.get("id"), str):
            self.remember(response["id"], body, list(response.get("output") or []))
        return record
