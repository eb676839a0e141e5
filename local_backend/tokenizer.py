"""``engine.tokenizer``: one small interface over the embedded ChatML tokenizer and HF tokenizers.

Both give ``encode(text) -> list[int]``, ``decode(ids) -> str``,
``apply_chat_template(messages, tools=None, add_generation_prompt=True) ->
list[int]`` (OpenAI-chat-shaped messages), ``eos_token_ids``, ``vocab_size``
and ``name``. The server and ``promptcache verify`` only use this interface.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from promptcache.tokens.chatml import IM_END_ID, chatml_encoding, encode_chatml


@runtime_checkable
class EngineTokenizer(Protocol):
    """What the engine, the server and verify need from a tokenizer.

    Attributes:
        name: the tokenizer's name (``"cl100k_chatml"``, or the model directory).
        vocab_size: ids run from 0 to ``vocab_size - 1`` (the largest id + 1: a vocabulary may leave gaps).
        eos_token_ids: the tokens that end generation (unless ``ignore_eos``).
    """

    name: str
    vocab_size: int
    eos_token_ids: tuple[int, ...]

    def encode(self, text: str) -> list[int]:
        """Token ids of a plain-text prompt (``[]`` for ``""`` unless the model adds a BOS).

        The embedded ChatML tokenizer adds nothing and reads special-token text
        such as ``<|im_end|>`` as plain text; a model directory's tokenizer adds
        the model's own special tokens (a BOS for Llama), as vLLM does for
        completion prompts.
        """
        ...

    def decode(self, token_ids: Sequence[int]) -> str:
        """The text of ``token_ids``, special tokens skipped (HF's ``skip_special_tokens=True``).

        Ids with no text (special, unassigned) contribute nothing.
        """
        ...

    def apply_chat_template(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None = None,
        add_generation_prompt: bool = True,
    ) -> list[int]:
        """The token ids of a chat, rendered with the model's chat template.

        Args:
            messages: OpenAI-chat-shaped messages (``{"role": ..., "content": ...}``).
            tools: OpenAI-shaped tool definitions, for templates that render them.
            add_generation_prompt: end with the assistant turn's opening, ready to generate.

        Returns:
            The prompt's token ids (special tokens of the template included).

        Raises:
            ValueError: the template cannot render these messages (e.g. no chat template).
        """
        ...


class ChatMLTokenizer:
    """cl100k_base plus ``<|im_start|>`` (100264) / ``<|im_end|>`` (100265): the embedded model's tokenizer.

    ``vocab_size`` is 100,266 ids; ``<|im_end|>`` is the end-of-sequence token.
    ``encode`` reads special-token text as plain text (user text can never
    forge a ChatML marker); the chat template is :func:`promptcache.tokens.chatml.encode_chatml`.
    """

    name = "cl100k_chatml"
    vocab_size = 100_266
    eos_token_ids = (IM_END_ID,)

    def __init__(self) -> None:
        self._encoding = chatml_encoding()
        self._decodable = self._encoding.max_token_value + 1
        self._special_ids = frozenset(self._encoding._special_tokens.values())

    def encode(self, text: str) -> list[int]:
        """cl100k token ids of ``text``; special-token text is encoded as plain text."""
        return self._encoding.encode(text, disallowed_special=())

    def decode(self, token_ids: Sequence[int]) -> str:
        """Text of ``token_ids``, special tokens skipped (like HF's ``skip_special_tokens=True``).

        Ids with no byte sequence in cl100k (100256, 100261-100263: the random
        embedded model can emit them) decode to nothing.
        """
        return self._encoding.decode([t for t in token_ids if self._is_ordinary(t)])

    def _is_ordinary(self, token_id: int) -> bool:
        if not 0 <= token_id < self._decodable or token_id in self._special_ids:
            return False
        try:
            self._encoding.decode_single_token_bytes(token_id)
        except KeyError:
            return False
        return True

    def apply_chat_template(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None = None,
        add_generation_prompt: bool = True,
    ) -> list[int]:
        """Token ids of the chat in ChatML (:func:`promptcache.tokens.chatml.encode_chatml`, shared with the SDK)."""
        return encode_chatml(messages, tools=tools, add_generation_prompt=add_generation_prompt,
                             encoding=self._encoding)


class HFTokenizer:
    """A transformers tokenizer (``AutoTokenizer.from_pretrained(path)``) behind :class:`EngineTokenizer`.

    ``encode`` adds the model's special tokens (BOS for Llama), as vLLM does
    for completion prompts; ``apply_chat_template`` uses the model's own template.

    Args:
        tokenizer: a ``PreTrainedTokenizerBase``.
        name: shown in stats (the model path).
        extra_eos_token_ids: e.g. the generation config's ``eos_token_id`` list.
    """

    def __init__(self, tokenizer: Any, name: str, extra_eos_token_ids: Sequence[int] = ()) -> None:
        self.hf_tokenizer = tokenizer
        self.name = name
        ids = tokenizer.get_vocab().values()  # added tokens included; ids may leave gaps, so not len()
        self.vocab_size = max(len(tokenizer), max(ids, default=-1) + 1)
        eos = [tokenizer.eos_token_id] if tokenizer.eos_token_id is not None else []
        self.eos_token_ids = tuple(dict.fromkeys([*eos, *extra_eos_token_ids]))

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``, with the model's special tokens (a BOS for Llama)."""
        return list(self.hf_tokenizer(text)["input_ids"])

    def decode(self, token_ids: Sequence[int]) -> str:
        """Text of ``token_ids``, special tokens skipped."""
        return self.hf_tokenizer.decode(list(token_ids), skip_special_tokens=True)

    def apply_chat_template(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None = None,
        add_generation_prompt: bool = True,
    ) -> list[int]:
        """Token ids of the model's own chat template.

        Raises:
            ValueError: the tokenizer has no chat template.
        """
        if not getattr(self.hf_tokenizer, "chat_template", None):
            raise ValueError(f"the tokenizer of {self.name} has no chat template; send token ids or plain text")
        ids = self.hf_tokenizer.apply_chat_template(
            list(messages),
            tools=list(tools) if tools else None,
            add_generation_prompt=add_generation_prompt,
            tokenize=True,
            return_dict=False,
        )
        if isinstance(ids, Mapping):  # older versions ignore return_dict
            ids = ids["input_ids"]
        return [int(t) for t in ids]
