"""The tokens of a message cut at several points, from one tokenisation, equal the direct count (issue 10)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from promptcache.tokens import chatml
from promptcache.tokens.prefix_counts import cut_message_tokens

# Characters whose pieces the cl100k expression splits in every way: letters, digits, punctuation, runs of
# spaces and line breaks, apostrophe contractions, accents and a CJK character.
ALPHABET = st.sampled_from(list("ab Z09.,!?'s\n\n  \t-_#é日\r") + ["'ll", "'re", " the", "\n\n", "   ", "..."])


@settings(max_examples=300, deadline=None)
@given(st.lists(ALPHABET, max_size=60).map("".join), st.lists(st.integers(0, 60), max_size=6))
def test_cut_counts_equal_tokenising_each_prefix(text, cuts):
    cuts = [min(c, len(text)) for c in cuts]
    assert cut_message_tokens("system", text, cuts) == [chatml.message_tokens("system", text[:c]) for c in cuts]


def test_a_long_text_is_tokenised_once(monkeypatch):
    encoding = chatml.chatml_encoding()
    seen: list[str] = []
    real = encoding.encode
    monkeypatch.setattr(encoding, "encode", lambda text, **kw: seen.append(text) or real(text, **kw))
    text = "Rules.\n\n" + "The handbook says this and that. " * 300 + "\n\nExamples follow."
    cuts = [6, len(text) - 19, len(text)]
    assert cut_message_tokens("system", text + " unique-3f1c", cuts) == [
        len(real(f"system\n{(text + ' unique-3f1c')[:c]}", disallowed_special=())) + 3 for c in cuts]
    long = [t for t in seen if len(t) > 100]
    assert len(long) == 1 and all(len(t) < 100 for t in seen if t not in long)
