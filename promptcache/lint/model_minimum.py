"""The minimum cacheable length a one-shot request is weighed against: its model's, from the providers data.

PC102's weighing (:mod:`promptcache.lint.one_shot`) needs the model a request runs on. It is the ``model=`` of the
call or of the LangChain constructor: a literal, a name bound once to one, or the default of a configuration
class's field that the code reads it from (open_deep_research: ``planner_model: str = "claude-3-7-sonnet-latest"``
in a ``Configuration`` dataclass, read as ``get_config_value(configurable.planner_model)``). A configuration class
imported from another module is settled by the run (:mod:`promptcache.lint.cross_module`) with that module's
:func:`model_defaults`. With no model named, the smallest hosted minimum applies; a model the data does not list is
not weighed at all (self-hosted models cache from the first block, and the family fallback would give the
*largest* minimum).
"""

from __future__ import annotations

import functools
import warnings
from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint.literals import string_value
from promptcache.providers import PROVIDERS, known_models, model_profile, provider_for_model

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.dataflow import FlowAnalysis
    from promptcache.lint.index import ModuleIndex, Scope

NO_MODEL = "no model named: the smallest hosted minimum"


def request_minimum(flow: FlowAnalysis, call: cst.Call, scope: Scope) -> tuple[int, str, str] | None:
    """``(tokens, model, default_of)`` for the request or constructor ``call``: the minimum cacheable length and
    where it comes from; ``default_of`` names an imported configuration field (``pkg.config.Configuration.model``)
    whose default the run settles (then ``tokens`` / ``model`` are the no-model fallback). None for a model the
    providers data does not list."""
    model = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "model"), None)
    if model is None:
        return smallest_minimum(), NO_MODEL, ""
    if isinstance(model, cst.Name):
        bindings = flow.index.lookup(model.value, scope)[1]
        if len(bindings) != 1 or bindings[0].kind != "assign":
            return smallest_minimum(), NO_MODEL, ""  # `model=model_name`: a parameter, chosen elsewhere
        model = bindings[0].value
    if isinstance(model, cst.SimpleString):
        name = string_value(model)
        least = model_minimum(name) if name is not None else None
        return (least, name, "") if least is not None else None
    field = _config_field(flow, model, scope)
    if field is None:
        return smallest_minimum(), NO_MODEL, ""
    qualified, imported = field
    if imported:
        return smallest_minimum(), NO_MODEL, qualified
    name = model_defaults(flow.index).get(qualified)
    return (model_minimum(name), default_text(name, qualified)) + ("",) if name else (smallest_minimum(), NO_MODEL, "")


def _config_field(flow: FlowAnalysis, expr: cst.BaseExpression, scope: Scope) -> tuple[str, bool] | None:
    """``(Class.field, imported)`` for ``cfg.field`` or a one-argument helper over it (``get_config_value(cfg.field)``),
    where ``cfg`` is bound once to ``Class(...)`` or ``Class.from_...(...)`` of a class of this module or an imported
    one (qualified as imported); else None."""
    if isinstance(expr, cst.Call) and len(expr.args) == 1 and not expr.args[0].star and expr.args[0].keyword is None:
        expr = expr.args[0].value
    if not (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name)):
        return None
    bindings = flow.index.lookup(expr.value.value, scope)[1]
    if len(bindings) != 1 or bindings[0].kind != "assign" or not isinstance(made := bindings[0].value, cst.Call):
        return None
    cls = made.func.value if isinstance(made.func, cst.Attribute) else made.func
    if not isinstance(cls, cst.Name):
        return None
    at = bindings[0].scope
    if flow.index.imported(cls.value, at):
        qualified = flow.index.qualified(cls, at)
        return (f"{qualified}.{expr.attr.value}", True) if qualified else None
    found = _class(cls.value, flow.index.lookup(cls.value, at)[1])
    return (f"{cls.value}.{expr.attr.value}", False) if found is not None else None


def _class(name: str, bindings: list) -> cst.ClassDef | None:
    """The class ``name`` is bound to: one ``class`` statement, and no other binding but ``name = name``
    (open_deep_research keeps ``Configuration = Configuration`` "for backward compatibility")."""
    classes = [b.node for b in bindings if b.kind == "class"]
    others = [b for b in bindings if b.kind != "class"]
    if len(classes) != 1 or any(b.kind != "assign" or not (isinstance(b.value, cst.Name) and b.value.value == name)
                                for b in others):
        return None
    return classes[0]


def model_defaults(index: ModuleIndex) -> dict[str, str]:
    """``{"Class.field": model id}``: the fields of this module's classes whose name mentions ``model`` and whose
    default (``field: str = "..."``, ``field = "..."``, ``Field("...")`` / ``Field(default="...")``) is a model id
    the providers data lists; for :func:`request_minimum` here and for importers."""
    module = next(sc for sc in index.scopes if sc.kind == "module")
    out: dict[str, str] = {}
    for name, bindings in module.bindings.items():
        node = _class(name, bindings) if any(b.kind == "class" for b in bindings) else None
        if node is None:
            continue
        for line in node.body.body:
            for stmt in getattr(line, "body", ()) if isinstance(line, cst.SimpleStatementLine) else ():
                target, value = _field(stmt)
                if target is not None and "model" in target.lower() and (model := _default(value)) \
                        and model_minimum(model) is not None:
                    out[f"{name}.{target}"] = model
    return out


def _field(stmt: cst.BaseSmallStatement) -> tuple[str | None, cst.BaseExpression | None]:
    if isinstance(stmt, cst.AnnAssign) and isinstance(stmt.target, cst.Name):
        return stmt.target.value, stmt.value
    if isinstance(stmt, cst.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0].target, cst.Name):
        return stmt.targets[0].target.value, stmt.value
    return None, None


def _default(value: cst.BaseExpression | None) -> str | None:
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "Field":
        value = next((a.value for a in value.args if a.keyword is None and not a.star
                      or a.keyword is not None and a.keyword.value == "default"), None)
    return string_value(value) if isinstance(value, cst.SimpleString) else None


def default_text(model: str, field: str) -> str:
    """How a message names a model that is a configuration field's default."""
    return f"{model}, the default of {'.'.join(field.split('.')[-2:])}"


def model_minimum(name: str) -> int | None:
    """The minimum cacheable length (tokens) of model ``name`` in the providers data, or None when the data does
    not list it (its family's fallback is the *largest* minimum, wrong for a claim that a prefix is too short)."""
    try:
        provider = provider_for_model(name)
    except ValueError:
        return None
    if name not in known_models(provider):
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # retired models keep the rules they had
        return model_profile(provider, name).min_cacheable_tokens


@functools.lru_cache(maxsize=None)
def smallest_minimum(providers: tuple[str, ...] = tuple(p for p in PROVIDERS if p != "deepseek")) -> int:
    """The smallest minimum cacheable length (tokens) of ``providers``' models in the providers data. By default
    DeepSeek's 64-token unit is left out: its best-effort disk cache is not what an app that names no model is
    assumed to run on (assumed, issue 11)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return min(model_profile(p, m).min_cacheable_tokens for p in providers for m in known_models(p))
