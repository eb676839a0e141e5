"""The minimum PC102 weighs a one-shot request against, when its model is a configuration field's default
(promptcache.lint.model_minimum; open_deep_research's ``Configuration.writer_model = "gpt-4.1"``, blind set 12)."""

from __future__ import annotations

import json
import textwrap

import libcst as cst

from promptcache.lint.index import Indexer
from promptcache.lint.model_minimum import model_defaults
from promptcache.lint.walk import walk

# 2,450 characters: about 612 tokens, above the 512-token fallback and below OpenAI's 1,024
PROMPTS = f'PLANNER = """{"Plan it well. " * 175}{{topic}}"""\n'
CONFIGURATION = textwrap.dedent("""\
    from dataclasses import dataclass

    @dataclass(kw_only=True)
    class Configuration:
        planner_provider: str = "openai"
        writer_model: str = "gpt-4.1"

        @classmethod
        def from_runnable_config(cls, config=None):
            return cls(**((config or {}).get("configurable") or {}))

    Configuration = Configuration
""")
GRAPH = textwrap.dedent("""\
    from langchain.chat_models import init_chat_model
    from langchain_core.messages import HumanMessage, SystemMessage
    from .configuration import Configuration
    from .prompts import PLANNER

    def get_config_value(value):
        return value if isinstance(value, str) else value.value

    async def write(state, config):
        configurable = Configuration.from_runnable_config(config)
        writer_model = get_config_value(configurable.writer_model)
        model = init_chat_model(model=writer_model)
        system = PLANNER.format(topic=state["topic"])
        return await model.ainvoke([SystemMessage(content=system), HumanMessage(content="Write it.")])
""")


def _found(run_cli, path, *extra):
    _, out, _ = run_cli("lint", str(path), "--output-format", "json", "--select", "PC102", *extra)
    return [(f["path"].rsplit("/", 1)[-1], f["line"], f["severity"], f["message"]) for f in json.loads(out)]


def test_an_imported_configuration_default_sets_the_minimum(write_tree, run_cli):
    root = write_tree({"app/__init__.py": "", "app/prompts.py": PROMPTS, "app/configuration.py": CONFIGURATION,
                       "app/graph.py": GRAPH})
    [(name, line, severity, message)] = _found(run_cli, root, "--no-cache")
    assert (name, line, severity) == ("graph.py", 14, "info")
    # PLANNER (2,457 characters, its "{topic}" counted) + "Write it." (9) = 2,466: 616 tokens at 4 a token
    assert ("at about 616 tokens this one-shot request is below the 1,024-token minimum cacheable length "
            "(gpt-4.1, the default of Configuration.writer_model)") in message
    assert _found(run_cli, root) == _found(run_cli, root)  # the second run reads graph.py's weight from the cache
    assert _found(run_cli, root)[0][2] == "info"
    # without the configuration module the model is unknown: 614 tokens are above the 512-token fallback
    (root / "app" / "configuration.py").unlink()
    assert [f[2] for f in _found(run_cli, root, "--no-cache")] == ["warning"]


def test_a_default_of_this_module_sets_the_minimum_and_an_unlisted_one_does_not(tmp_path, run_cli):
    body = textwrap.dedent("""\
        import openai
        from pydantic import BaseModel, Field
        client = openai.OpenAI()

        class Settings(BaseModel):
            chat_model: str = Field(default="MODEL")

        settings = Settings()

        def ask(q, user):
            return client.chat.completions.create(model=settings.chat_model, messages=[
                {"role": "system", "content": f"TEXT You talk to {user.name}."}, {"role": "user", "content": q}])
    """).replace("TEXT", "Plan it well. " * 175)
    (tmp_path / "listed.py").write_text(body.replace("MODEL", "gpt-4o-mini"))
    (tmp_path / "unlisted.py").write_text(body.replace("MODEL", "llama3.1:8b"))
    found = {name: (severity, message) for name, _, severity, message in _found(run_cli, tmp_path, "--no-cache")}
    assert found["listed.py"][0] == "info"
    assert "below the 1,024-token minimum cacheable length (gpt-4o-mini, the default of Settings.chat_model)" \
        in found["listed.py"][1]
    assert found["unlisted.py"][0] == "warning"  # not in the providers data: the 512-token fallback applies


def test_model_defaults_reads_model_named_fields_with_a_listed_default():
    module = cst.parse_module(textwrap.dedent("""\
        from pydantic import BaseModel, Field
        class Config(BaseModel):
            model: str = "gpt-4.1"
            small_model = "gpt-4o-mini"
            judge_model: str = Field("claude-sonnet-4-5", description="judge")
            writer_model: str = Field(default="gpt-4o")
            local_model: str = "llama3.1:8b"
            summary: str = "gpt-4.1"
            model_kwargs: dict = {}
        class Twice:
            model = "gpt-4.1"
        class Twice:
            model = "gpt-4o"
    """))
    indexer = Indexer()
    walk(module, [indexer])
    assert model_defaults(indexer.index) == {
        "Config.model": "gpt-4.1", "Config.small_model": "gpt-4o-mini", "Config.judge_model": "claude-sonnet-4-5",
        "Config.writer_model": "gpt-4o"}
