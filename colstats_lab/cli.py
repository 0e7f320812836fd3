"""`colstats-lab`: the demo, the dashboard, and statements from the shell."""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

from .engine import EngineError, check_java


def _lab(home: str | None):
    from .lab import Lab

    return Lab(home=home)


def cmd_check_java(_args) -> int:
    try:
        check_java()
    except EngineError as exc:
        print(f"colstats-lab: {exc}", file=sys.stderr)
        return 1
    return 0


def cmd_demo(args) -> int:
    from .demo import DEMO_TABLE, build_demo

    lab = _lab(args.home)
    built = build_demo(lab)
    print(f"{'Built' if built else 'Found'} demo table {DEMO_TABLE} in {lab.home}")
    print(lab.sql(f"ANALYZE TABLE {DEMO_TABLE} COMPUTE STATISTICS FOR ALL COLUMNS").message)
    for column in ("x", "amount", "price", "note", "flag", "day", "ts"):
        frame = lab.sql(f"DESCRIBE FORMATTED {DEMO_TABLE} {column}").df
        shown = {row.info_name: row.info_value for row in frame.itertuples() if row.info_value != ""}
        print("  " + ", ".join(f"{k}={v}" for k, v in shown.items() if k != "COLUMN_STATS_ACCURATE"))
    print(f"Metastore: {lab.metastore_url}")
    return 0


# package data, so an installed wheel serves it too
DASHBOARD_NOTEBOOK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ui", "dashboard.ipynb")


def voila_command(notebook: str, port: int, ip: str = "127.0.0.1") -> list[str]:
    """The command that serves a notebook with Voila from this interpreter (its scripts may live in
    another environment's bin when this one reaches its packages through a path file)."""
    return [sys.executable, "-m", "voila", notebook, f"--port={port}", "--no-browser", f"--Voila.ip={ip}",
            "--show_tracebacks=True"]


def cmd_dashboard(args) -> int:
    from .demo import DEMO_TABLE
    from .lab import ENV_HOME, lab_home
    from .metastore import Metastore

    home = lab_home(args.home)
    env = {**os.environ, ENV_HOME: home, "PLOOMBER_STATS_ENABLED": "false"}
    store = Metastore(os.path.join(home, "metastore.db"), os.path.join(home, "warehouse"))
    has_demo = store.table_exists("default", DEMO_TABLE)
    store.close()
    if not has_demo:
        # built in a child process, so this one holds no JVM while Voila serves
        subprocess.run([sys.executable, "-m", "colstats_lab.cli", "--home", home, "demo"], check=True, env=env)
    if not os.path.exists(DASHBOARD_NOTEBOOK):
        print(f"colstats-lab: the dashboard notebook is missing ({DASHBOARD_NOTEBOOK})", file=sys.stderr)
        return 1
    print(f"Serving the dashboard at http://{args.ip}:{args.port}/ (Ctrl-C stops it)", flush=True)
    command = voila_command(DASHBOARD_NOTEBOOK, args.port, args.ip)
    os.execve(command[0], command, env)
    return 0


def cmd_sql(args) -> int:
    from .errors import ColstatsError

    lab = _lab(args.home)
    try:
        print(lab.sql(args.statement))
    except ColstatsError as exc:
        print(f"colstats-lab: {exc}", file=sys.stderr)
        return 2
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="colstats-lab", description=__doc__)
    parser.add_argument("--home", default=None, help="the lab's folder (default ./.colstats)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("check-java", help="say whether a suitable Java is installed").set_defaults(func=cmd_check_java)
    sub.add_parser("demo", help="build the demo table, analyze it, print its statistics").set_defaults(func=cmd_demo)
    dashboard = sub.add_parser("dashboard", help="build the demo if missing and serve the Voila dashboard")
    dashboard.add_argument("--port", type=int, default=8866)
    dashboard.add_argument("--ip", default="127.0.0.1")
    dashboard.set_defaults(func=cmd_dashboard)
    sql = sub.add_parser("sql", help="run statements (ANALYZE, DESCRIBE, SHOW, ...)")
    sql.add_argument("statement")
    sql.set_defaults(func=cmd_sql)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
