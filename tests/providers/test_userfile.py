"""User rules (``--providers FILE``, ``[tool.promptcache.providers]``), ``promptcache providers`` and staleness."""

from __future__ import annotations

import datetime as dt
import json
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from promptcache.cli import main
from promptcache.providers import datafile, profiles
from promptcache.providers.profiles import UnknownModelWarning, model_profile
from promptcache.providers.userfile import ProvidersFileError, use_user_rules
from promptcache.trace.records import TraceRecord, write_trace

CONTRACT = """
[sources.contract]
title = "our enterprise price sheet"
read = 2026-11-30

[[providers.anthropic.models]]
id = "claude-sonnet-4-5"
input_usd_per_mtok = 2.4
price_source = "contract"

[[providers.anthropic.models]]
id = "claude-internal-1"
min_cacheable_tokens = 2048
read_multiplier = 0.05
"""


def run(*args: str, cwd: Path | None = None):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def test_a_file_overrides_and_adds_models(tmp_path: Path) -> None:
    path = tmp_path / "rules.toml"
    path.write_text(CONTRACT)
    assert use_user_rules(path) == str(path)
    sonnet = model_profile("anthropic", "claude-sonnet-4-5")
    assert sonnet.input_usd_per_mtok == 2.4 and sonnet.sources["input_usd_per_mtok"] == "contract, read 2026-11-30"
    assert sonnet.output_usd_per_mtok == 15.0 and sonnet.min_cacheable_tokens == 1024  # the rest stays
    assert sonnet.sources["min_cacheable_tokens"] == "anthropic_caching_doc, dated 2026-08-21, read 2026-12-02"
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnknownModelWarning)
        added = model_profile("anthropic", "claude-internal-1")
    assert (added.known, added.min_cacheable_tokens, added.read_multiplier) == (True, 2048, 0.05)
    assert added.sources["min_cacheable_tokens"].startswith("user_file, read ")
    assert added.write_multipliers == {"5m": 1.25, "1h": 2.0}  # provider defaults
    datafile.install_user_rules(None)
    from promptcache.providers.profiles import clear_cache
    clear_cache()
    assert model_profile("anthropic", "claude-sonnet-4-5").input_usd_per_mtok == 3.0


