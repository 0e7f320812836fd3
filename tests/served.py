"""A server process a test starts (Voila, a dashboard): a free port, the wait until it listens, and the
stop of its whole process group; and the headless Chromium the browser tests drive."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager

ARTIFACTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "artifacts")
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# As root, on a machine with no network: no sandbox, and nothing that phones home.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serving(command: list[str], port: int, log_path: str, timeout: float = 90, **popen) -> Iterator[str]:
    """Runs `command` (its output to `log_path`) until the block ends; yields its URL once it listens
    on `port`. A server that exits or does not listen in time fails the test with its log's end."""
    with open(log_path, "w") as log:
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, **popen)
        try:
            deadline = time.time() + timeout
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=2).close()
                    break
                except OSError:
                    assert proc.poll() is None, open(log_path).read()[-3000:]
                    assert time.time() < deadline, f"{command[0]} did not listen on {port}"
                    time.sleep(0.5)
            yield f"http://127.0.0.1:{port}/"
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
