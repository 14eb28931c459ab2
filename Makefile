# assay: every entry point a developer or CI needs.
#   make run    create the virtualenv, load the bundled real sample data into a fresh
#               SQLite store and start the server
#   make test   ruff, mypy --strict and the whole pytest suite (SQLite and PostgreSQL)
#   make bench  the benchmarks in bench/, against the named peers, printing ratios
#   make lint   ruff and mypy only
#   make lock   refresh the hash-checked locks in requirements/ from pyproject.toml

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
HOST   ?= 127.0.0.1
PORT   ?= 8000
RUN_STORE ?= sqlite:///$(CURDIR)/.venv/run-store.db
export ASSAY_TEST_POSTGRES_URL ?= postgresql://postgres@127.0.0.1:5432/test

.PHONY: install lock run test lint pytest bench clean

# Everything installed comes from the hash-checked lock (requirements/dev.lock); assay itself
# is installed on top without resolving again. `make lock` refreshes the locks (docs/deploy.md).
$(STAMP): pyproject.toml requirements/dev.lock
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "assay needs Python 3.11 or newer"'
	@$(PYTHON) -c 'import ensurepip' 2>/dev/null || { \
	  echo "installing python3-venv (Debian)"; \
	  apt-get update -qq && apt-get install -y -qq python3-venv; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --require-hashes --no-deps -r requirements/dev.lock
	$(BIN)/pip install -q --no-deps -e .
	@touch $(STAMP)

# Resolve pyproject.toml's ranges again and pin every package with its hashes. nvd-api (a test
# peer) declares urllib3<2, which sigstore's TUF client cannot import with; nvd-api's tests
# pass on urllib3 2, so requirements/overrides.txt lifts that one pin.
LOCK_FLAGS := --universal --python-version 3.11 --generate-hashes --no-header -q
lock: $(STAMP)
	$(BIN)/pip install -q uv
	$(BIN)/uv pip compile pyproject.toml --extra dev --extra redis $(LOCK_FLAGS) \
	  --override requirements/overrides.txt -o requirements/dev.lock
	$(BIN)/uv pip compile pyproject.toml --extra postgres --extra redis $(LOCK_FLAGS) \
	  -o requirements/runtime.lock

install: $(STAMP)

run: $(STAMP)
	rm -f $(subst sqlite:///,,$(RUN_STORE))*
	$(BIN)/assay nvd import --store $(RUN_STORE) --bundled
	@$(BIN)/python tools/run_server.py $(HOST) $(PORT) -- $(BIN)/assay serve --store $(RUN_STORE) --host $(HOST) --port $(PORT) --access-log

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/pytest -n 2 -q

test: lint pytest

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
