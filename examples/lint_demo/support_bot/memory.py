"""Conversation storage (in memory; a database in production) and the summariser the chat endpoint calls."""

import anthropic

client = anthropic.Anthropic()

SUMMARY_INSTRUCTIONS = (
    "Summarise this support conversation in three sentences for the agent who takes it over: "
    "the customer's problem, what was tried, and what is still open."
)

_HISTORIES: dict[str, list[dict]] = {}
_SUMMARIES: dict[str, str] = {}


def load_history(conversation_id: str) -> list[dict]:
    """The messages of a conversation so far (a copy; empty for a new conversation)."""
    return list(_HISTORIES.get(conversation_id, []))


def save_history(conversation_id: str, history: list[dict], summary: str) -> None:
    """Store the conversation and its latest summary (shown to human agents on hand-over)."""
    _HISTORIES[conversation_id] = history
    _SUMMARIES[conversation_id] = summary


def summarize_conversation(history: list[dict]) -> str:
    """A three-sentence summary of the conversation, written by a small model."""
    response = client.messages.create(
        model="claude-haiku-4-5",
        max_tokens=300,
        system=SUMMARY_INSTRUCTIONS,
        messages=history,
    )
    return response.content[0].text
