# One place for every command: `make run` and `make test` are the README's quick start.
VENV ?= .venv
PY := $(VENV)/bin/python
BIN := $(VENV)/bin

.PHONY: install run demo simulate check lint types contracts unit chromium deploy-check test bench format

# Everything: the service, its tests and linters (dev) and simulate's p-value (stats).
$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,stats]'
	touch $@ $(VENV)/.runtime

# The service's own dependencies only, for `make run` and `make demo`; an .venv that has
# everything already has them.
$(VENV)/.runtime: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	touch $@

install: $(VENV)/.installed

# The embedded default: SQLite in ./raffle.db, no servers; the demo campaign on first start.
run: $(VENV)/.runtime
	$(BIN)/raffle serve

# The same on a fresh temporary database with an operator account; prints each page's URL.
demo: $(VENV)/.runtime
	$(BIN)/raffle demo

simulate: $(VENV)/.runtime
	$(PY) -m pip install --quiet -e '.[stats]'
	$(BIN)/raffle simulate examples/big-market.yaml --draws 1000000 --draw-count 3

check: lint types contracts unit

lint: install
	$(BIN)/ruff format --check src tests bench
	$(BIN)/ruff check src tests bench

format: install
	$(BIN)/ruff format src tests bench
	$(BIN)/ruff check --fix src tests bench

types: install
	$(BIN)/mypy src

contracts: install
	$(BIN)/lint-imports

unit: install
	$(BIN)/pytest tests/unit -q

# Debian's Chromium for the browser tests (Playwright drives it; it downloads no browser),
# and a CJK font, without which Chinese campaign titles render as boxes in the screenshots.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
chromium:
	@{ command -v chromium >/dev/null && fc-list :lang=zh | grep -q .; } || { \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
		$(SUDO) apt-get install -y -qq chromium fonts-wqy-microhei >/dev/null; }

# compose.yaml as Docker Compose reads it (Compose v2, or Debian's docker-compose, which needs
# no Docker daemon), and the image built where a Docker daemon answers.
COMPOSE := $(shell docker compose version >/dev/null 2>&1 && echo "docker compose" || echo docker-compose)
deploy-check:
	@command -v docker-compose >/dev/null || [ "$(COMPOSE)" = "docker compose" ] || { \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
		$(SUDO) apt-get install -y -qq docker-compose >/dev/null; }
	POSTGRES_PASSWORD=check REDIS_PASSWORD=check RABBITMQ_PASSWORD=check $(COMPOSE) config --quiet
	@if docker info >/dev/null 2>&1; then docker build --quiet --tag raffle:check .; \
	else echo "deploy-check: no Docker daemon here: the image is not built"; fi

# Every check, then the integration, end-to-end and browser tiers against real servers.
# Screenshots of the pages land in artifacts/screenshots/.
test: check chromium deploy-check
	$(BIN)/pytest tests/integration tests/e2e tests/browser -q --durations=25 -n 3 --dist loadfile

bench: install
	$(PY) bench/engine.py
