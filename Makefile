# assay: every entry point a developer or CI needs.
#   make run    create the virtualenv, load the bundled real sample data into a fresh
#               SQLite store and start the server
#   make test   ruff, mypy --strict and the whole pytest suite (SQLite and PostgreSQL)
#   make bench  the benchmarks in bench/, against the named peers, printing ratios
#   make lint   ruff and mypy only

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
HOST   ?= 127.0.0.1
PORT   ?= 8000
RUN_STORE ?= sqlite:///$(CURDIR)/.venv/run-store.db
export ASSAY_TEST_POSTGRES_URL ?= postgresql://postgres@127.0.0.1:5432/test

.PHONY: install run test lint pytest bench clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "assay needs Python 3.11 or newer"'
	@$(PYTHON) -c 'import ensurepip' 2>/dev/null || { \
	  echo "installing python3-venv (Debian)"; \
	  apt-get update -qq && apt-get install -y -qq python3-venv; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	# nvd-api (a test peer) declares urllib3<2, which sigstore's TUF client cannot import
	# with; nvd-api's tests pass on urllib3 2, so the newer one is installed over it.
	$(BIN)/pip install -q 'urllib3>=2,<3'
	@touch $(STAMP)

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
