"""A real Hive Metastore 2.3 for the tests: Hive's own `HMSHandler` from pyspark's jars, over Thrift,
on 127.0.0.1 only, with an embedded Derby database in a folder of its own.

Hive 2.3's `HiveMetaStore` main binds every interface and has no setting for the host, so this launcher
builds the same server through py4j (pyspark's own gateway, no Java source of ours): the retrying
handler, Hive's `TSetIpAddressProcessor`, and a `TThreadPoolServer` on a socket bound to 127.0.0.1.
`python tests/hms_server.py FOLDER PORT [SETTINGS]` prints `READY <port>` once the server accepts calls,
then serves until it is killed; its JVM dies with it. SETTINGS, a JSON object, adds Hadoop and Hive settings
(the file systems of `s3a://` locations, `s3_server.hadoop_settings`).
"""
from __future__ import annotations

import glob
import json
import os
import socket
import subprocess
import sys
import time

import pyspark
from py4j.java_gateway import GatewayParameters, JavaGateway, launch_gateway

# Spark ships neither the LMAX disruptor (Hive's async logging) nor BoneCP (Hive 2.3's default pool)
SETTINGS = {
    "hive.async.log.enabled": "false",
    "datanucleus.connectionPoolingType": "HikariCP",
    "datanucleus.schema.autoCreateAll": "true",
    "hive.metastore.schema.verification": "false",
    # the server lists no partition's files on ADD PARTITION: tests add thousands of them
    "hive.stats.autogather": "false",
}


def serve(folder: str, port: int, settings: dict[str, str]) -> None:
    os.makedirs(folder, exist_ok=True)
    jars = glob.glob(os.path.join(os.path.dirname(pyspark.__file__), "jars", "*.jar"))
    gateway_port = launch_gateway(classpath=os.pathsep.join(jars), die_on_exit=True, redirect_stdout=sys.stderr,
                                  redirect_stderr=sys.stderr,
                                  javaopts=["-Xmx512m", f"-Dderby.system.home={folder}", "-Dderby.system.durability=test",
                                            "-Dlog4j2.level=WARN", "-Dlog4j.configurationFile=none"])
    jvm = JavaGateway(gateway_parameters=GatewayParameters(port=gateway_port, auto_convert=True)).jvm
    conf = jvm.org.apache.hadoop.hive.conf.HiveConf()
    conf.set("javax.jdo.option.ConnectionURL", f"jdbc:derby:;databaseName={folder}/metastore_db;create=true")
    conf.set("hive.metastore.warehouse.dir", os.path.join(folder, "warehouse"))
    for key, value in {**SETTINGS, **settings}.items():
        conf.set(key, value)
    handler = jvm.org.apache.hadoop.hive.metastore.HiveMetaStore.newRetryingHMSHandler("colstats test HMS", conf, False)
    processor = jvm.org.apache.hadoop.hive.metastore.TSetIpAddressProcessor(handler)
    socket_address = jvm.java.net.InetSocketAddress("127.0.0.1", port)
    transport = jvm.org.apache.thrift.transport.TServerSocket(socket_address)
    args = jvm.org.apache.thrift.server.TThreadPoolServer.Args(transport)
    args.processor(processor)
    args.protocolFactory(jvm.org.apache.thrift.protocol.TBinaryProtocol.Factory())
    args.transportFactory(jvm.org.apache.thrift.transport.TTransportFactory())
    args.minWorkerThreads(2)
    args.maxWorkerThreads(64)
    server = jvm.org.apache.thrift.server.TThreadPoolServer(args)
    print(f"READY {port}", flush=True)
    server.serve()  # until this process is killed


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start(folder: str, settings: dict[str, str] | None = None, timeout: float = 120.0
          ) -> tuple[subprocess.Popen, str]:
    """Starts the server in a process of its own, with `settings` besides its own; returns it and the server's
    thrift:// URI once it accepts connections. Raises RuntimeError with the server's output when it does not
    come up."""
    port = free_port()
    log = open(os.path.join(folder + ".log"), "w")
    process = subprocess.Popen([sys.executable, __file__, folder, str(port), json.dumps(settings or {})],
                               stdout=subprocess.PIPE, stderr=log, text=True, start_new_session=True)
    deadline = time.monotonic() + timeout
    assert process.stdout is not None
    line = process.stdout.readline()
    while time.monotonic() < deadline and process.poll() is None:
        if line.startswith("READY"):
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    return process, f"thrift://127.0.0.1:{port}"
            except OSError:
                time.sleep(0.2)
                continue
        line = process.stdout.readline()
    process.kill()
    log.close()
    with open(folder + ".log") as failed:
        raise RuntimeError(f"the Hive Metastore did not start: {failed.read()[-4000:]}")


def stop(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, 9)
    except ProcessLookupError:
        pass
    process.wait(timeout=30)


if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3]) if len(sys.argv) > 3 else {})
