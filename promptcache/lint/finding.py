"""The finding model: what a rule reports, in the shape every reporter reads.

A :class:`Finding` is one problem at one place: a rule code (``PC101``), the
rule's name and severity, the file, a 1-based line/column range and a message.
Lines and columns are 1-based in every output format (ruff's convention;
SARIF's ``region`` is 1-based as well). Columns count Unicode code points.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Severity(enum.Enum):
    """How bad a finding is. Ordered: ``info < warning < error``."""

    INFO = "info"
    WARNING = "warning"
    ERROR = "error"

    @property
    def rank(self) -> int:
        """0 for info, 1 for warning, 2 for error."""
        return _RANK[self]

    @classmethod
    def parse(cls, text: str) -> Severity:
        """Read ``"error"`` / ``"warning"`` / ``"info"``; raises ``ValueError`` naming the choices."""
        try:
            return cls(text.strip().lower())
        except ValueError:
            raise ValueError(f"unknown severity {text!r}: use one of error, warning, info") from None


_RANK = {Severity.INFO: 0, Severity.WARNING: 1, Severity.ERROR: 2}


class Applicability(enum.Enum):
    """Whether a fix may be applied without review (ruff's terms).

    Any fix that changes the bytes of a prompt is ``unsafe``: applying it costs
    one cold cache write for every prefix that contains the old bytes.
    """

    SAFE = "safe"
    UNSAFE = "unsafe"


@dataclass(frozen=True)
class Edit:
    """Replace the source between two 1-based (line, column) positions with ``content``.

    ``end`` is exclusive, like a SARIF ``deletedRegion``.
    """

    start_line: int
    start_column: int
    end_line: int
    end_column: int
    content: str


@dataclass(frozen=True)
class Fix:
    """A suggested change: a description, its applicability and the edits that make it."""

    description: str
    applicability: Applicability
    edits: tuple[Edit, ...] = ()

    def to_json(self) -> dict:
        """The JSON shape of the ``fix`` field (ruff-like)."""
        return {
            "message": self.description,
            "applicability": self.applicability.value,
            "edits": [
                {
                    "location": {"row": e.start_line, "column": e.start_column},
                    "end_location": {"row": e.end_line, "column": e.end_column},
                    "content": e.content,
                }
                for e in self.edits
            ],
        }


@dataclass(frozen=True, order=False)
class Finding:
    """One reported problem.

    ``line``/``column``/``end_line``/``end_column`` are 1-based; ``end_column``
    is exclusive. ``path`` is the path as given on the command line (or found
    under it), in POSIX form.
    """

    code: str
    name: str
    severity: Severity
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    message: str
    fix: Fix | None = field(default=None, compare=False)
    #: Lines of the sources a data-flow finding names (``uuid.uuid4()`` on line 4 reaching ``system=`` on
    #: line 9): a change there changes the finding (``--diff-since``). Not part of the JSON output.
    source_lines: tuple[int, ...] = field(default=(), compare=False)

    @property
    def sort_key(self) -> tuple[str, int, int, str]:
        """Deterministic order of every output: (path, line, column, code)."""
        return (self.path, self.line, self.column, self.code)

    def to_json(self) -> dict:
        """The object of ``--output-format json``."""
        return {
            "code": self.code,
            "name": self.name,
            "severity": self.severity.value,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "message": self.message,
            "fix": self.fix.to_json() if self.fix is not None else None,
        }
