"""``--output-format sarif``: a SARIF 2.1.0 log (OASIS "Static Analysis Results Interchange Format" 2.1.0).

One run; ``tool.driver.rules[]`` lists every selected rule with its short
description, help URI and default level; each result has the rule id and
index, a 1-based region (``columnKind`` is ``unicodeCodePoints``), a
``partialFingerprints`` entry stable across line moves, and ``fixes[]`` when
the finding has a fix. A clean run has an empty ``results`` array.
"""

from __future__ import annotations

import hashlib
import json
from importlib.metadata import PackageNotFoundError, metadata
from pathlib import Path, PurePosixPath
from typing import TextIO
from urllib.parse import quote

from promptcache import __version__
from promptcache.lint.finding import Finding, Severity
from promptcache.lint.rule import markdown_code
from promptcache.lint.runner import LintResult

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"


def _documentation_url() -> str | None:
    """The ``Documentation`` entry of ``[project.urls]`` in pyproject.toml, read from the installed metadata."""
    try:
        entries = metadata("promptcache").get_all("Project-URL") or []
    except PackageNotFoundError:  # running from a source tree that was never installed
        return None
    urls = dict((part.strip() for part in entry.split(",", 1)) for entry in entries if "," in entry)
    return urls.get("Documentation")


#: The project's documentation URL (``tool.driver.informationUri``; rule pages under it are ``helpUri``).
#: One source: pyproject.toml ``[project.urls] Documentation``. None when the package metadata is missing,
#: and the optional SARIF fields are then left out.
DOCUMENTATION_URL = _documentation_url()
RULE_HELP_PATH = "/blob/main/docs/rules/{code}.md"
SRCROOT = "%SRCROOT%"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _fingerprint(f: Finding) -> str:
    """Hash of (path, code, message): survives the finding moving to another line."""
    return hashlib.sha256(f"{f.path}\0{f.code}\0{f.message}".encode()).hexdigest()[:32]


def artifact_location(path: str) -> dict:
    """A SARIF ``artifactLocation`` for a finding's path (SARIF 2.1.0 §3.4.3, §3.10).

    A relative path becomes a relative, percent-encoded URI reference against
    ``%SRCROOT%`` (the folder the run was started in, declared in the run's
    ``originalUriBaseIds``); an absolute path becomes a ``file://`` URI with no
    ``uriBaseId``.
    """
    if PurePosixPath(path).is_absolute():
        return {"uri": Path(path).as_uri()}
    return {"uri": quote(path, safe="/"), "uriBaseId": SRCROOT}


def _region(line: int, column: int, end_line: int, end_column: int) -> dict:
    return {"startLine": line, "startColumn": column, "endLine": end_line, "endColumn": max(end_column, column)}


def to_sarif(result: LintResult) -> dict:
    """The SARIF log as a dict."""
    rules = [
        {
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": rule.summary()},
            "fullDescription": {"text": markdown_code(rule.documentation())},
            **({"helpUri": DOCUMENTATION_URL + RULE_HELP_PATH.format(code=rule.code)} if DOCUMENTATION_URL else {}),
            "defaultConfiguration": {"level": _LEVEL[rule.severity]},
            "properties": {"fixable": rule.fixable or "no"},
        }
        for rule in result.rules
    ]
    driver = {"name": "promptcache", "version": __version__, "rules": rules}
    if DOCUMENTATION_URL:
        driver["informationUri"] = DOCUMENTATION_URL
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    results = []
    for f in result.findings:
        entry = {
            "ruleId": f.code,
            "level": _LEVEL[f.severity],
            "message": {"text": f.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": artifact_location(f.path),
                        "region": _region(f.line, f.column, f.end_line, f.end_column),
                    }
                }
            ],
            "partialFingerprints": {"promptcacheFinding/v1": _fingerprint(f)},
        }
        if f.code in index:
            entry["ruleIndex"] = index[f.code]
        if f.fix is not None and f.fix.edits:
            entry["fixes"] = [
                {
                    "description": {"text": f.fix.description},
                    "artifactChanges": [
                        {
                            "artifactLocation": artifact_location(f.path),
                            "replacements": [
                                {
                                    "deletedRegion": _region(e.start_line, e.start_column, e.end_line, e.end_column),
                                    "insertedContent": {"text": e.content},
                                }
                                for e in f.fix.edits
                            ],
                        }
                    ],
                }
            ]
        results.append(entry)
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": driver},
                "originalUriBaseIds": {SRCROOT: {"uri": Path.cwd().as_uri() + "/"}},
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }


def render(result: LintResult, out: TextIO) -> None:
    """Write ``result`` to ``out`` as a SARIF 2.1.0 log (JSON, indented), then a newline."""
    json.dump(to_sarif(result), out, indent=2, ensure_ascii=False)
    out.write("\n")
