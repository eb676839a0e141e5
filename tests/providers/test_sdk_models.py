"""The installed SDKs name models (anthropic ``Model``, openai ``ChatModel``): every one must be in providers.toml.

When a new SDK release adds a model id this test fails: add the model to ``promptcache/data/providers.toml``
(with its source and date) or as an alias / dated snapshot of an entry whose rules it shares. An id that only
matches a family would get that family's conservative fallback (a wrong minimum is the usual result), so it does
not count as covered.
"""

from __future__ import annotations

import typing
import warnings

import pytest
from anthropic.types import Model
from openai.types.shared import ChatModel

from promptcache.providers.profiles import RetiredModelWarning, UnknownModelWarning, model_profile


def literal_ids(hint: object) -> list[str]:
    """The string literals of a ``Literal[...]`` / ``Union[Literal[...], str]`` type alias."""
    if typing.get_origin(hint) is typing.Literal:
        return [v for v in typing.get_args(hint) if isinstance(v, str)]
    return [v for arg in typing.get_args(hint) for v in literal_ids(arg)]


SDK_MODELS = [("anthropic", m) for m in literal_ids(Model)] + [("openai", m) for m in literal_ids(ChatModel)]


def test_the_sdks_name_models() -> None:
    assert len(literal_ids(Model)) >= 20 and len(literal_ids(ChatModel)) >= 90  # anthropic 2.15.0, openai 3.57.0
    assert ("anthropic", "claude-haiku-5-5") in SDK_MODELS and ("openai", "gpt-6-astra") in SDK_MODELS


@pytest.mark.parametrize(("provider", "model"), SDK_MODELS)
def test_every_sdk_model_is_listed(provider: str, model: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RetiredModelWarning)
        warnings.simplefilter("error", UnknownModelWarning)
        p = model_profile(provider, model)
    assert p.known, f"{model} (named by the {provider} SDK) has no entry in providers.toml"


@pytest.mark.parametrize(("model", "not_this"), [
    ("gpt-5.1-mini", "gpt-5.1"), ("gpt-6.2-astra", "gpt-6.1-terra"), ("gpt-6.2-sol", "gpt-6.1-terra"),
])
def test_sdk_ids_are_not_aliases_of_other_models(model: str, not_this: str) -> None:
    """Review 14 item 8: openai 3.57.0 names gpt-5.1-mini ("Not a supported model ID. Retained for SDK
    compatibility."), gpt-6.2-astra and gpt-6.2-sol; no source prices them or says they share another model's rules,
    so each has its own entry (its family's rules, no USD price) rather than being an alias of another model."""
    p = model_profile("openai", model)
    assert p.known and p.entry == model and p.entry != not_this
    assert p.input_usd_per_mtok is None and p.sources["read_multiplier"] != ""
