"""Progress bars for long work (``verify``, ``simulate`` of large traces, ``engine-bench``, ``lint`` of a big tree).

A bar is drawn on stderr only when stderr is a terminal (rich's ``Console.is_terminal``: a tty, or
``TTY_COMPATIBLE=1`` / ``FORCE_COLOR`` set): in a pipe, a file, CI logs or a test that parses the output
nothing is written. It is transient (erased when the work ends) and shows items done / total, the
elapsed time and an ETA (rich's estimate from the recent rate).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)

Update = Callable[..., None]
"""``update(done, total=None, note="")``: items done so far, the total when it is known or changes, a short note."""


def _nothing(done: int, total: int | None = None, note: str = "") -> None:
    return None


@contextmanager
def progress_bar(console: Console, label: str, total: int | None = None, *, unit: str = "",
                 at_least: int = 0) -> Iterator[Update]:
    """A transient progress bar on ``console`` while the block runs; yields its ``update`` callback.

    Args:
        console: the stderr console; nothing is drawn unless it is a terminal.
        label: what is being done (``"replaying"``, ``"linting"``).
        total: the number of items, when known up front (else the first ``update`` gives it; with
            ``at_least``, nothing is drawn until then).
        unit: the items' name after the count (``"requests"``, ``"files"``).
        at_least: draw nothing for fewer items than this (small work ends before a bar helps).
    """
    if not console.is_terminal or (total is not None and total < at_least):
        yield _nothing
        return
    columns = (TextColumn(label), BarColumn(), MofNCompleteColumn(), TextColumn(unit), TimeElapsedColumn(),
               TextColumn("ETA"), TimeRemainingColumn(), TextColumn("{task.description}"))
    with ExitStack() as stack:
        bar: Progress | None = None
        known = total

        def update(done: int, total: int | None = None, note: str = "") -> None:
            nonlocal bar, known
            known = total if total is not None else known
            if bar is None:  # started on the first update that shows enough work: a small run draws nothing
                if (known is None and at_least > 0) or (known is not None and known < at_least):
                    return
                bar = stack.enter_context(Progress(*columns, console=console, transient=True))
                bar.add_task("", total=known)
            bar.update(bar.task_ids[0], completed=done, total=known, description=note)

        if at_least <= 0:
            update(0, total)
        yield update
