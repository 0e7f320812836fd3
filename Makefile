# Every target installs what it needs into .venv on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml requirements.lock | cksum | cut -d' ' -f1)
NEWEST := .venv-newest
# A smoke test of the newest versions pyproject's ranges admit: statements, statistics, views, exports.
SMOKE := tests/test_parser.py tests/test_analyze_stats.py tests/test_skew_report.py tests/test_workbench.py \
         tests/test_exports.py tests/test_cli.py

.PHONY: install hooks java browser postgres dashboard demo lab docs unit test test-all newest lock bench bench-optimizer clean

install: $(STAMP)

# the tested versions: pyproject's ranges, constrained to requirements.lock
$(STAMP): pyproject.toml requirements.lock
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c requirements.lock -e '.[test,docs]'
	@rm -f $(VENV)/.installed-*
	@touch $@

# ruff and mypy before each commit (.githooks/pre-commit)
hooks: $(STAMP)
	git config core.hooksPath .githooks

# after changing a range in pyproject.toml: the newest versions it admits become the tested set
lock:
	rm -rf $(NEWEST) && $(PYTHON) -m venv $(NEWEST)
	$(NEWEST)/bin/python -m pip install -q --upgrade pip
	$(NEWEST)/bin/python -m pip install -q -e '.[test,docs]'
	{ echo "# The versions CI tests (pip freeze of make install's venv); make install takes them as constraints."; \
	  echo "# Regenerate after changing a range: make lock"; \
	  $(NEWEST)/bin/python -m pip freeze --exclude-editable; } > requirements.lock

java: $(STAMP)
	@$(PY) -m colstats_lab.cli check-java

# Debian's Chromium for the dashboard's browser test (Playwright's own browser download is not reachable).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing Debian's chromium for the browser test"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# Debian's PostgreSQL server for the metastore tests on PostgreSQL (each test session starts its own cluster).
postgres:
	@ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || command -v pg_ctl >/dev/null 2>&1 || { \
	  echo "installing Debian's postgresql for the metastore tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; }

dashboard: java
	$(PY) -m colstats_lab.cli dashboard --demo

demo: java
	$(PY) -m colstats_lab.cli demo

# the unit lane, between edits: the tests that need no JVM, no server and no process (about 20 s); no Java is
# found here, so a test marked unit that starts Spark fails
unit: $(STAMP)
	JAVA_HOME=/nonexistent-in-the-unit-lane PLOOMBER_STATS_ENABLED=false $(PY) -m pytest -q -m unit -p no:cacheprovider

# the fast lane, while working: ruff, mypy, and every test not marked slow (about 6 minutes on 2 cores)
test: java postgres
	$(PY) -m ruff check colstats_lab tests bench docs
	$(PY) -m mypy
	PLOOMBER_STATS_ENABLED=false $(PY) -m pytest -q -n 2 -m "not slow"

# the full lane, what CI runs: the same checks and every test, browsers, notebooks and processes too (about 16
# minutes on 2 cores); each test's time is kept in tests/artifacts/junit.xml, the ten slowest printed after
test-all: java browser postgres
	$(PY) -m ruff check colstats_lab tests bench docs
	$(PY) -m mypy
	PLOOMBER_STATS_ENABLED=false $(PY) -m pytest -q -n 2 --dist loadfile --junitxml=tests/artifacts/junit.xml
	$(PY) tests/slowest.py tests/artifacts/junit.xml 10

# the newest versions the ranges admit, in a venv of their own, through the smoke test
newest: java browser
	rm -rf $(NEWEST) && $(PYTHON) -m venv $(NEWEST)
	$(NEWEST)/bin/python -m pip install -q --upgrade pip
	$(NEWEST)/bin/python -m pip install -q --upgrade-strategy eager '.[test]'
	$(NEWEST)/bin/python -m pip list --format=freeze | grep -iE '^(pyspark|pandas|pyarrow|numpy|sqlglot|plotly|ipywidgets|voila|jupysql|ipython)=='
	cd tests && PLOOMBER_STATS_ENABLED=false ../$(NEWEST)/bin/python -m pytest -q -p no:cacheprovider \
	    --rootdir=.. -c ../pyproject.toml $(SMOKE:tests/%=%)

# JupyterLab on the notebooks, on 127.0.0.1 only; its kernels' Lab() is the demo's lab
LAB_HOME := $(CURDIR)/.colstats
lab: java
	@test -f $(LAB_HOME)/metastore.db || $(PY) -m colstats_lab.cli --home $(LAB_HOME) demo >/dev/null
	COLSTATS_HOME=$(LAB_HOME) $(PY) -m jupyter lab --ip=127.0.0.1 --no-browser --notebook-dir=notebooks \
	    $$([ "$$(id -u)" = 0 ] && echo --allow-root)

# the documentation site, into site/: strict, so a broken link or an unresolved API reference fails (CI runs it
# after the tests, whose notebooks' outputs and screenshots it shows)
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 DISABLE_MKDOCS_2_WARNING=true $(PY) -m mkdocs build --strict --site-dir site

bench: java
	$(PY) bench/analyze_vs_spark.py

# what statistics do to Spark's plans, on a workload derived from TPC-DS (about an hour at SF 1 on 2 cores)
bench-optimizer: java
	$(PY) -m pip install -q -e '.[bench]'
	$(PY) bench/optimizer.py --sf 1 --runs 3

clean:
	rm -rf $(NEWEST) .colstats spark-warehouse metastore_db derby.log tests/artifacts .pytest_cache site .cache
