"""The provider rules as rows: what ``promptcache providers`` prints (one :class:`ProviderRow` per listed model).

Each row is the model's resolved :class:`~promptcache.providers.modelprofile.ModelProfile` on a date,
with the date its values are from (the oldest among them: a value's document date, ``dated`` of its source,
where the source gives one, else the date it was read; the row is no fresher than that)
and their sources; the values no source settles are named in ``assumed``.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import warnings
from typing import Any

from promptcache.providers.datafile import PROVIDERS, load_rules
from promptcache.providers.profiles import RetiredModelWarning, model_profile
from promptcache.providers.modelprofile import RULE_FIELDS, ModelProfile

SHOWN_FIELDS = RULE_FIELDS
"""The fields a row shows; its ``as_of`` and ``sources`` cover these."""



@dataclasses.dataclass(frozen=True)
class ProviderRow:
    """One model's cache rules as shown by ``promptcache providers``.

    Attributes:
        profile: the resolved rules (see :func:`~promptcache.providers.profiles.model_profile`).
        aliases: other ids of the same entry.
        read: the oldest date among the shown values' dates (document date where known, else read date).
        sources: the distinct source keys of the shown values, most used first.
        secondary: the subset of ``sources`` that are secondary (third-party release notes).
    """

    profile: ModelProfile
    aliases: tuple[str, ...]
    read: _dt.date | None
    sources: tuple[str, ...]
    secondary: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` form: the shown values, each value's source, the assumed fields, retirement."""
        p = self.profile
        return {
            "provider": p.provider, "model": p.model, "aliases": list(self.aliases), "family": p.family,
            "caching": p.caching, "min_cacheable_tokens": p.min_cacheable_tokens,
            "read_multiplier": p.read_multiplier, "write_multipliers": dict(p.write_multipliers),
            "ttl_seconds": dict(p.ttl_seconds), "default_ttl": p.default_ttl,
            "input_usd_per_mtok": p.input_usd_per_mtok, "output_usd_per_mtok": p.output_usd_per_mtok,
            "price_tiers": [dataclasses.asdict(t) for t in p.price_tiers],
            "retired": p.retired.isoformat() if p.retired else None, "successor": p.successor,
            "assumed": sorted(p.assumed), "as_of": self.read.isoformat() if self.read else None,
            "sources": {k: p.sources[k] for k in sorted(p.sources)},
        }


def provider_rows(providers: tuple[str, ...] = PROVIDERS, *, as_of: _dt.date | None = None) -> list[ProviderRow]:
    """One row per model entry of ``providers`` in the rules in use (installed data plus user rules), file order.

    Args:
        as_of: the date whose values are shown (history entries); None: the current values.
    """
    rules = load_rules()
    known_sources = rules.get("sources", {})
    rows = []
    for provider in providers:
        for entry in rules["providers"][provider].get("models", []):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RetiredModelWarning)
                profile = model_profile(provider, entry["id"], as_of=as_of)
            notes = [profile.sources[k] for k in SHOWN_FIELDS if k in profile.sources]
            keys = [note.split(",")[0] for note in notes]
            ranked = tuple(sorted(dict.fromkeys(keys), key=lambda k: (-keys.count(k), keys.index(k))))
            rows.append(ProviderRow(profile, tuple(entry.get("aliases", ())), profile.values_date(SHOWN_FIELDS), ranked,
                                    tuple(k for k in ranked if known_sources.get(k, {}).get("secondary"))))
    return rows
