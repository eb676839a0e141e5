"""Tables that fit the terminal: numbers whole, text wrapped, headers abbreviated, records folded when narrow.

Every command's table goes through :func:`fit_table`, in this order of preference at the console's width:

1. the table with its full headers, text columns wrapped at spaces (a word longer than its column is
   folded onto the next line, never cut to ``…``) and every other column kept on one line at its widest
   cell (rich's ``no_wrap`` and ``min_width``: a number is never wrapped or cut);
2. the same table with the short headers (``#`` for ``index``, ``TTFT`` for ``TTFT ms``...), then also
   with one space between columns instead of two;
3. one record per block: the first column as a heading, the other cells as ``header value`` pairs laid
   out in as many columns as fit (rich ``Columns``), long text cells on their own lines.

:func:`stdout_console` gives a console for the commands' stdout: the terminal's width on a terminal (or
``COLUMNS`` when set), and unbounded plain lines (no wrapping, no colour) in a pipe or a file, so
``grep`` and ``awk`` see one row per line.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rich import box
from rich.columns import Columns
from rich.console import Console, Group, RenderableType
from rich.measure import Measurement
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

UNBOUNDED = 10_000
"""The width of a console whose file is not a terminal: lines are never wrapped."""

TEXT_FLOOR = 18
"""The narrowest a text column is squeezed to (in cells) before the records are folded: fits
``history_rewritten`` and most block paths' words."""


@dataclass(frozen=True)
class Column:
    """One column: its header, a short header for narrow terminals, alignment, and whether it holds text.

    A text column wraps at spaces (and folds a longer word); any other column holds numbers or short tokens
    and is never wrapped or cut.
    """

    header: str
    short: str = ""
    justify: Literal["left", "right"] = "right"
    text: bool = False

    def title(self, short: bool) -> str:
        """The header to print: the short one (when given) for a narrow terminal, else the full one."""
        return (self.short or self.header) if short else self.header


Cell = str | Text


def stdout_console(stderr: bool = False) -> Console:
    """A console for a command's output on stdout (or stderr): the terminal's width, or ``COLUMNS`` when set;
    otherwise (a pipe, a file, CI logs) unbounded lines without colour."""
    console = Console(stderr=stderr, highlight=False)
    if not console.is_terminal and not os.environ.get("COLUMNS"):
        console.width = UNBOUNDED
    return console


def _text(cell: Cell) -> Text:
    return cell.copy() if isinstance(cell, Text) else Text.from_markup(cell)


def _table(title: str | None, columns: Sequence[Column], rows: list[list[Text]], short: bool, tight: bool,
           squeeze: bool, **options) -> Table:
    table = Table(title=title, header_style="bold", box=box.SIMPLE_HEAD, collapse_padding=True, pad_edge=False, show_edge=False,
                  padding=(0, 0) if tight else (0, 1), **options)
    for index, column in enumerate(columns):
        header = column.title(short)
        if column.text:
            table.add_column(header, justify=column.justify, overflow="fold",
                             max_width=TEXT_FLOOR if squeeze else None)
        else:
            widest = max([Text(header).cell_len, *(_widest_line(row[index]) for row in rows)])
            table.add_column(header, justify=column.justify, no_wrap=True, min_width=widest)
    for row in rows:
        table.add_row(*row)
    return table


def _widest_line(cell: Text) -> int:
    return max((Text(line).cell_len for line in cell.plain.splitlines()), default=0)


def _fits(table: Table, console: Console) -> bool:
    unbounded = console.options.update_width(UNBOUNDED)
    return Measurement.get(console, unbounded, table).minimum <= console.width


def _own_line(column: Column, cell: Text) -> bool:
    return column.text and cell.cell_len > TEXT_FLOOR


def _folded(title: str | None, columns: Sequence[Column], rows: list[list[Text]]) -> Group:
    """One record per block: ``header value`` of the first column as a heading, the others below."""
    parts: list[RenderableType] = [Text(title, style="bold")] if title else []
    for row in rows:
        head = Text.assemble((columns[0].title(True) + " ", "bold"), row[0])
        pairs = [Text.assemble((c.title(True) + " ", "dim"), cell)
                 for c, cell in zip(columns[1:], row[1:]) if cell.plain and not _own_line(c, cell)]
        texts = [Text.assemble((c.title(True) + ": ", "dim"), cell)
                 for c, cell in zip(columns[1:], row[1:]) if cell.plain and _own_line(c, cell)]
        parts.append(head)
        parts.append(Padding(Columns(pairs, padding=(0, 2)), (0, 0, 0, 2), expand=False))
        parts.extend(Padding(text, (0, 0, 0, 2), expand=False) for text in texts)
    return Group(*parts)


def fit_table(console: Console, title: str | None, columns: Sequence[Column], rows: Sequence[Sequence[Cell]],
              **options) -> RenderableType:
    """The table of ``rows`` (cells as rich markup or Text) as it fits ``console``'s width (see the module).

    ``options`` go to :class:`rich.table.Table` (``caption``...).
    """
    cells = [[_text(cell) for cell in row] for row in rows]
    for short, tight in ((False, False), (True, False), (True, True)):
        if _fits(_table(title, columns, cells, short, tight, squeeze=True, **options), console):
            return _table(title, columns, cells, short, tight, squeeze=False, **options)
    return _folded(title, columns, cells)


def print_table(console: Console, title: str | None, columns: Sequence[Column], rows: Sequence[Sequence[Cell]],
                **options) -> None:
    """Print :func:`fit_table` on ``console``."""
    console.print(fit_table(console, title, columns, rows, **options))
