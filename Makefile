# gpuledger: `make demo` runs the whole thing on a simulated fleet, `make test` runs the tests.
# Both create .venv and install the project first, so they work on a fresh machine.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
DEMO   := data/demo
START  ?= 2026-10-29
DAYS   ?= 7
SEED   ?= 7
END    := $(shell date -u -d "$(START) +$$(( $(DAYS) - 1 )) days" +%F)
export DAGSTER_HOME := $(CURDIR)/dagster_home

.PHONY: setup demo demo-reports ui serve test test-fast test-deep clean bench bench-cur system-deps

# The runtime alone for the demo and the UI; the test tools and pyspark (`.[dev]`) only for `make test`,
# pyspark alone (`.[spark]`) for `make bench ENGINE=spark`.
PIP := $(BIN)/pip install --quiet --disable-pip-version-check
$(BIN)/gpuledger: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) -e .
	touch $@

$(VENV)/.dev: $(BIN)/gpuledger
	$(PIP) -e '.[dev]'
	touch $@

$(VENV)/.spark: $(BIN)/gpuledger
	$(PIP) -e '.[spark]'
	touch $@

setup: $(BIN)/gpuledger

demo: setup
	$(BIN)/gpuledger simulate --out $(DEMO) --start $(START) --days $(DAYS) --seed $(SEED) --mig-node
	$(BIN)/gpuledger run --landing $(DEMO)/landing --config $(DEMO)/gpuledger.yaml --start $(START) --end $(END)
	@$(MAKE) --no-print-directory demo-reports
	@echo "Finance SQL against the published warehouse (bill + config costs = allocated, per day and currency):"
	@echo "  $(BIN)/gpuledger query \"SELECT day, billing_currency AS cur, bill_effective_cost AS bill, config_effective_cost AS config, allocated_effective_cost AS allocated, complete FROM finance.reconciliation_daily ORDER BY 1, 2\""
	@echo "Open the same definitions in the Dagster UI:   make ui   (then http://127.0.0.1:$(UI_PORT))"
	@echo "Serve the pages, the API and /metrics:          make serve   (then http://127.0.0.1:$(SERVE_PORT)/)"

# Each team's month report for every month the demo's days touch (START to END: October and November
# by default), so the reports cover what the run's summary does; a month report rather than one over
# the range, as finance and budgets count by month and `report` takes a day or a month. Then the
# organisation's page of END's month (data/reports/index.html, linking them), listed first.
demo-reports:
	@echo
	@echo "Waste reports per team (HTML, Markdown, CSV), one per month of $(START) to $(END) beside one per day:"
	@rows=$$($(BIN)/gpuledger query --csv "SELECT DISTINCT team, strftime(day, '%Y-%m') AS month FROM marts.fct_cost_daily WHERE team <> '_unallocated' AND day BETWEEN DATE '$(START)' AND DATE '$(END)' ORDER BY 1, 2") || exit 1; \
	listed=$$(echo "$$rows" | tail -n +2 | while IFS=, read -r team month; do \
	  paths=$$($(BIN)/gpuledger report --team "$$team" --month "$$month") || exit 1; \
	  echo "$$paths" | grep '\.html$$' | sed 's/^/  /'; \
	done) || exit 1; \
	org=$$($(BIN)/gpuledger report --org --month $(shell echo $(END) | cut -c1-7)) || exit 1; \
	echo "$$org" | grep '\.html$$' | sed 's/^/  Organisation: /'; \
	echo "$$listed"
	@echo "  open one in a browser, e.g.  xdg-open data/reports/pretrain/$(shell echo $(END) | cut -c1-7).html"
	@echo

# The Dagster UI (webserver and daemon) over the demo's landing zone, config and warehouse; Ctrl-C stops it.
UI_PORT ?= 3000
SERVE_PORT ?= 8765
# gpuledger serve over the demo's published warehouse (docs/serve.md); Ctrl-C stops it
serve: setup
	@test -f $(DEMO)/gpuledger.yaml || { echo "no demo in $(DEMO): run make demo first"; exit 2; }
	$(BIN)/python -m pipelines.cli serve --config $(DEMO)/gpuledger.yaml --port $(SERVE_PORT)

ui: setup
	@test -d $(DEMO)/landing || { echo "no demo landing zone at $(DEMO)/landing: run make demo first"; exit 2; }
	$(BIN)/gpuledger ui --landing $(DEMO)/landing --config $(DEMO)/gpuledger.yaml --port $(UI_PORT)

# The tests run on every core (pytest-xdist); a file's tests stay on one worker, so the ledger a module
# builds once is built once, and the longest files go first (tests/conftest.py says how). TEST_WORKERS=0
# runs them in this process. The 40 slowest tests are listed at the end: where CI's time goes.
TEST_WORKERS ?= auto
PYTEST = $(BIN)/pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder
test: $(VENV)/.dev
	$(PYTEST) --durations=40

# While iterating: the unit tests and the docs' tests, but none that needs a simulated world run through
# the pipeline (`world`: make test runs those).
test-fast: $(VENV)/.dev
	$(PYTEST) -m 'not world' tests/unit tests/e2e/test_docs.py

# Before a change to what the property and kill tests guard: the same suite drawing four times as many
# corrupted landings, hostile values and kill moments (tests/support/depth.py).
test-deep: $(VENV)/.dev
	GPULEDGER_TEST_DEPTH=4 $(PYTEST) --durations=40

# The system packages tests use (each test skips with one line without its package): Chromium renders
# the HTML report; Prometheus (`prometheus`, `promtool`) serves telemetry to `collect dcgm`; Slurm
# (slurmctld, slurmd, slurmdbd), MariaDB and munge make the one-node cluster `collect slurm` reads.
# Debian's packages, installed when a command is missing; needs root (CI runs as root). No service is
# started for the tests: they start their own servers on 127.0.0.1 and stop them afterwards.
SERVER_PACKAGES := prometheus slurm-wlm slurmdbd mariadb-server munge openjdk-17-jre-headless
system-deps:
	@missing=""; \
	for cmd in chromium prometheus promtool slurmctld slurmd slurmdbd mariadbd munged java; do \
	  command -v $$cmd >/dev/null 2>&1 || missing="$$missing $$cmd"; \
	done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(SERVER_PACKAGES); \
	else echo "missing:$$missing; sudo apt-get install chromium $(SERVER_PACKAGES) (the tests that need them skip)"; fi

clean:
	rm -rf data $(VENV)
	find dagster_home -mindepth 1 ! -name dagster.yaml -exec rm -rf {} +

SCALE ?= 1
# REUSE=1 keeps the landing zone the last bench of this SCALE simulated
bench: setup $(if $(filter spark,$(ENGINE)),$(VENV)/.spark)
	$(BIN)/python -m pipelines.bench --scale $(SCALE) $(if $(REUSE),--reuse-landing) $(if $(ENGINE),--engine $(ENGINE))

# inspect vs the FinOps focus-converter on a replicated real CUR of ROWS rows (files under /tmp)
ROWS ?= 1000000
bench-cur: setup
	$(BIN)/python -m pipelines.bench_cur --rows $(ROWS)
