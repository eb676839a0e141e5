"""Provider prompt-cache simulators: what Anthropic, OpenAI, Gemini and DeepSeek would cache.

One simulator per provider family implements the documented rules
(``shared/design/provider-cache-rules.md``; every number comes from
``promptcache/data/providers.toml`` through :mod:`promptcache.providers.profiles`):

- :class:`AnthropicSimulator` (``anthropic.py``): breakpoints, automatic caching,
  the 4-breakpoint limit, the 20-block lookback, per-model minimums, 5m / 1h TTLs.
- :class:`OpenAISimulator` (``openai.py``): classic automatic caching (1,024
  minimum, 128-token steps, routing, retention, overflow) and GPT-5.6+ breakpoints.
- :class:`GeminiSimulator` (``gemini.py``): implicit caching.
- :class:`DeepSeekSimulator` (``deepseek.py``): prefix units (current and legacy rules).
- :class:`BedrockSimulator` (``bedrock.py``): Amazon Bedrock, Claude through Converse ``cachePoint`` blocks
  (and InvokeModel Claude bodies) under Bedrock's own minimums and TTLs.

:func:`check_usage` (``calibrate.py``) compares a simulation with the usage recorded in its trace
(``simulate --check-usage``).

:func:`simulate_trace` / :func:`simulate_records` (``driver.py``) run a trace
through one of them and attach the miss cause from :mod:`promptcache.misses.guard`.
"""

from __future__ import annotations

from promptcache.simulate.anthropic import AnthropicSimulator
from promptcache.simulate.base import CacheSimulator, RequestRefused, RequestResult
from promptcache.simulate.bedrock import BedrockSimulator
from promptcache.simulate.calibrate import Calibration, UsageCheck, check_usage
from promptcache.simulate.deepseek import DeepSeekSimulator
from promptcache.simulate.driver import (
    SIMULATORS, SimulatedRequest, Simulation, make_simulator, miss_cause, simulate_records, simulate_trace,
)
from promptcache.simulate.gemini import GeminiSimulator
from promptcache.simulate.openai import OpenAISimulator

__all__ = [
    "SIMULATORS", "AnthropicSimulator", "BedrockSimulator", "CacheSimulator", "Calibration", "DeepSeekSimulator",
    "GeminiSimulator", "UsageCheck", "check_usage",
    "OpenAISimulator", "RequestRefused", "RequestResult", "SimulatedRequest", "Simulation", "make_simulator",
    "miss_cause", "simulate_records", "simulate_trace",
]
