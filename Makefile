# Two entry points set up a fresh machine from nothing but python3 (>= 3.11):
#   make demo   - create .venv, install everything, run the main job on the embedded example
#   make test   - create .venv, install everything, run the test suite
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: setup demo test bench clean

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

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
