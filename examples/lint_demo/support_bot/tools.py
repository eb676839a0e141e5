"""Tool definitions, assembled from the features enabled in the config."""

import json

from .config import ENABLED_FEATURES, load_quota_table

BASE_TOOLS = {"lookup_account", "list_devices"}
QUOTAS = {row.plan: row.gigabytes for row in load_quota_table()}

TOOL_SPECS = {
    "lookup_account": {
        "name": "lookup_account",
        "description": "Look up the customer's account by email.",
        "input_schema": {"type": "object", "properties": {"email": {"type": "string"}}, "required": ["email"]},
    },
    "list_devices": {
        "name": "list_devices",
        "description": "List the devices that sync with the account.",
        "input_schema": {"type": "object", "properties": {"account_id": {"type": "string"}}},
    },
    "check_quota": {
        "name": "check_quota",
        "description": f"Check storage use against the plan quota. Quotas in GB: {json.dumps(QUOTAS)}",
        "input_schema": {"type": "object", "properties": {"account_id": {"type": "string"}}},
    },
}


def enabled_tools() -> list[dict]:
    names = BASE_TOOLS | set(ENABLED_FEATURES)
    return [TOOL_SPECS[name] for name in names]
