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

.PHONY: setup demo test clean bench bench-cur system-deps

$(BIN)/gpuledger: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $@

setup: $(BIN)/gpuledger

demo: setup
	$(BIN)/gpuledger simulate --out $(DEMO) --start $(START) --days $(DAYS) --seed $(SEED) --mig-node
	$(BIN)/gpuledger run --landing $(DEMO)/landing --config $(DEMO)/gpuledger.yaml --start $(START) --end $(END)
	@for team in $$($(BIN)/gpuledger query --csv "SELECT DISTINCT team FROM marts.fct_cost_daily WHERE team <> '_unallocated' ORDER BY 1" | tail -n +2); do \
	  $(BIN)/gpuledger report --team $$team --month $(shell echo $(END) | cut -c1-7) > /dev/null || exit 1; \
	done
	@echo
	@echo "Waste reports per team (HTML, Markdown, CSV): a month report and one per day:"
	@ls -1 data/reports/*/$(shell echo $(END) | cut -c1-7).html | sed 's/^/  /'
	@echo "  open one in a browser, e.g.  xdg-open data/reports/pretrain/$(shell echo $(END) | cut -c1-7).html"
	@echo
	@echo "Finance SQL against the published warehouse:  $(BIN)/gpuledger query \"SELECT * FROM finance.reconciliation_daily\""
	@echo "Open the same definitions in the Dagster UI:   DAGSTER_HOME=$(DAGSTER_HOME) $(BIN)/dagster dev"

test: setup
	$(BIN)/pytest

# The system packages tests use: Chromium renders the HTML report; Slurm (slurmctld, slurmd, slurmdbd),
# MariaDB and munge make the one-node cluster tests/e2e/test_collect_slurm.py collects from (the tests
# skip without them). Debian's packages; need root (CI runs as root). The tests start the daemons
# themselves, not systemd.
SLURM_PACKAGES := slurm-wlm slurmdbd mariadb-server munge
system-deps:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	  else echo "chromium is missing: sudo apt-get install chromium (the report rendering test skips without it)"; fi; }
	@{ command -v slurmctld && command -v slurmdbd && command -v mariadbd && command -v munged; } >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(SLURM_PACKAGES); \
	  else echo "Slurm is missing: sudo apt-get install $(SLURM_PACKAGES) (the real Slurm collect test skips without it)"; fi; }

clean:
	rm -rf data $(VENV)
	find dagster_home -mindepth 1 ! -name dagster.yaml -exec rm -rf {} +

SCALE ?= 1
# REUSE=1 keeps the landing zone the last bench of this SCALE simulated
bench: setup
	$(BIN)/python -m pipelines.bench --scale $(SCALE) $(if $(REUSE),--reuse-landing)

# inspect vs the FinOps focus-converter on a replicated real CUR of ROWS rows (files under /tmp)
ROWS ?= 1000000
bench-cur: setup
	$(BIN)/python -m pipelines.bench_cur --rows $(ROWS)
