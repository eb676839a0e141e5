"""A tokenizer with more ids than the model embeds: refused at load only when every request would use such an id
(bos / eos, the chat template's markers), else loaded with one warning and such ids refused per request."""

from __future__ import annotations

import re
import warnings

import pytest
from backend_support import VOCAB, cpu_engine, save_tiny_model_dir, tiny_qwen2, tiny_tokenizer
from fastapi.testclient import TestClient

from local_backend import ModelLoadError, OutOfVocabularyError, SamplingParams, VocabularyWarning
from local_backend.models import check_vocabularies
from local_backend.server import create_app
from local_backend.tokenizer import ChatMLTokenizer, HFTokenizer

GREEDY = SamplingParams(max_tokens=2, temperature=0.0, ignore_eos=True)


def _vocabulary_warnings(caught) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, VocabularyWarning)]


def test_unused_added_tokens_past_the_embedding_load_with_one_warning_and_are_refused_per_request(tmp_path):
    # like Gemma 3 1B (262,145 tokenizer ids, 262,144 rows): added tokens the model has no embedding for
    save_tiny_model_dir(tmp_path, added_tokens=("<extra_0>", "<extra_1>", "<extra_2>"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        engine = cpu_engine(str(tmp_path), num_blocks=64)
    assert _vocabulary_warnings(caught) == [
        f"the tokenizer {tmp_path} has 3 token ids past the 512 embedding rows of the model {tmp_path} (added "
        "tokens the model has no embedding for); the ids every request uses (bos / eos, chat template) are within "
        "them, so the model is served, and a prompt holding such an id is refused"]
    assert (engine.tokenizer.vocab_size, engine.loaded.vocab_size) == (VOCAB + 3, VOCAB)
    chat = engine.tokenizer.apply_chat_template([{"role": "user", "content": "w3 w4"}])
    (out,) = engine.generate([chat], GREEDY)
    assert len(out.outputs[0].token_ids) == 2
    with pytest.raises(OutOfVocabularyError, match=re.escape(
            "token id 513 at position 1 is outside the model's vocabulary [0, 512)")):
        engine.generate("w1 <extra_1> w2", GREEDY)
    with TestClient(create_app(engine, default_max_tokens=2)) as client:  # the server: 200 below, 400 past
        reply = client.post("/v1/chat/completions", json={"model": "m", "messages": [
            {"role": "user", "content": "w3 w4"}]})
        assert reply.status_code == 200 and reply.json()["usage"]["prompt_tokens"] == len(chat)
        refused = client.post("/v1/completions", json={"model": "m", "prompt": "w1 <extra_1> w2"})
        assert refused.status_code == 400
        assert "token id 513 at position 1 is outside the model's vocabulary [0, 512)" in refused.text
        assert client.get("/health").status_code == 200  # the server keeps serving


def test_a_qwen2_model_object_with_such_a_tokenizer_loads_with_one_warning_too():
    tokenizer = tiny_tokenizer(added_tokens=("<extra_0>",))  # in memory: named by its class
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        engine = cpu_engine(tiny_qwen2(), tokenizer=tokenizer, num_blocks=16)
    assert _vocabulary_warnings(caught) == [
        f"the tokenizer {type(tokenizer).__name__} has 1 token id past the 512 embedding rows of the model "
        "Qwen2ForCausalLM (added tokens the model has no embedding for); the ids every request uses (bos / eos, chat template) are within "
        "them, so the model is served, and a prompt holding such an id is refused"]
    (out,) = engine.generate("w1 w2", GREEDY)
    assert out.prompt_token_ids == [6, 7] and len(out.outputs[0].token_ids) == 2


def test_the_chatml_tokenizer_on_a_small_model_is_refused_naming_the_template_ids(llama_model):
    with pytest.raises(ModelLoadError) as refused:
        cpu_engine(llama_model, tokenizer=ChatMLTokenizer())
    assert str(refused.value) == (
        "the tokenizer cl100k_chatml uses token ids past the 512 embedding rows of the model LlamaForCausalLM "
        "(ids 0-511) in every request: 882 (chat template), 78191 (chat template), 100264 (chat template), "
        "100265 (eos token); every request would be refused. Pass a tokenizer with the model's vocabulary")


def test_a_model_folder_whose_own_eos_is_past_the_embedding_is_refused_without_the_omit_advice(tmp_path):
    save_tiny_model_dir(tmp_path, added_tokens=("<end>",), eos_token="<end>")
    with pytest.raises(ModelLoadError) as refused:
        cpu_engine(str(tmp_path))
    assert str(refused.value) == (
        f"the tokenizer {tmp_path} uses token ids past the 512 embedding rows of the model {tmp_path} (ids 0-511) "
        "in every request: 512 (eos token); every request would be refused. The folder's tokenizer does not match "
        "its weights: pass --tokenizer PATH with the model's vocabulary")


def test_a_pad_token_past_the_embedding_is_only_warned_about_the_engine_never_pads():
    # Llama-2's tokenizer adds <pad> as id 32,000 to a 32,000-row model (transformers#24899)
    tokenizer = HFTokenizer(tiny_tokenizer(pad_token="<pad>"), "m")
    assert tokenizer.hf_tokenizer.pad_token_id == VOCAB
    with pytest.warns(VocabularyWarning, match="has 1 token id past the 512 embedding rows"):
        check_vocabularies(tokenizer, VOCAB, "m", "advice")


def test_the_vocabulary_size_is_the_largest_id_plus_one_where_ids_leave_gaps():
    from tokenizers import Tokenizer, models
    from transformers import PreTrainedTokenizerFast

    hf = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.WordLevel({"<unk>": 0, "a": 1, "b": 700},
                                                                             unk_token="<unk>")), unk_token="<unk>")
    assert len(hf) == 3 and HFTokenizer(hf, "gaps").vocab_size == 701
    with pytest.warns(VocabularyWarning, match="has 1 token id past the 600 embedding rows"):
        check_vocabularies(HFTokenizer(hf, "gaps"), 600, "m", "advice")  # len() == 3 would have seen nothing
