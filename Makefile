# Every target installs what it needs into .venv on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: install java browser dashboard demo test bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	@rm -f $(VENV)/.installed-*
	@touch $@

java: $(STAMP)
	@$(PY) -m colstats_lab.cli check-java

# Debian's Chromium for the dashboard's browser test (Playwright's own browser download is not reachable).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing Debian's chromium for the browser test"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

dashboard: java
	$(PY) -m colstats_lab.cli dashboard

demo: java
	$(PY) -m colstats_lab.cli demo

test: java browser
	PLOOMBER_STATS_ENABLED=false $(PY) -m pytest -q

bench: java
	$(PY) bench/analyze_vs_spark.py

clean:
	rm -rf .colstats spark-warehouse metastore_db derby.log tests/artifacts .pytest_cache
