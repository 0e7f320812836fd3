"""A real PostgreSQL server for the tests: Debian's PostgreSQL 15 (or whichever major the machine has), a
cluster of its own in a temporary folder, on 127.0.0.1 only, with a password for TCP connections.

`initdb` refuses to run as root: as root the cluster is made and run by the `postgres` user the package
creates, in a folder that user owns. Up in about 2 s; `fsync=off`, as a cluster thrown away at the end
needs no durability.
"""
from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import uuid
from dataclasses import dataclass

SUPERUSER, PASSWORD = "postgres", "colstats-test-pw"


def binaries() -> str:
    """The folder of `initdb` and `pg_ctl` (Debian keeps them off PATH, per major version)."""
    on_path = shutil.which("pg_ctl")
    if on_path:
        return os.path.dirname(on_path)
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[-3]))
    if not found:
        raise RuntimeError("PostgreSQL's server is missing: apt-get install postgresql (make postgres does)")
    return os.path.dirname(found[-1])


@dataclass
class PostgresServer:
    folder: str
    port: int
    as_user: list[str]  # the command prefix that runs the server's programs as its owner
    template: str = ""  # the database of the metastore's tables new databases are copies of (made when first asked)

    def url(self, database: str = "postgres", password: str = PASSWORD) -> str:
        return f"postgresql://{SUPERUSER}:{password}@127.0.0.1:{self.port}/{database}"

    def new_database(self, prefix: str = "lab", migrated: bool = True) -> str:
        """A new database holding no rows; its URL. `migrated`: a copy of one the metastore's migrations made
        once per session (its tables, no rows: a copy takes 0.1 s, the migrations 0.25-0.4 s), else empty."""
        import psycopg

        name = f"{prefix}_{uuid.uuid4().hex[:12]}"
        template = f" TEMPLATE {self._migrated_template()}" if migrated else ""
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"{template}')
        return self.url(name)

    def _migrated_template(self) -> str:
        if not self.template:
            from colstats_lab.metastore.db import connect, migrate

            self.template = self.new_database("template", migrated=False).rsplit("/", 1)[1]
            database = connect(self.url(self.template))
            try:
                migrate(database)
            finally:
                database.close()  # a template is copied only while no one is connected to it
        return self.template


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(folder: str) -> PostgresServer:
    bin_dir = binaries()
    os.makedirs(folder, exist_ok=True)
    as_user: list[str] = []
    if os.geteuid() == 0:
        as_user = ["runuser", "-u", SUPERUSER, "--"]
        # pytest's temporary folders are root's, mode 700: the server's user must reach its own folder
        parent = folder
        while parent not in ("/", ""):
            os.chmod(parent, os.stat(parent).st_mode | 0o711)
            parent = os.path.dirname(parent)
        shutil.chown(folder, SUPERUSER)
    password_file = os.path.join(folder, "pw")
    with open(password_file, "w") as f:
        f.write(PASSWORD)
    if as_user:
        shutil.chown(password_file, SUPERUSER)
    data = os.path.join(folder, "data")
    subprocess.run([*as_user, os.path.join(bin_dir, "initdb"), "-D", data, "-U", SUPERUSER, "--pwfile", password_file,
                    "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C.UTF-8"],
                   check=True, capture_output=True)
    port = _free_port()
    options = f"-p {port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={folder} -c fsync=off " \
              "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
    subprocess.run([*as_user, os.path.join(bin_dir, "pg_ctl"), "-D", data, "-l", os.path.join(folder, "server.log"),
                    "-o", options, "-w", "start"], check=True, capture_output=True)
    return PostgresServer(folder, port, as_user)


def stop(server: PostgresServer) -> None:
    subprocess.run([*server.as_user, os.path.join(binaries(), "pg_ctl"), "-D", os.path.join(server.folder, "data"),
                    "-m", "immediate", "-w", "stop"], capture_output=True)
