"""Spark's own servers for tests, started from the scripts that ship with PySpark: a Spark Connect server
(sbin/start-connect-server.sh) and a standalone cluster (sbin/spark-daemon.sh for the master and a worker),
each stopped when its block ends."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager

import pyspark

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


def _daemon_env(tmp_path, base: dict[str, str] | None = None) -> dict[str, str]:
    env = {**(os.environ if base is None else base), "SPARK_HOME": SPARK_HOME, "SPARK_LOG_DIR": str(tmp_path / "logs"),
           "SPARK_PID_DIR": str(tmp_path / "pids"), "SPARK_WORKER_DIR": str(tmp_path / "work"),
           "PYSPARK_PYTHON": sys.executable, "PYTHONPATH": os.pathsep.join(sys.path)}
    os.makedirs(env["SPARK_LOG_DIR"], exist_ok=True)
    return env


def _sbin(env: dict, *args: str) -> None:
    subprocess.run(["bash", os.path.join(SPARK_HOME, "sbin", args[0]), *args[1:]], env=env, check=True,
                   capture_output=True, timeout=120)


@contextmanager
def connect_server(tmp_path, env: dict[str, str] | None = None):
    """A Spark Connect server on 127.0.0.1 (its processes in `env`, default this one's): yields its sc:// URL and
    the environment it runs in."""
    env = _daemon_env(tmp_path, env)
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
def standalone_cluster(tmp_path):
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
