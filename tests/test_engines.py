"""The same ANALYZE, skew detection and queries over Spark Connect and on a standalone cluster give what
the embedded session gives. Each test starts its servers from the scripts that ship with PySpark
(sbin/start-connect-server.sh, sbin/spark-daemon.sh for the master and the worker) and stops them."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager

import pyspark
import pytest

from colstats_lab import Lab
from engine_scenario import run

pytestmark = pytest.mark.slow  # the full lane only: a standalone cluster and a Spark Connect server of their own

HERE = os.path.dirname(__file__)
SPARK_HOME = os.path.dirname(pyspark.__file__)
MASTER = "org.apache.spark.deploy.master.Master"
WORKER = "org.apache.spark.deploy.worker.Worker"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_port(port: int, log_dir: str, timeout_s: float = 180) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.5)
    logs = "".join(open(os.path.join(log_dir, f)).read()[-2000:] for f in os.listdir(log_dir))
    raise AssertionError(f"nothing listens on port {port} after {timeout_s} s:\n{logs}")


def _daemon_env(tmp_path) -> dict[str, str]:
    env = {**os.environ, "SPARK_HOME": SPARK_HOME, "SPARK_LOG_DIR": str(tmp_path / "logs"),
           "SPARK_PID_DIR": str(tmp_path / "pids"), "SPARK_WORKER_DIR": str(tmp_path / "work"),
           "PYSPARK_PYTHON": sys.executable, "PYTHONPATH": os.pathsep.join(sys.path)}
    os.makedirs(env["SPARK_LOG_DIR"], exist_ok=True)
    return env


def _sbin(env: dict, *args: str) -> None:
    subprocess.run(["bash", os.path.join(SPARK_HOME, "sbin", args[0]), *args[1:]], env=env, check=True,
                   capture_output=True, timeout=120)


@contextmanager
def _connect_server(tmp_path):
    env = _daemon_env(tmp_path)
    port = _free_port()
    _sbin(env, "start-connect-server.sh", "--master", "local[2]", "--conf", f"spark.connect.grpc.binding.port={port}",
          "--conf", "spark.ui.enabled=false", "--conf", "spark.sql.session.timeZone=UTC",
          # progress every 50 ms (2 s by default), so even the test's small job reports its stages
          "--conf", "spark.connect.progress.reportInterval=50ms",
          "--conf", f"spark.sql.warehouse.dir={tmp_path / 'warehouse'}")
    try:
        _wait_for_port(port, env["SPARK_LOG_DIR"])
        yield f"sc://127.0.0.1:{port}", env
    finally:
        _sbin(env, "stop-connect-server.sh")


@contextmanager
def _standalone_cluster(tmp_path):
    env = _daemon_env(tmp_path)
    port = _free_port()
    master = f"spark://127.0.0.1:{port}"
    _sbin(env, "spark-daemon.sh", "start", MASTER, "1", "--host", "127.0.0.1", "--port", str(port), "--webui-port", "0")
    try:
        _wait_for_port(port, env["SPARK_LOG_DIR"])
        _sbin(env, "spark-daemon.sh", "start", WORKER, "1", "--host", "127.0.0.1", "--webui-port", "0",
              "--cores", "2", "--memory", "1g", master)
        yield master, env
    finally:
        _sbin(env, "spark-daemon.sh", "stop", WORKER, "1")
        _sbin(env, "spark-daemon.sh", "stop", MASTER, "1")


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


def test_spark_connect_gives_what_embedded_spark_gives(embedded, tmp_path):
    _check_scenario(embedded)
    with _connect_server(tmp_path) as (url, env):
        remote = _scenario_elsewhere(tmp_path / "lab", "remote", url, env)
    progress = remote.pop("progress")
    assert remote == embedded
    # Spark Connect streams each job's stages to PySpark's progress handlers: the last update has every task done
    assert progress["value"] == progress["max"] > 0 and progress["label"].endswith(f"{progress['max']}/"
                                                                                   f"{progress['max']} tasks")
    assert progress["handlers_left"] == 0


def test_standalone_cluster_gives_what_embedded_spark_gives(embedded, tmp_path):
    with _standalone_cluster(tmp_path) as (master, env):
        clustered = _scenario_elsewhere(tmp_path / "lab", "master", master, env)
    assert clustered == embedded
