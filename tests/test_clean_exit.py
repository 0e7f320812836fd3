"""A Python process that used the lab's sketches ends quietly: IPython's variables outlive the datasketches
module, and nanobind used to print dozens of "leaked" lines on exit (seen running the magics in a terminal)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # the full lane only: a terminal IPython with a Spark session of its own

SCRIPT = """
%load_ext colstats_lab
from colstats_lab import Lab
lab = Lab(home={home!r}, spark_conf={{"spark.sql.shuffle.partitions": "1", "spark.ui.enabled": "false"}})
lab.set("hive.stats.kll.enable", True)
lab.sql("CREATE TABLE t (id BIGINT, amount DOUBLE, f FLOAT) PARTITIONED BY (ds STRING)")
rows = lab.spark.range(300).selectExpr("id", "id * 1.5 AS amount", "CAST(id AS FLOAT) AS f",
                                      "CAST(id % 3 AS STRING) AS ds")
lab.tables["t"].write(rows)
lab.sql("ANALYZE TABLE t COMPUTE STATISTICS FOR ALL COLUMNS")
view = lab.views.stats("t")
kept = [lab.tables["t"].distribution(c) for c in ("id", "amount", "f")]
print("quartiles", kept[0].quartiles())
"""


def test_ipython_using_the_sketches_exits_with_a_clean_stderr(tmp_path):
    script = tmp_path / "session.ipy"
    script.write_text(SCRIPT.format(home=str(tmp_path / "lab")))
    ipython = os.path.join(os.path.dirname(sys.executable), "ipython")
    done = subprocess.run([ipython, "--no-banner", str(script)], capture_output=True, text=True, timeout=300,
                          cwd=str(tmp_path), env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "quartiles [" in done.stdout
    assert "nanobind" not in done.stderr, done.stderr[-2000:]
