# make run | test | bench | lint (docs/design.md, README.md). Every target installs what it needs from nothing.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
CKSUM := $(shell cat pyproject.toml | cksum | cut -d' ' -f1)
# Everything (test and dev extras): `make test`, `make lint`, `make bench`.
STAMP := $(VENV)/.installed-$(CKSUM)
# What running needs, no more: `make run` (a full install counts too).
RUN_STAMP := $(VENV)/.runtime-$(CKSUM)

.PHONY: run tokens envs test bench lint install chromium redis isolation clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test,dev]'
	$(BIN)/python -m compileall -q multiplex >/dev/null
	touch $(STAMP) $(RUN_STAMP)

$(RUN_STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e .
	$(BIN)/python -m compileall -q multiplex >/dev/null
	touch $(RUN_STAMP)

install: $(STAMP)

# docs/execution.md: the sandbox, container and ssh tests use the real tools. Each
# missing one is installed when apt-get is usable; otherwise those tests skip and say why.
ISOLATION_TOOLS := bwrap:bubblewrap podman:podman runc:runc busybox:busybox-static \
	sshd:openssh-server ssh:openssh-client curl:curl nsenter:util-linux
isolation:
	@missing=""; for pair in $(ISOLATION_TOOLS); do \
	  cmd=$${pair%%:*}; pkg=$${pair##*:}; \
	  PATH="$$PATH:/usr/sbin:/sbin" command -v $$cmd >/dev/null 2>&1 || missing="$$missing $$pkg"; done; \
	if [ -n "$$missing" ]; then \
	  if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null) \
	      || echo "could not install$$missing: their tests will skip"; \
	  else echo "not installed:$$missing and apt-get unusable: their tests will skip"; fi; fi

# The dashboard test drives Debian's chromium through Playwright (executablePath);
# no browser download. Installed when missing and apt-get is usable; otherwise the
# browser tests skip with a message saying why.
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	      || echo "chromium could not be installed: browser tests will skip"; \
	  else echo "chromium not installed and apt-get unusable: browser tests will skip"; fi; }

# The cluster tests start Debian's redis-server on a loopback port (never a fake);
# installed when missing and apt-get is usable, otherwise those tests skip saying why.
redis:
	@command -v redis-server >/dev/null 2>&1 || { \
	  if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null) \
	      || echo "redis-server could not be installed: cluster tests will skip"; \
	  else echo "redis-server not installed and apt-get unusable: cluster tests will skip"; fi; }

# The example homes ship profiles/*/.env.example (tracked) and no .env: each home's
# .env (untracked, mode 0600) is made from its example when missing. The example homes
# ship no working token (docs/security.md#tokens-and-ids): the first `make run` writes a
# random MULTIPLEX_TOKEN into each profiles/*/.env that lacks one of 24+ characters, and
# says where; no tracked file changes.
run: $(RUN_STAMP) tokens
	$(BIN)/multiplex --config multiplex.yaml up

envs:
	@for example in profiles/*/.env.example; do \
	  [ -e "$$example" ] || continue; \
	  env="$${example%.example}"; [ -e "$$env" ] && continue; \
	  install -m 600 "$$example" "$$env"; done

tokens: envs
	@for env in profiles/*/.env; do \
	  grep -Eq '^[[:space:]]*(export[[:space:]]+)?MULTIPLEX_TOKEN[[:space:]]*=[[:space:]]*["'"'"']?[^[:space:]"'"'"']{24,}' "$$env" && continue; \
	  sed -Ei '/^[[:space:]]*(export[[:space:]]+)?MULTIPLEX_TOKEN[[:space:]]*=/d' "$$env"; \
	  [ -z "$$(tail -c1 "$$env")" ] || echo >> "$$env"; \
	  echo "MULTIPLEX_TOKEN=$$($(BIN)/python -c 'import secrets; print(secrets.token_urlsafe(32))')" >> "$$env"; \
	  echo "make run: generated a profile token: MULTIPLEX_TOKEN in $$env"; \
	done

# Bytecode is written even where the environment says not to (PYTHONDONTWRITEBYTECODE):
# each CLI, gateway and hook the tests start would otherwise compile every module
# anew, about 0.3 s a process (docs/operations.md#starting-fast).
test: install envs chromium redis isolation
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n 2 -q

bench: install redis
	@failed=""; for b in bench/[!_]*.py; do echo "== $$b"; $(BIN)/python $$b || failed="$$failed $$b"; done; \
	if [ -n "$$failed" ]; then echo "benchmarks that failed:$$failed"; exit 1; fi

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check multiplex tests bench
	$(BIN)/mypy

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
