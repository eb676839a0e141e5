"""OpenAI fallback used when the Anthropic API is overloaded."""

from fastapi import Request
from openai import OpenAI

from .prompts import SYSTEM_PROMPT

client = OpenAI()


def fallback_answer(request: Request, text: str) -> str:
    request_id = request.headers.get("x-request-id", "")
    response = client.responses.create(
        model="gpt-4.1-mini",
        instructions=SYSTEM_PROMPT,
        input=text,
        prompt_cache_key=f"support-{request_id}",
    )
    return response.output_text
