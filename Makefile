# Two entry points set up a fresh machine from nothing but python3 (>= 3.11):
#   make demo   - create .venv, install everything, run the main job on the embedded example
#   make test   - create .venv, install everything, run the test suite
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: setup browser demo test figures docs bench clean

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

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
