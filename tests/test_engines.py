"""The same ANALYZE, skew detection and queries over Spark Connect and on a standalone cluster give what
the embedded session gives. Each test starts its servers from the scripts that ship with PySpark
(sbin/start-connect-server.sh, sbin/spark-daemon.sh for the master and the worker) and stops them."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from engine_scenario import run
from spark_servers import connect_server, standalone_cluster

from colstats_lab import Lab
from colstats_lab.plans.remote import NO_TASK_ROWS

pytestmark = pytest.mark.slow  # the full lane only: a standalone cluster and a Spark Connect server of their own

HERE = os.path.dirname(__file__)


def _scenario_elsewhere(home, how: str, url: str, env: dict) -> dict:
    done = subprocess.run([sys.executable, os.path.join(HERE, "engine_scenario.py"), str(home), how, url],
                          capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def embedded(spark, tmp_path_factory):
    lab = Lab(home=str(tmp_path_factory.mktemp("embedded")), spark=spark)
    try:
        return json.loads(json.dumps(run(lab), default=str))
    finally:
        lab.close()


def _check_scenario(result: dict) -> None:
    """Facts of the scenario's data, so that equal results are also right ones."""
    assert result["analyzed"][0] == 900
    assert result["described"]["x"]["min"] == "0" and result["described"]["x"]["max"] == "96"
    assert result["top"][0] == {"partition": "ds=2026-11-20", "value": 7, "count": 102, "share": 0.34, "rank": 1}
    assert result["from_stats"]["answered_from"] == "stats"
    assert result["scanned"]["rows"] == [["2026-11-21", 102, 714], ["2026-11-22", 102, 714]]
    # every sales row's x is one of the 97 dimension rows: the join keeps all 900
    produced = {node.split(" (")[0]: actual for node, _, actual in result["plan"]}
    assert produced["Join Inner"] == 900 and produced["Scan default.sales"] == 900
    assert produced["Scan spark_catalog.default.scenario_dim"] == 97 and produced["Aggregate"] == 10
    ran = result["ran"]
    # the scans and aggregates keep timing metrics (a broadcast hash join keeps none)
    assert {"Scan default.sales", "Scan spark_catalog.default.scenario_dim", "Aggregate"} <= set(ran["timed"])
    assert ran["kept"]
    # the scan's bytes are the sales files' sizes
    assert ran["sales_bytes"] == sum(os.path.getsize(os.path.join(folder, name)) for folder, _, names
                                     in os.walk(result["sales_location"]) for name in names
                                     if name.endswith(".parquet"))


def test_spark_connect_gives_what_embedded_spark_gives(embedded, tmp_path):
    _check_scenario(embedded)
    with connect_server(tmp_path) as (url, env):
        remote = _scenario_elsewhere(tmp_path / "lab", "remote", url, env)
    progress = remote.pop("progress")
    _check_scenario(remote)
    # Spark Connect sends each metric summed over its tasks: time and bytes as the embedded session's, no task spread
    assert embedded["ran"]["tasks_counted"] and embedded["ran"]["figures_note"] is None
    assert not remote["ran"]["tasks_counted"] and remote["ran"]["figures_note"] == NO_TASK_ROWS
    # each lab's files are its own (their sizes differ by their footers' metadata): each checked against its own
    remote["ran"] = {**remote["ran"], "tasks_counted": True, "figures_note": None,
                     "sales_bytes": embedded["ran"]["sales_bytes"]}
    assert remote == {**embedded, "sales_location": remote["sales_location"]}
    # Spark Connect streams each job's stages to PySpark's progress handlers: the last update has every task done
    assert progress["value"] == progress["max"] > 0 and progress["label"].endswith(f"{progress['max']}/"
                                                                                   f"{progress['max']} tasks")
    assert progress["handlers_left"] == 0


def test_standalone_cluster_gives_what_embedded_spark_gives(embedded, tmp_path):
    with standalone_cluster(tmp_path) as (master, env):
        clustered = _scenario_elsewhere(tmp_path / "lab", "master", master, env)
    _check_scenario(clustered)
    clustered["ran"]["sales_bytes"] = embedded["ran"]["sales_bytes"]  # each lab's files, checked against its own
    assert clustered == {**embedded, "sales_location": clustered["sales_location"]}
