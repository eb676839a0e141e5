"""A light import-alias resolver.

It turns ``import`` / ``from ... import`` statements into ``local name ->
qualified name`` pairs (``from datetime import datetime as dt`` gives
``dt -> datetime.datetime``), which is all the rules need to recognise
``dt.now()`` as ``datetime.datetime.now()``. libcst's
``QualifiedNameProvider`` answers the same question through full scope
analysis at about ten times the cost of parsing; here it is one pass over the
import statements the index walk already visits.

Relative imports keep their leading dots (``from .memory import compact`` gives
``compact -> .memory.compact``).
"""

from __future__ import annotations

import re
import sys

import libcst as cst

# Top-level packages of LLM SDKs and frameworks. A file importing one of them is
# an "LLM file": its prompt-named constants are prefix-slot candidates.
LLM_PACKAGES: frozenset[str] = frozenset(
    {
        "anthropic",
        "openai",
        "litellm",
        "langchain",
        "langchain_core",
        "langchain_community",
        "langchain_openai",
        "langchain_anthropic",
        "langchain_google_genai",
        "langchain_aws",
        "langchain_mistralai",
        "langgraph",
        "llama_index",
        "google.genai",
        "google.generativeai",
        "vertexai",
        "mistralai",
        "cohere",
        "groq",
        "together",
        "ollama",
        "agents",
        "pydantic_ai",
        "instructor",
        "dspy",
        "haystack",
        "mcp",
        "smolagents",
    }
)

_LANGCHAIN_RE = re.compile(r"^(langchain\w*|langgraph)(\.|$)")


def dotted_name(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def import_aliases(node: cst.Import | cst.ImportFrom) -> list[tuple[str, str]]:
    """Return ``(local name, qualified name)`` pairs bound by one import statement.

    ``import a.b`` binds ``a`` to ``a`` (Python binds the top package);
    ``import a.b as c`` binds ``c`` to ``a.b``; a star import binds nothing.
    """
    pairs: list[tuple[str, str]] = []
    if isinstance(node, cst.Import):
        for alias in node.names:
            full = dotted_name(alias.name) or ""
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                pairs.append((alias.asname.name.value, full))
            else:
                top = full.split(".", 1)[0]
                pairs.append((top, top))
        return pairs
    if isinstance(node.names, cst.ImportStar):
        return pairs
    base = "." * len(node.relative)
    if node.module is not None:
        base += dotted_name(node.module) or ""
    for alias in node.names:
        imported = dotted_name(alias.name) or ""
        full = f"{base}.{imported}" if base and not base.endswith(".") else base + imported
        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
            pairs.append((alias.asname.name.value, full))
        else:
            pairs.append((imported, full))
    return pairs


def imported_modules(node: cst.Import | cst.ImportFrom) -> list[str]:
    """The module paths an import statement may load.

    ``from a.b import c`` gives ``a.b`` and ``a.b.c`` (``c`` may be a
    submodule: ``from google import genai`` loads ``google.genai``).
    """
    if isinstance(node, cst.Import):
        return [dotted_name(alias.name) or "" for alias in node.names]
    base = "." * len(node.relative)
    if node.module is not None:
        base += dotted_name(node.module) or ""
    found = [base]
    if not base.startswith(".") and not isinstance(node.names, cst.ImportStar):
        found += [f"{base}.{dotted_name(alias.name)}" for alias in node.names]
    return found


def is_standard_library(module: str) -> bool:
    """True when ``module`` (a dotted path, ``datetime.timezone``) is in Python's standard library."""
    return not module.startswith(".") and module.split(".", 1)[0] in sys.stdlib_module_names


def is_llm_module(module: str) -> bool:
    """True when ``module`` (a dotted path) belongs to an LLM SDK or framework."""
    if module.startswith("."):
        return False
    if _LANGCHAIN_RE.match(module):
        return True
    parts = module.split(".")
    return parts[0] in LLM_PACKAGES or ".".join(parts[:2]) in LLM_PACKAGES


def is_langchain_module(module: str) -> bool:
    """True for ``langchain*`` and ``langgraph`` modules."""
    return bool(_LANGCHAIN_RE.match(module))
