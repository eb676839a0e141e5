"""The chat endpoint: one Anthropic call per customer message."""

import anthropic
from fastapi import Depends, FastAPI
from pydantic import BaseModel

from .auth import Customer, current_customer
from .memory import load_history, save_history, summarize_conversation
from .prompts import SYSTEM_PROMPT, Templates
from .tools import enabled_tools

app = FastAPI()
client = anthropic.Anthropic()

MAX_HISTORY = 10


class Message(BaseModel):
    conversation_id: str
    text: str


@app.post("/chat")
def chat(message: Message, customer: Customer = Depends(current_customer)) -> dict:
    history = load_history(message.conversation_id)
    history.append({"role": "user", "content": message.text})
    history = history[-MAX_HISTORY:]
    summary = summarize_conversation(history)
    response = client.messages.create(
        model="claude-sonnet-4-5",
        max_tokens=800,
        system=f"{SYSTEM_PROMPT}\n\n{Templates.ESCALATION_PROMPT}\n\nCustomer: {customer.name} ({customer.plan} plan)",
        tools=enabled_tools(),
        messages=history,
    )
    answer = response.content[0].text
    history.append({"role": "assistant", "content": answer})
    save_history(message.conversation_id, history, summary)
    return {"answer": answer}