def test_pyproject_table(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("""
[project]
name = "app"

[tool.promptcache.providers.openai]
min_cacheable_tokens = 1024

[[tool.promptcache.providers.openai.models]]
id = "gpt-4.1-mini"
read_multiplier = 0.2
""")
    (tmp_path / "src").mkdir()
    origin = use_user_rules(start=tmp_path / "src")
    assert origin == f"{tmp_path / 'pyproject.toml'} [tool.promptcache.providers]"
    mini = model_profile("openai", "gpt-4.1-mini")
    assert mini.read_multiplier == 0.2 and mini.sources["read_multiplier"].startswith("user_file, read ")
    assert mini.input_usd_per_mtok == 0.4 and mini.sources["input_usd_per_mtok"].startswith("openai_pricing_2026")
    assert mini.sources["default_ttl"] == "openai_guide, read 2026-12-02"
    # the provider minimum set by the user is theirs, and no longer "assumed"
    assert mini.sources["min_cacheable_tokens"].startswith("user_file") and mini.assumed == {"routing_prefix_tokens"}


@pytest.mark.parametrize(("text", "message"), [
    ("[[providers.anthropic.models]]\nid = 'x'\nmin_tokens = 5\n",
     "[providers.anthropic] models[0] (id 'x'): unknown field 'min_tokens'; did you mean 'min_cacheable_tokens'?"),
    ("[[providers.anthropic.models]]\nid = 'x'\nread_multiplier = 'cheap'\n",
     "(id 'x'): field read_multiplier='cheap': expected a number >= 0"),
    ("[providers.mistral]\nread_multiplier = 0.1\n",
     "unknown provider 'mistral': a rules file can change or add models of anthropic, openai, gemini, deepseek"),
    ("[[providers.openai.models]]\nmin_cacheable_tokens = 5\n", "models[0]: each entry needs id = \"...\""),
    ("[[providers.openai.models]]\nid = 'x'\nsource = 'nowhere'\n", "source 'nowhere' is not a [sources.nowhere] table"),
    ("[[providers.openai.models]]\nid = 'x'\nretired = 'soon'\n", "retired must be a date (retired = 2026-07-24)"),
    ("[providers.openai\n", "not valid TOML"),
    ("[[providers.openai.families]]\nname = 'mine'\nmatch = '^(gpt'\n", "(name 'mine'): match is not a regular expression"),
])
def test_a_malformed_file_is_a_clear_error(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "rules.toml"
    path.write_text(text)
    with pytest.raises(ProvidersFileError) as error:
        use_user_rules(path)
    assert str(error.value).startswith(str(path)) and message in str(error.value)
    assert datafile.user_rules_origin() is None  # nothing installed


def test_simulate_takes_a_rules_file_and_refuses_a_bad_one(tmp_path: Path) -> None:
    body = {"model": "claude-internal-1", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
    trace = tmp_path / "t.jsonl"
    write_trace(trace, [TraceRecord(0.0, "anthropic.messages", "s", body)])
    rules = tmp_path / "rules.toml"
    rules.write_text(CONTRACT)
    result = run("simulate", trace, "--providers", rules, "--format", "json")
    assert result.exit_code == 0 and "has no entry" not in result.stderr
    rules.write_text("[providers.anthropic]\nmax_breakpoints = -1\n")
    result = run("simulate", trace, "--providers", rules)
    assert result.exit_code == 2
    assert result.stderr.strip() == (f"error: {rules} [providers.anthropic]: field max_breakpoints=-1: expected a "
                                     f"whole number >= 0 (or null: no limit)")


def test_staleness_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 14, Build 4: `simulate` warns once when the data is older than 90 days."""
    monkeypatch.setattr(datafile, "STALE_AFTER_DAYS", 90)
    reviewed = datafile.reviewed_on()
    assert datafile.stale_warning(reviewed + dt.timedelta(days=90)) is None
    text = datafile.stale_warning(reviewed + dt.timedelta(days=91))
    assert text.startswith(f"the provider cache rules were last checked against the providers' docs on "
                           f"{reviewed.isoformat()} (91 days ago)")
    monkeypatch.setattr(datafile, "_stale_warned", set())
    with pytest.warns(datafile.StaleDataWarning) as record:
        datafile.warn_if_stale(reviewed + dt.timedelta(days=200))
        datafile.warn_if_stale(reviewed + dt.timedelta(days=200))
    assert len(record) == 1


def test_staleness_counts_from_the_documents_date(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Review 14 item 2: a value read on 2026-12-02 from a document of 2026-08-21 ([A-PC], the audit's Sources) is
    103 days old on 2026-12-02: simulate warns about the model, naming the document's date."""
    monkeypatch.setattr(datafile, "today", lambda: dt.date(2026, 12, 2))
    monkeypatch.setattr(datafile, "_stale_warned", set())
    assert datafile.stale_warning() is None  # the file itself was reviewed today
    text = datafile.stale_models_warning({"claude-sonnet-4-5": dt.date(2026, 8, 21), "x": None})
    assert text.startswith("the cache rules or prices used for claude-sonnet-4-5 (2026-08-21, 103 days ago) come "
                           "from documents older than 90 days")
    body = {"model": "claude-sonnet-4-5", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]}
    trace = tmp_path / "t.jsonl"
    write_trace(trace, [TraceRecord(0.0, "anthropic.messages", "s", body)])
    result = run("simulate", trace)
    assert result.exit_code == 0
    assert ("warning: the cache rules or prices used for claude-sonnet-4-5 (2026-08-21, 103 days ago)"
            in " ".join(result.stderr.split()))


def test_the_assumed_note_names_values_not_python_reprs() -> None:
    """Review 14 item 9: no mappingproxy repr, and only the TTLs the model offers (Bedrock Claude 3.7 Sonnet: 5m)."""
    profiles.clear_cache()
    note = profiles.model_profile(None, "us.anthropic.claude-3-7-sonnet-20250219-v1:0").assumed_note()
    assert "mappingproxy" not in note and "1h" not in note
    assert note.endswith("read_multiplier=0.1, write_multipliers=5m:1.25")
    assert profiles.model_profile(None, "anthropic.claude-sonnet-4-5-20250929-v1:0").assumed_note().endswith(
        "write_multipliers=5m:1.25 1h:2")


def test_simulate_prints_the_staleness_and_assumed_values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(datafile, "STALE_AFTER_DAYS", -1)  # any age is too old
    monkeypatch.setattr(datafile, "_stale_warned", set())
    body = {"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": "hi"}]}
    trace = tmp_path / "t.jsonl"
    write_trace(trace, [TraceRecord(0.0, "openai.chat", "s", body)])
    result = run("simulate", trace)
    assert result.exit_code == 0
    assert result.stderr.count("warning: the provider cache rules were last checked") == 1
    assert ("note: assumed for gpt-4.1-mini (no source settles them; override with --rule or --providers): "
            "min_cacheable_tokens=1024, routing_prefix_tokens=256") in " ".join(result.output.split())


def test_providers_command_plain_at_80_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    result = run("providers")
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 80
    assert not any(ch in result.output for ch in "│┃━…")  # no vertical rules, nothing cut
    row = next(line for line in lines if line.startswith("claude-haiku-5-5 "))
    assert row.split()[:6] == ["claude-haiku-5-5", "512", "0.1", "1.25/2", "5m", "1h"]
    assert ">100k:" in result.output and "0.5/2.5" in result.output  # Haiku 5.5's tier, whole
    assert next(line for line in lines if line.startswith("claude-mythos-5-2 ")).split()[1:3] == ["512*", "0.025*"]
    assert "retired model(s) not shown (--all lists them)" in result.output
    assert "deepseek-chat" not in result.output and "deepseek-chat" in run("providers", "--all").output


