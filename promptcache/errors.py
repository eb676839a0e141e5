"""The errors of the prompt builder: each names the layer or item at fault and the fix.

Two families, both :class:`ValueError` subclasses so callers that validate
input with ``except ValueError`` keep working:

- :class:`PromptError`: the input cannot be built into a prompt at all (a tool
  without a name, two tools with one name, a schema that is not JSON, history
  messages in an impossible role order). The builder raises it at the call
  that received the bad item; nothing half-built is returned.
- :class:`PrefixStabilityError`: the input could be sent, but it would break
  the provider's prompt cache (architecture doc, "The prompt model": stable
  layers first, the request's facts last). Subclasses say why:
  :class:`VolatileValueError` (a timestamp or id in a stable layer),
  :class:`HistoryRewriteError` (an already-sent message edited or removed),
  :class:`WhitespaceDriftError` (one layer built with two different
  whitespace forms in one process), and the client wrappers' guard raises the
  base class with the :class:`~promptcache.misses.guard.Divergence` attached.

:class:`PrefixStabilityWarning` is what the client wrappers issue instead of
raising when their guard runs in ``"warn"`` mode; :class:`RecordingWarning`
what they issue when a response came back but could not be recorded.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "DEVELOPER_WARNINGS", "HistoryRewriteError", "PrefixStabilityError", "PrefixStabilityWarning", "PromptError", "RecordingWarning",
    "VolatileValueError", "WhitespaceDriftError",
]


DEVELOPER_WARNINGS = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)
"""Warning categories Python's default filters hide from users (Python docs, "Default Warning Filter"). Code that
records warnings under ``simplefilter("always")`` to show them catches these too (an unclosed socket of other
code that the garbage collector happens to finalise then): the CLI and the recording proxy leave them out."""


class PromptError(ValueError):
    """Input the builder cannot turn into a prompt.

    Attributes:
        item: where the problem is, e.g. ``tools[2] 'search'`` or ``history[3]``.
        fix: what to do about it (also part of the message).
    """

    def __init__(self, item: str, problem: str, fix: str = "") -> None:
        self.item, self.problem, self.fix = item, problem, fix
        super().__init__(f"{item}: {problem}" + (f"; {fix}" if fix else ""))


class PrefixStabilityError(ValueError):
    """The prompt would break the prompt cache's prefix; the message names the layer and the fix.

    Attributes:
        layer: the prompt layer at fault (``tools``, ``system``, ``documents``,
            ``examples``, ``history``, ``turn``).
        path: where inside the layer (``system``, ``documents['handbook']``,
            ``history[3]``), or ``""``.
        fix: what to do about it (also part of the message).
        divergence: the guard's :class:`~promptcache.misses.guard.Divergence` when the
            error comes from the client wrappers' runtime guard, else ``None``.
    """

    def __init__(self, layer: str, problem: str, fix: str = "", *, path: str = "",
                 divergence: Any = None) -> None:
        self.layer, self.path, self.problem, self.fix, self.divergence = layer, path, problem, fix, divergence
        where = f"{layer} layer" + (f" ({path})" if path and path != layer else "")
        super().__init__(f"{where}: {problem}" + (f". Fix: {fix}" if fix else ""))


class VolatileValueError(PrefixStabilityError):
    """A value that changes per request (a timestamp, a UUID, a request id) in a stable layer.

    Attributes:
        value: the offending text; ``kind``: its :mod:`promptcache.prompt.volatile` kind.
    """

    def __init__(self, layer: str, problem: str, fix: str, *, path: str, value: str, kind: str) -> None:
        self.value, self.kind = value, kind
        super().__init__(layer, problem, fix, path=path)


class HistoryRewriteError(PrefixStabilityError):
    """An already-sent history message was edited, removed or reordered.

    Attributes:
        index: the position of the first rewritten message in the conversation log.
    """

    def __init__(self, problem: str, fix: str, *, index: int, path: str | None = None) -> None:
        self.index = index
        super().__init__("history", problem, fix, path=path or f"history[{index}]")


class WhitespaceDriftError(PrefixStabilityError):
    """A stable layer equals one built earlier in this process except for whitespace."""


class PrefixStabilityWarning(UserWarning):
    """The client wrappers' guard found an unexpected prefix divergence (guard mode ``"warn"``)."""


class RecordingWarning(UserWarning):
    """The client wrappers returned a (paid) response but could not record it: the trace line, the usage
    statistics or the conversation append failed; the message names the step and the error."""
