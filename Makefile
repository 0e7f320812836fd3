# Every target installs what it needs into .venv on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: install java dashboard demo test bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	@rm -f $(VENV)/.installed-*
	@touch $@

java: $(STAMP)
	@$(PY) -m colstats_lab.cli check-java

dashboard: java
	$(PY) -m colstats_lab.cli dashboard

demo: dashboard

test: java
	$(PY) -m pytest -q

bench: java
	$(PY) bench/analyze_vs_spark.py

clean:
	rm -rf .colstats spark-warehouse metastore_db derby.log tests/artifacts .pytest_cache
