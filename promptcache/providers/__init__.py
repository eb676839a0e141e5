"""What each provider does with a prompt cache, and what it reports back.

- ``profiles.py``: per-model cache rules and prices from ``promptcache/data/providers.toml``
  (:func:`model_profile`);
- ``apis.py``: the request APIs (``anthropic.messages``, ``openai.chat``, ``openai.responses``) and their SDKs' key order;
- ``usage.py``: the provider's ``usage`` object normalised, costed and summed (:class:`UsageStats`).
"""

from __future__ import annotations

from promptcache.providers.apis import ANTHROPIC_MESSAGES, APIS, OPENAI_CHAT, OPENAI_RESPONSES, infer_api
from promptcache.providers.profiles import (PROVIDERS, ModelProfile, UnknownModelWarning, known_models,
                                            model_profile, provider_for_model, provider_rules)
from promptcache.providers.usage import Cost, Usage, UsageStats, normalize_usage, usage_cost

__all__ = ["ANTHROPIC_MESSAGES", "APIS", "OPENAI_CHAT", "OPENAI_RESPONSES", "PROVIDERS", "Cost", "ModelProfile",
           "UnknownModelWarning", "Usage", "UsageStats", "infer_api", "known_models", "model_profile", "normalize_usage",
           "provider_for_model", "provider_rules", "usage_cost"]
