"""An append-only conversation with chunked truncation and optional cache-safe compaction.

A provider caches the prompt prefix, so the history of a conversation must
only grow: an edited, summarised or removed earlier message changes every
token after it (shared traces ``bad_summarize_each_turn``,
``bad_sliding_window``). :class:`Conversation` therefore

- only appends: ``conversation[i] = ...`` and ``del conversation[i]`` raise
  :class:`~promptcache.errors.HistoryRewriteError`, and :meth:`Conversation.sync`
  (for apps that keep their own message list) raises when an already-sent
  message differs;
- checks every message as it arrives: roles alternate, a user message first,
  every tool call answered in the very next user message;
- truncates from the oldest end **in large chunks**: when the window passes
  ``budget_tokens``, whole exchanges are dropped down to ``low_water_tokens``
  (half the budget by default), so the prefix changes once per chunk instead
  of on every turn as a sliding window does; the window always starts with a
  user message, so a tool call is never separated from its result;
- optionally compacts: with a ``compactor``, the dropped part (and the
  previous summary) is summarised once into a fixed user message at the head
  of the window, which stays byte-identical until the next compaction.

Token counts are ChatML cl100k counts of each message's OpenAI Chat rendering
(:meth:`promptcache.prompt.messages.Message.chatml_tokens`), which add up exactly to
the count of the rendered window.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from promptcache.errors import HistoryRewriteError, PromptError
from promptcache.prompt.messages import Message, Text, check_order, message_from_responses, parse_message, parse_messages
from promptcache.prompt.normalize import normalize_text

if TYPE_CHECKING:
    from promptcache.prompt.model import Prompt

__all__ = ["SUMMARY_HEADER", "Compactor", "Conversation"]

SUMMARY_HEADER = "Summary of the earlier conversation:"
"""First line of the compaction summary message."""

Compactor = Callable[[list[dict[str, Any]], "str | None"], str]
"""``compactor(dropped, previous_summary) -> summary``: ``dropped`` are the
removed messages as OpenAI Chat dicts, ``previous_summary`` the summary text
they replace (None on the first compaction)."""

_REWRITE_FIX = ("only append: add a correction as a new message; to bound the size use "
                "Conversation(budget_tokens=..., compactor=...), which truncates in large chunks")


def _where(index: Any) -> tuple[str, int]:
    """``("history[3]", 3)`` / ``("history[:-4]", 0)`` for an index or a slice."""
    if isinstance(index, slice):
        parts = ["" if v is None else str(v) for v in (index.start, index.stop)]
        text = ":".join(parts) + (f":{index.step}" if index.step is not None else "")
        return f"history[{text}]", index.start if isinstance(index.start, int) and index.start >= 0 else 0
    return f"history[{index}]", index if isinstance(index, int) else 0


def _reply_message(reply: Any) -> Message:
    """An assistant :class:`Message` from a text, a dict, or an SDK response (Anthropic Message, OpenAI chat
    completion or Responses response)."""
    if isinstance(reply, str):
        return Message("assistant", [Text(reply)])
    if isinstance(getattr(reply, "output", None), list) and hasattr(reply, "output_text"):  # openai Response
        return message_from_responses(reply.output)
    choices = getattr(reply, "choices", None)
    if choices:  # openai ChatCompletion
        reply = choices[0].message
    elif hasattr(reply, "content") and hasattr(reply, "stop_reason"):  # anthropic Message
        reply = {"role": "assistant", "content": [block.model_dump(exclude_none=True) for block in reply.content]}
    message = parse_message(reply, "reply")
    if message.role != "assistant":
        raise PromptError("reply", "the reply is not an assistant message", "pass the model's response")
    return message


class Conversation:
    """The history layer of a session: append-only, truncated in chunks, optionally compacted.

    Args:
        messages: initial messages (Anthropic or OpenAI Chat dicts, or :class:`Message`).
        budget_tokens: truncate when the window's tokens exceed this (None: never).
        low_water_tokens: truncate down to at most this many tokens (default: half the budget).
        compactor: summarise what truncation drops (see :data:`Compactor`).

    Raises:
        PromptError: bad initial messages, or ``low_water_tokens`` not below ``budget_tokens``.
    """

    def __init__(self, messages: Iterable[Any] = (), *, budget_tokens: int | None = None,
                 low_water_tokens: int | None = None, compactor: Compactor | None = None) -> None:
        if budget_tokens is not None and budget_tokens <= 0:
            raise PromptError("budget_tokens", f"must be positive, got {budget_tokens}", "pass a token budget > 0")
        low = low_water_tokens if low_water_tokens is not None else (budget_tokens // 2 if budget_tokens else None)
        if budget_tokens is not None and low is not None and not 0 <= low < budget_tokens:
            raise PromptError("low_water_tokens", f"{low} is not below the budget {budget_tokens}",
                              "truncate to well below the budget (half of it by default)")
        self.budget_tokens, self.low_water_tokens, self.compactor = budget_tokens, low, compactor
        self._log: list[Message] = []
        self._start = 0
        self._summary: Message | None = None
        self._tokens = 0
        self.truncations = 0
        """How many times the window was cut (each cut changes the prefix once)."""
        self._lock = threading.RLock()
        self.extend(messages)

    # -- reading -------------------------------------------------------------------------------
    @property
    def messages(self) -> tuple[Message, ...]:
        """The window the next request sends: the summary (if compacted), then the kept messages."""
        with self._lock:
            head = (self._summary,) if self._summary is not None else ()
            return head + tuple(self._log[self._start:])

    @property
    def log(self) -> tuple[Message, ...]:
        """Every message ever appended, truncated ones included."""
        return tuple(self._log)

    @property
    def summary(self) -> str | None:
        """The current compaction summary text, or None."""
        return self._summary.text if self._summary is not None else None

    @property
    def tokens(self) -> int:
        """ChatML tokens of the window (:attr:`messages`)."""
        return self._tokens

    @property
    def mark(self) -> tuple[int, int]:
        """``(messages appended, truncations)``: changes whenever the window does."""
        return len(self._log), self.truncations

    def __len__(self) -> int:
        return len(self.messages)

    def __iter__(self) -> Iterator[Message]:
        return iter(self.messages)

    def __getitem__(self, index: int) -> Message:
        return self.messages[index]

    def __setitem__(self, index: Any, value: Any) -> None:
        where, first = _where(index)
        raise HistoryRewriteError(f"{where} was already sent; editing it rewrites the cached prefix",
                                  _REWRITE_FIX, index=first, path=where)

    def __delitem__(self, index: Any) -> None:
        where, first = _where(index)
        raise HistoryRewriteError(f"{where} was already sent; removing it rewrites the cached prefix",
                                  _REWRITE_FIX, index=first, path=where)

    def to_anthropic(self) -> list[dict[str, Any]]:
        """The window as Anthropic message dicts (fresh copies)."""
        return [m.to_anthropic() for m in self.messages]

    def to_openai_chat(self) -> list[dict[str, Any]]:
        """The window as OpenAI Chat message dicts (fresh copies)."""
        return [d for m in self.messages for d in m.to_openai_chat()]

    # -- appending -----------------------------------------------------------------------------
    def append(self, message: Any) -> None:
        """Append one message (either provider's dict shape, an SDK response, or a :class:`Message`).

        Raises:
            PromptError: the message is malformed or breaks the role order /
                tool pairing with the last message; the conversation is unchanged.
        """
        self.extend([message])

    def extend(self, messages: Iterable[Any]) -> None:
        """Append several messages; all are checked before any is added (nothing half-appended).

        Raises:
            PromptError: as :meth:`append`, naming ``history[i]`` in log positions.
        """
        with self._lock:
            base = len(self._log)
            new = parse_messages(messages, where="history")
            if not new:
                return
            context = self._log[-1:]
            labels = [f"history[{base - len(context) + i}]" for i in range(len(context) + len(new))]
            check_order(context + new, labels=labels, first_is_start=not self._log)
            for message in new:
                self._log.append(message)
                self._tokens += message.chatml_tokens()
            self._truncate_if_needed()

    def add_user(self, text: str, context: Mapping[str, Any] | None = None) -> None:
        """Append a user message (``context`` rendered as in :meth:`PromptBuilder.user`)."""
        from promptcache.prompt.model import render_context

        self.append(Message("user", [Text(render_context(text, context))]))

    def add_assistant(self, reply: Any) -> None:
        """Append the model's reply: a text, an assistant dict, or an SDK response object."""
        self.append(_reply_message(reply))

    def record(self, prompt: Prompt, reply: Any = None) -> None:
        """Append a sent prompt's turn verbatim (context included), then the reply if given.

        Raises:
            PromptError: ``prompt`` was not built from this conversation in its
                current state (another turn was recorded meanwhile).
        """
        with self._lock:
            if prompt.conversation is not self or prompt.conversation_mark != self.mark:
                raise PromptError("record", "the prompt was not built from this conversation as it is now",
                                  "build each request from the conversation, send it, then record it once")
            sent = [] if len(prompt.history) < len(self.messages) else list(prompt.turn)  # turn already appended
            self.extend(sent + ([_reply_message(reply)] if reply is not None else []))

    def sync(self, messages: Iterable[Any]) -> None:
        """Accept the app's full message list: the part already here must be unchanged; the rest is appended.

        For apps that keep their own list of messages (a store per thread).

        Raises:
            HistoryRewriteError: an already-appended message was edited or removed
                (names the first one); nothing is appended then.
            PromptError: as :meth:`extend` for the new messages.
        """
        with self._lock:
            given = parse_messages(messages, where="history")
            for i, message in enumerate(self._log):
                if i >= len(given):
                    raise HistoryRewriteError(f"history[{i}] was already sent and is missing from the new list "
                                              "(removed or truncated by the app)", _REWRITE_FIX, index=i)
                if given[i] != message:
                    raise HistoryRewriteError(f"history[{i}] was already sent and now differs (edited, "
                                              "summarised or reordered)", _REWRITE_FIX, index=i)
            self.extend(given[len(self._log):])

    # -- truncation ----------------------------------------------------------------------------
    def _cut_points(self) -> list[int]:
        """Log indices where the window may start after a cut (always after the current start)."""
        if self.compactor is not None:  # summary (user) + an assistant message
            return [i for i in range(self._start + 1, len(self._log)) if self._log[i].role == "assistant"]
        return [i for i in range(self._start + 1, len(self._log))
                if self._log[i].role == "user" and not self._log[i].tool_results]

    def _truncate_if_needed(self) -> None:
        if self.budget_tokens is None or self._tokens <= self.budget_tokens:
            return
        points = self._cut_points()
        if not points:
            warnings.warn(f"conversation window of {self._tokens:,} tokens is over its budget of "
                          f"{self.budget_tokens:,} but has no place to cut (one exchange is larger)", stacklevel=4)
            return
        kept = sum(m.chatml_tokens() for m in self._log[self._start:])
        suffix, cut = kept, points[-1]
        sizes = {i: m.chatml_tokens() for i, m in enumerate(self._log) if i >= self._start}
        position = self._start
        for point in points:  # the earliest cut that gets down to the low-water mark
            suffix -= sum(sizes[i] for i in range(position, point))
            position = point
            if suffix <= self.low_water_tokens:
                cut = point
                break
        dropped = self._log[self._start:cut]
        if self.compactor is not None:
            previous = self.summary
            text = self.compactor([d for m in dropped for d in m.to_openai_chat()],
                                  previous[len(SUMMARY_HEADER) + 1:] if previous else None)
            self._summary = Message("user", [Text(f"{SUMMARY_HEADER}\n{normalize_text(text)}")])
        self._start = cut
        self.truncations += 1
        head = self._summary.chatml_tokens() if self._summary is not None else 0
        self._tokens = head + sum(m.chatml_tokens() for m in self._log[cut:])
