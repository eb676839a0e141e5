"""Settings read from the environment: the optional tools that are switched on, and the plan quotas."""

import os
from dataclasses import dataclass

# Comma-separated tool names, e.g. SUPPORT_BOT_FEATURES="check_quota".
ENABLED_FEATURES = [name.strip() for name in os.environ.get("SUPPORT_BOT_FEATURES", "check_quota").split(",") if name.strip()]


@dataclass(frozen=True)
class QuotaRow:
    plan: str
    gigabytes: int


def load_quota_table() -> list[QuotaRow]:
    """The storage quota of each plan (a database table in production)."""
    return [QuotaRow("free", 5), QuotaRow("team", 500), QuotaRow("business", 5000)]
