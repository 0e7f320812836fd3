"""The docs' code runs as written: every ```python block of a page, in page order, in one IPython shell (so a
block may use the magics, as a notebook cell does), in a fresh folder with its own lab home. A page that needs a
server gets the test session's: the S3 server (its bucket `lake` and the standard AWS variables), PostgreSQL
(a new database as $COLSTATS_METASTORE), the Hive Metastore (its URI in place of the page's). A block that
raises fails the test, naming the page and the block."""
from __future__ import annotations

import glob
import os
import re
import subprocess
import sys
import uuid

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from sql.connection import ConnectionManager

from colstats_lab import Lab

pytestmark = pytest.mark.slow  # Spark jobs, servers: the full lane

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")
# what each page's blocks name that stands for a server of the reader's, and the fixture standing in for it here
PAGE_SERVERS = {"guides/object-stores.md": "s3", "guides/postgresql.md": "postgres",
                "guides/publishing.md": "hms_uri"}
HMS_URI_IN_DOCS = "thrift://hms.internal:9083"
PG_URL_IN_DOCS = "postgresql://lab:secret@db.internal:5432/colstats"
S3_MOUNT_IN_DOCS = "file:///mnt/lake/"


# pages whose ```bash blocks run too (in a shell, after the page's Python before them): the CLI's own guide
RUN_SHELL = {"guides/cli.md"}


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)


def runnable_blocks(page: str, text: str) -> list[tuple[str, str]]:
    """The page's blocks this module runs, in page order: (language, code)."""
    kinds = ("python", "bash") if page in RUN_SHELL else ("python",)
    return [(kind, code) for kind, code in re.findall(r"^```(\w+)\n(.*?)^```", text, re.S | re.M) if kind in kinds]


def pages_with_code() -> list[str]:
    """Every page but the reference's, whose snippets summarize calls rather than make a table of their own."""
    found = []
    for path in sorted(glob.glob(os.path.join(DOCS, "**", "*.md"), recursive=True)):
        if os.path.relpath(path, DOCS).startswith("reference"):
            continue
        with open(path) as f:
            if python_blocks(f.read()):
                found.append(os.path.relpath(path, DOCS))
    return found


def test_every_guide_has_code_that_this_module_runs():
    guides = {os.path.relpath(p, DOCS) for p in glob.glob(os.path.join(DOCS, "guides", "*.md"))}
    assert guides and guides <= set(pages_with_code()) | {"guides/dashboard.md"}


@pytest.mark.parametrize("page", pages_with_code())
def test_a_pages_code_runs_as_written(page, request, spark, tmp_path, monkeypatch):
    with open(os.path.join(DOCS, page)) as f:
        blocks = runnable_blocks(page, f.read())
    replacements = _servers_for(page, request, monkeypatch)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLSTATS_HOME", str(tmp_path / ".colstats"))
    InteractiveShell.clear_instance()
    shell = InteractiveShell.instance()
    shell.colors = "NoColor"  # a failure's traceback, as plain text
    try:
        for number, (kind, block) in enumerate(blocks, 1):
            for written, here in replacements.items():
                block = block.replace(written, here)
            if kind == "bash":
                _run_shell(page, number, block)
                continue
            with capture_output() as shown:
                outcome = shell.run_cell(block, store_history=False)
            if os.environ.get("COLSTATS_DOCS_SHOW"):  # to read what a page prints, with pytest -s
                print(f"--- {page}, block {number}\n{shown.stdout}")
            if not outcome.success:
                error = outcome.error_in_exec or outcome.error_before_exec
                pytest.fail(f"{page}, block {number} raised {type(error).__name__}: {error}\n{block}\n{shown.stdout}")
    finally:
        # a page's %sql connections, closed while the shell they would print "Closing ..." into still exists
        # (jupysql closes them at exit otherwise, and its message then fails on the cleared shell)
        ConnectionManager.close_all()
        for value in list(shell.user_ns.values()):
            if isinstance(value, Lab):
                value.close()
        InteractiveShell.clear_instance()
        Lab._current = None


def _run_shell(page: str, number: int, block: str) -> None:
    """A shell block, line by line as a user types them, with the venv's `colstats-lab` first on PATH: any
    line that exits other than 0 (and is not followed by `||`) fails the test."""
    bin_dir = os.path.dirname(sys.executable)
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block], env=env, capture_output=True, text=True,
                          timeout=600)
    if os.environ.get("COLSTATS_DOCS_SHOW"):
        print(f"--- {page}, block {number}\n{done.stdout}{done.stderr}")
    if done.returncode != 0:
        pytest.fail(f"{page}, block {number} exited {done.returncode}:\n{block}\n{done.stdout}\n{done.stderr}")


def _servers_for(page: str, request, monkeypatch) -> dict[str, str]:
    need = PAGE_SERVERS.get(page)
    if need == "postgres":
        url = request.getfixturevalue("postgres").new_database()
        monkeypatch.setenv("COLSTATS_METASTORE", url)
        return {PG_URL_IN_DOCS: url}
    if need == "s3":
        server = request.getfixturevalue("s3")
        return {S3_MOUNT_IN_DOCS: "file://" + server.mounts["lake"].rstrip("/") + "/"}
    if need == "hms_uri":
        uri = request.getfixturevalue("hms_uri")
        db = f"docs_{uuid.uuid4().hex[:8]}"
        _orders_in_hms(uri, db, str(request.getfixturevalue("tmp_path_factory").mktemp("hms-orders")))
        return {HMS_URI_IN_DOCS: uri, "hms.shop": f"hms.{db}", "hms_shop.": f"hms_{db}."}
    return {}


def _orders_in_hms(uri: str, db: str, folder: str) -> None:
    """The page's `shop.orders`, made in the HMS as another engine makes a table: Parquet files under a
    partition's location, the table and partitions through the HMS's Thrift API."""
    import hms_tables
    import pandas as pd

    cols = [("id", "bigint"), ("customer", "string"), ("amount", "double")]
    locations = {}
    for day in ("2026-11-21", "2026-11-22"):
        location = os.path.join(folder, f"ds={day}")
        os.makedirs(location)
        pd.DataFrame({"id": range(20), "customer": [f"c{i % 4}" for i in range(20)],
                      "amount": [i * 2.5 for i in range(20)]}).to_parquet(os.path.join(location, "part-0.parquet"))
        locations[(day,)] = location
    client = hms_tables.connect(uri)
    hms_tables.create_table(client, db, "orders", cols, [("ds", "string")], folder)
    hms_tables.add_partitions(client, db, "orders", cols, locations)
