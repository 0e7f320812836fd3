"""`colstats-lab`: the demo, the dashboard, and statements from the shell."""
from __future__ import annotations

import argparse
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


def cmd_sql(args) -> int:
    from .metastore import MetastoreError
    from .sql import ParseError

    lab = _lab(args.home)
    try:
        print(lab.sql(args.statement))
    except (ParseError, MetastoreError) as exc:
        print(f"colstats-lab: {exc}", file=sys.stderr)
        return 2
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="colstats-lab", description=__doc__)
    parser.add_argument("--home", default=None, help="the lab's folder (default ./.colstats)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("check-java", help="say whether a suitable Java is installed").set_defaults(func=cmd_check_java)
    sub.add_parser("demo", help="build the demo table, analyze it, print its statistics").set_defaults(func=cmd_demo)
    dashboard = sub.add_parser("dashboard", help="build the demo and show its statistics")
    dashboard.set_defaults(func=cmd_demo)
    sql = sub.add_parser("sql", help="run statements (ANALYZE, DESCRIBE, SHOW, ...)")
    sql.add_argument("statement")
    sql.set_defaults(func=cmd_sql)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
