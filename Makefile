# SPEC §2: make run | test | bench | lint. Every target installs what it needs from nothing.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: run test bench lint install chromium clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test,dev]'
	touch $(STAMP)

install: $(STAMP)

# The dashboard test drives Debian's chromium through Playwright (executablePath);
# no browser download. Installed when missing and apt-get is usable; otherwise the
# browser tests skip with a message saying why.
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	      || echo "chromium could not be installed: browser tests will skip"; \
	  else echo "chromium not installed and apt-get unusable: browser tests will skip"; fi; }

run: install
	$(BIN)/multiplex --config multiplex.yaml up

test: install chromium
	$(BIN)/python -m pytest -n 2 -q

bench: install
	@for b in bench/[!_]*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check multiplex tests bench
	$(BIN)/mypy

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
