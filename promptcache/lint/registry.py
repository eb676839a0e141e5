"""Rule discovery.

Rules register themselves when their module is imported
(:class:`promptcache.lint.rule.LintRule` subclasses with a ``code``). The
engine imports every module of the built-in ``lint_rules`` package, then every
module named by an entry point in the ``promptcache.lint_rules`` group (the
plugin hook for third-party rules), and reads the registry: it never names a
rule.
"""

from __future__ import annotations

import importlib
import pkgutil
from importlib.metadata import entry_points

from promptcache.lint import errors, unused_noqa  # noqa: F401 - register PC901 and PC900, engine codes
from promptcache.lint.rule import LintRule, registered

BUILTIN_PACKAGES = ("lint_rules",)
ENTRY_POINT_GROUP = "promptcache.lint_rules"

_loaded = False


def discover() -> dict[str, type[LintRule]]:
    """Import the rule packages once and return every rule class by code."""
    global _loaded
    if not _loaded:
        for package_name in BUILTIN_PACKAGES:
            package = importlib.import_module(package_name)
            for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
                importlib.import_module(info.name)
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            ep.load()
        _loaded = True
    return registered()