def test_providers_json_carries_sources_and_dates() -> None:
    result = run("providers", "--json", "--provider", "deepseek", "--all")
    document = json.loads(result.output)
    chat = next(m for m in document["models"] if m["model"] == "deepseek-chat")
    assert chat["retired"] == "2026-07-24" and chat["successor"] == "deepseek-flash"
    assert chat["sources"]["retired"] == "deepseek_retirement, dated 2026-04-24, read 2026-12-02"
    flash = next(m for m in document["models"] if m["model"] == "deepseek-flash")
    assert flash["read_multiplier"] == 0.02 and flash["assumed"] == ["min_cacheable_tokens"]
    assert flash["as_of"] == "2026-12-02" and document["reviewed"] == datafile.reviewed_on().isoformat()
    past = json.loads(run("providers", "--json", "--provider", "anthropic", "--as-of", "2026-04-01").output)
    assert next(m for m in past["models"] if m["model"] == "claude-sonnet-4-6")["min_cacheable_tokens"] == 2048


def test_aliases_must_be_a_list_of_model_ids(tmp_path: Path) -> None:
    """Review 14 item 10: `aliases = "claude-y"` was split into characters ("c", "l", ...), so every id starting
    with "c" plus a snapshot-like suffix matched; it is a usage error now, and a list works."""
    path = tmp_path / "rules.toml"
    path.write_text('[[providers.anthropic.models]]\nid = "claude-x"\naliases = "claude-y"\nmin_cacheable_tokens = 512\n')
    with pytest.raises(ProvidersFileError, match=r"aliases must be a list of model ids \(aliases = \[\"claude-y\"\]\), "
                                                 r"not 'claude-y'"):
        use_user_rules(path)
    path.write_text('[[providers.anthropic.models]]\nid = "claude-x"\naliases = ["claude-y"]\n'
                    'min_cacheable_tokens = 512\n')
    try:
        use_user_rules(path)
        with warnings.catch_warnings():
            warnings.simplefilter("error", UnknownModelWarning)
            assert model_profile("anthropic", "claude-y").min_cacheable_tokens == 512
    finally:
        datafile.install_user_rules(None)
        profiles.clear_cache()
    path.write_text('[sources.sheet]\ntitle = "t"\nread = 2026-11-30\ndated = "last week"\n')
    with pytest.raises(ProvidersFileError, match="dated .* must be a date"):
        use_user_rules(path)


def test_bedrock_sources_have_short_labels_and_secondary_marks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Review 14 item 7: the Bedrock sources carry `cite` (the source cell is short labels, not raw keys over three
    lines) and the third-party ones (Portkey copy, Strands, GitHub issues, LiteLLM PR #49, agent-toolkit) say
    secondary (provider-audit-2026-12.md, Sources [B-*])."""
    monkeypatch.setenv("COLUMNS", "80")
    result = run("providers", "--provider", "bedrock")
    assert result.exit_code == 0
    assert "bedrock_user_guide = bedrock_user_guide" not in result.output
    assert "B-UG = bedrock_user_guide, read 2026-12-02: Amazon Bedrock user guide" in result.output
    for label, key in (("B-T", "bedrock_model_table"), ("B-S", "bedrock_strands"), ("B-1H", "bedrock_ttl_1h"),
                       ("B-49", "bedrock_litellm_pr49")):
        line = next(line for line in result.output.splitlines() if line.startswith(f"{label} = {key}, "))
        assert "(secondary)" in line
    rules = datafile.load_rules()["sources"]
    assert {k for k, v in rules.items() if k.startswith("bedrock_") and v.get("secondary")} == {
        "bedrock_model_table", "bedrock_strands", "bedrock_ttl_1h", "bedrock_litellm_pr49", "bedrock_lookback"}
    assert all("cite" in v for k, v in rules.items() if k.startswith("bedrock_"))
    table = result.output.split("Rules data reviewed")[0]
    assert "bedrock_" not in table  # the source cells hold labels only


def test_docs_name_every_simulated_provider(tmp_path: Path) -> None:
    """Review 14 item 12: docs/providers.md said "the four that are simulated" and its error example left out
    bedrock; the example is now the command's own message."""
    doc = (Path(__file__).parents[2] / "docs" / "providers.md").read_text()
    path = tmp_path / "rules.toml"
    path.write_text("[providers.mistral]\nmin_cacheable_tokens = 1\n")
    result = run("providers", "--providers", path)
    assert result.exit_code == 2
    message = result.stderr.strip().split(f"{path}: ", 1)[1]  # after the file name
    assert f"error: rules.toml: {message}" in doc
    assert f"the five that are simulated ({', '.join(datafile.PROVIDERS)})" in doc
