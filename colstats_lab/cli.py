"""`colstats-lab`: the demo, the dashboard, and batch use from a shell or CI: statements, ANALYZE of a
table or a whole database, a freshness check with an exit code, and reports.

Exit codes: 0 done (check: every statistic accurate), 1 a table not analyzed or statistics not
accurate, 2 bad input (a statement that does not parse, an unknown table or column)."""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

from .engine import EngineError, check_java


def _lab(args):
    """The lab on --home, with the catalogs --attach names attached."""
    from .lab import Lab

    lab = Lab(home=args.home, metastore=args.metastore)
    for item in args.attach or []:
        name, sep, uri = item.partition("=")
        if not sep:
            from .errors import InvalidArgument

            raise InvalidArgument(f"--attach takes NAME=thrift://host:port, not {item!r}")
        lab.attach(name, uri)
    return lab


def cmd_check_java(_args) -> int:
    try:
        check_java()
    except EngineError as exc:
        print(f"colstats-lab: {exc}", file=sys.stderr)
        return 1
    return 0


def cmd_demo(args) -> int:
    from .demo import DEMO_TABLE, build_demo

    lab = _lab(args)
    built = build_demo(lab)
    print(f"{'Built' if built else 'Found'} demo table {DEMO_TABLE} in {lab.home}")
    print(lab.sql(f"ANALYZE TABLE {DEMO_TABLE} COMPUTE STATISTICS FOR ALL COLUMNS").message)
    for column in ("x", "amount", "price", "note", "flag", "day", "ts"):
        frame = lab.sql(f"DESCRIBE FORMATTED {DEMO_TABLE} {column}").df
        shown = {row.info_name: f"{float(row.info_value):.3f}" if row.info_name == "avg_col_len" else row.info_value
                 for row in frame.itertuples() if row.info_value != ""}
        print("  " + ", ".join(f"{k}={v}" for k, v in shown.items() if k != "COLUMN_STATS_ACCURATE"))
    print(f"Metastore: {lab.metastore.path}")  # a server URL without its password
    return 0


# package data, so an installed wheel serves it too
DASHBOARD_NOTEBOOK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "workbench", "dashboard.ipynb")


# a kernel no page is connected to any more (its page closed) is shut down, with its Spark, after this long idle
CULL_AFTER_SECONDS = 300


# addresses only this machine reaches: a dashboard served there needs no token
LOOPBACK = ("127.0.0.1", "::1", "localhost")
ENV_DASHBOARD_TOKEN = "COLSTATS_DASHBOARD_TOKEN"


def voila_command(notebook: str, port: int, ip: str = "127.0.0.1", cull_after: int = CULL_AFTER_SECONDS,
                  token: str | None = None) -> list[str]:
    """The command that serves a notebook with Voila from this interpreter (its scripts may live in
    another environment's bin when this one reaches its packages through a path file). Voila starts a
    kernel per page load and keeps it until the server stops; a kernel whose page closed is culled after
    `cull_after` seconds idle (one still connected never is). With `token`, every page asks for it (Jupyter's
    own token check, which Voila serves); the port is taken as given or refused, never moved."""
    return [sys.executable, "-m", "voila", notebook, f"--port={port}", "--Voila.port_retries=0", "--no-browser",
            f"--Voila.ip={ip}", "--show_tracebacks=False", f"--MappingKernelManager.cull_idle_timeout={cull_after}",
            f"--MappingKernelManager.cull_interval={max(1, min(60, cull_after // 2))}",
            "--MappingKernelManager.cull_connected=False"] + ([f"--Voila.token={token}"] if token else [])


def dashboard_token(ip: str, given: str | None) -> str | None:
    """The token the dashboard asks for: the one given (--token or $COLSTATS_DASHBOARD_TOKEN), else a new random one
    when it is served beyond this machine; None on a loopback address, which only this machine's users reach."""
    if given:
        if len(given) < 16:
            from .errors import InvalidArgument

            raise InvalidArgument("a dashboard token holds 16 characters at least (a random one is made when none "
                                  "is given)")
        return given
    if ip in LOOPBACK:
        return None
    import secrets

    return secrets.token_urlsafe(32)


def port_taken(ip: str, port: int) -> bool:
    """Whether something listens on `ip`:`port` already (Voila would then fail, or move to another port)."""
    import socket

    family = socket.AF_INET6 if ":" in ip else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((ip if ip != "localhost" else "127.0.0.1", port))
        except OSError:
            return True
    return False


def cmd_dashboard(args) -> int:
    from .demo import DEMO_TABLE
    from .errors import ColstatsError
    from .lab import ENV_HOME, ENV_METASTORE, lab_home, metastore_location
    from .metastore import Metastore

    try:
        token = dashboard_token(args.ip, args.token or os.environ.get(ENV_DASHBOARD_TOKEN))
        home = lab_home(args.home)
        location = metastore_location(home, args.metastore)
        store = Metastore(location, os.path.join(home, "warehouse"))
        has_demo = store.catalog.table_exists("default", DEMO_TABLE)
        store.close()
    except ColstatsError as exc:
        print(f"colstats-lab: {exc}", file=sys.stderr)
        return 2
    if port_taken(args.ip, args.port):
        print(f"colstats-lab: port {args.port} on {args.ip} is taken: stop what serves there, or pass --port",
              file=sys.stderr)
        return 2
    env = {**os.environ, ENV_HOME: home, ENV_METASTORE: location, "PLOOMBER_STATS_ENABLED": "false"}
    env.pop(ENV_DASHBOARD_TOKEN, None)  # the kernels have no use for it
    if args.demo and not has_demo:
        # built in a child process, so this one holds no JVM while Voila serves
        subprocess.run([sys.executable, "-m", "colstats_lab.cli", "--home", home, "--metastore", location, "demo"],
                       check=True, env=env)
    if not os.path.exists(DASHBOARD_NOTEBOOK):
        print(f"colstats-lab: the dashboard notebook is missing ({DASHBOARD_NOTEBOOK})", file=sys.stderr)
        return 1
    host = f"[{args.ip}]" if ":" in args.ip else args.ip
    if token:
        print(f"Serving the dashboard at http://{host}:{args.port}/?token={token} (Ctrl-C stops it)", flush=True)
        print("Anyone with this URL can read every table's statistics and run ANALYZE and skew scans: share it as "
              "you would a password; behind a reverse proxy, serve it over HTTPS.", flush=True)
    else:
        print(f"Serving the dashboard at http://{host}:{args.port}/ (Ctrl-C stops it)", flush=True)
    command = voila_command(DASHBOARD_NOTEBOOK, args.port, args.ip, args.cull_after, token)
    os.execve(command[0], command, env)
    return 0


def _guarded(action) -> int:
    """Runs `action` (printing what it returns); a user's error is one line on stderr and exit code 2."""
    from .errors import ColstatsError

    try:
        print(action())
    except ColstatsError as exc:
        print(f"colstats-lab: {exc}", file=sys.stderr)
        return 2
    return 0


def cmd_sql(args) -> int:
    return _guarded(lambda: _lab(args).sql(args.statement))


def cmd_register(args) -> int:
    """Registers existing files (Parquet directories, a Delta table, an Iceberg metadata file) as a table."""
    def register() -> str:
        import warnings

        from .errors import LabWarning

        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always", LabWarning)
            table = _lab(args).register_external(args.table, args.path, args.format).metastore_table()
        columns = ", ".join(f"{table.spelled(c.name)} {c.type}" for c in table.cols)  # as the files spell them
        keys = f"; partitioned by {', '.join(map(table.spelled, table.partition_key_names))}" \
            if table.is_partitioned else ""
        notes = "".join(f"\nNote: {w.message}" for w in said if issubclass(w.category, LabWarning))
        return f"Registered {table.qualified_name} ({columns}{keys}) at {table.location}{notes}"
    return _guarded(register)


def cmd_describe(args) -> int:
    from .quoting import column_ref
    from .sql import parse_partition_spec, partition_clause
    from .sql.lexer import quoted

    def describe() -> str:
        # the spec is parsed on its own and written back quoted: never pasted into the statement
        partition = partition_clause(parse_partition_spec(args.partition, False)) if args.partition else ""
        column = f" {column_ref(*args.column.split('.'))}" if args.column else ""
        return _lab(args).sql(f"DESCRIBE FORMATTED {quoted(args.table)}{partition}{column}").df.to_string(index=False)
    return _guarded(describe)


def cmd_skew(args) -> int:
    columns = [c.strip() for c in args.columns.split(",")]
    return _guarded(lambda: repr(_lab(args).tables[args.table].skew(columns, partition=args.partition, top=args.top,
                                                                     mode=args.mode)))


def cmd_join_skew(args) -> int:
    def predict() -> str:
        report = _lab(args).tables[args.left].join_skew(args.right, args.left_key.split(","), args.right_key.split(","),
                                                        where=args.where, how=args.how)
        largest = report.tasks.sort_values("predicted_rows", ascending=False).head(args.show)
        notes = "".join(f"\n{note}" for note in report.notes)
        return (f"{report.recommendation}{notes}\n\nHot keys:\n{report.hot_keys.to_string(index=False)}\n\n"
                f"Largest tasks:\n{largest.to_string(index=False)}")
    return _guarded(predict)


def analyze_statement(args) -> str:
    from .quoting import column_ref
    from .sql import parse_partition_spec, partition_clause
    from .sql.lexer import quoted

    what = ("NOSCAN" if args.noscan else "" if args.basic else
            f"FOR COLUMNS {', '.join(column_ref(*c.strip().split('.')) for c in args.columns.split(','))}"
            if args.columns else
            "FOR ALL COLUMNS")
    if args.metadata or args.sample is not None:
        if args.noscan or args.basic:
            raise ValueError("--metadata and --sample tier column statistics: no --noscan or --basic")
        if args.sample is not None and not 0 < args.sample <= 100:
            raise ValueError(f"--sample takes a percent in (0, 100], not {args.sample:g}")
        what += " NOSCAN" if args.metadata else f" SAMPLE {args.sample:g} PERCENT"
    if args.all:
        if args.partition or args.columns:
            raise ValueError("--all analyzes every table of a database whole: no --partition or --columns")
        return f"ANALYZE TABLES IN {quoted(args.target)} COMPUTE STATISTICS {what}".strip()
    partition = partition_clause(parse_partition_spec(args.partition)) if args.partition else ""
    return f"ANALYZE TABLE {quoted(args.target)}{partition} COMPUTE STATISTICS {what}".strip()


def cmd_analyze(args) -> int:
    from .errors import ColstatsError

    try:
        if args.stale is not None:
            if args.all or args.partition or args.columns or args.basic or args.noscan:
                raise ValueError("--stale chooses the partitions and analyzes every column: no --all, --partition, "
                                 "--columns, --basic or --noscan")
            print(_lab(args).tables[args.target].analyze_stale(threshold=args.stale))
            return 0
        statement = analyze_statement(args)
        lab = _lab(args)
        accurate = None if args.all or args.partition else _accurate_before(lab, args.target)
        result = lab.sql(statement)
    except (ColstatsError, ValueError) as exc:
        print(f"colstats-lab: {exc}", file=sys.stderr)
        return 2
    print(result)
    if accurate is not None and accurate[0]:
        done, of = accurate
        print(f"{done:,} of {of:,} partitions were accurate already: `colstats-lab analyze {args.target} --stale` "
              "analyzes only those that are not")
    if args.all and not result.df["analyzed"].all():
        return 1
    return 0


def _accurate_before(lab, target: str) -> tuple[int, int] | None:
    """How many of a partitioned table's partitions had every column's statistics accurate before an ANALYZE of
    them all (no Spark: the metastore, and a listing for an external table); None for an unpartitioned one."""
    handle = lab.tables[target]
    if not handle.metastore_table().is_partitioned:
        return None
    staleness = handle.inspect.staleness()
    return int(staleness["accurate"].astype(bool).sum()), len(staleness)


def cmd_check(args) -> int:
    """Every statistic of the named tables (or of every table of --db) accurate for a reader now: no
    Spark, the metastore and, for external tables, a listing of their files."""
    from .errors import ColstatsError

    try:
        lab = _lab(args)
        names = args.tables or [f"{args.db}.{t}" for t in lab.metastore.catalog.get_tables(args.db)]
        frames = {name: lab.tables[name].inspect.stats() for name in names}
    except ColstatsError as exc:
        print(f"colstats-lab: {exc}", file=sys.stderr)
        return 2
    from .analyze.autoanalyze import worker_queue

    queue = worker_queue(lab.metastore)  # None: no auto-analyze worker runs on this metastore
    queued = {(d.qualified_table, d.owner) for d in (queue[1] if queue else [])}
    failing = 0
    for name, frame in frames.items():
        qualified = lab.resolve(name).qualified_name
        cells = frame[frame["partition"].notna()] if frame["partition"].notna().any() else frame
        stale = cells[cells["accurate"].map(lambda a: a is False)]
        never = cells[cells["accurate"].isna()]
        bad = len(stale) + (0 if args.allow_never_analyzed else len(never))
        failing += bool(bad)
        print(f"{'FAIL' if bad else 'ok'}  {name}: {len(cells) - len(stale) - len(never)} of {len(cells)} "
              f"column statistics accurate, {len(stale)} not accurate, {len(never)} never analyzed")
        for row in stale.head(args.show).itertuples():
            where = f"{row.partition} " if row.partition else ""
            owner = row.partition if row.partition else None
            note = "; stale, queued for auto-analyze" if (qualified, owner) in queued else ""
            print(f"      {where}{row.column}: {row.reason}{note}")
        if len(stale) > args.show:
            print(f"      ... and {len(stale) - args.show} more")
    return 1 if failing else 0


def cmd_autoanalyze(args) -> int:
    """Rounds of auto-analyze: one with --once, else one every --every until stopped (SIGTERM or Ctrl-C end
    the round under way without storing it: its partitions stay as they were and are claimed no more)."""
    import logging
    import signal
    import time

    from .analyze.autoanalyze import duration_seconds
    from .errors import ColstatsError

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    logger = logging.getLogger("colstats_lab.autoanalyze")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)

    def stop(_signum, _frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        every = None if args.once else duration_seconds(args.every, "--every")
        lab = _lab(args)
        while True:
            began = time.monotonic()
            result = lab.autoanalyze.run(args.db, args.mode, args.threshold, args.budget, args.columns)
            print(result.message, flush=True)
            if every is None:
                return 1 if result.details.failed else 0
            time.sleep(max(0.0, every - (time.monotonic() - began)))
    except ColstatsError as exc:
        print(f"colstats-lab: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("colstats-lab: auto-analyze stopped", file=sys.stderr)
        return 0


def cmd_execute(args) -> int:
    """Runs a notebook's cells in a fresh kernel and writes it with its outputs (those made before a failing cell
    too); a cell that raised is named with its error, and the exit code is 1."""
    from .workbench.notebook_runs import NotebookFailed, execute_file

    output = args.output or args.notebook
    directory = os.path.dirname(os.path.abspath(args.notebook))
    try:
        cells = execute_file(args.notebook, output, args.timeout, directory, allow_errors=args.allow_errors)
    except NotebookFailed as failed:
        for cell in failed.failed:
            print(f"colstats-lab: {args.notebook}: {cell}", file=sys.stderr)
        print(f"colstats-lab: wrote the outputs it made to {failed.output}", file=sys.stderr)
        return 1
    except (OSError, ValueError) as exc:
        print(f"colstats-lab: cannot run {args.notebook}: {exc}", file=sys.stderr)
        return 2
    print(f"Ran {cells} code cell(s) of {args.notebook}; wrote {output}")
    return 0


def cmd_report(args) -> int:
    return _guarded(lambda: _lab(args).tables[args.table].report(args.output))


def cmd_publish(args) -> int:
    return _guarded(lambda: _lab(args).tables[args.table].publish().message)


def cmd_metastore_copy(args) -> int:
    """Copies a metastore into a new, empty one (SQLite and PostgreSQL either way), history and sketches too."""
    from .metastore.copy import copy_metastore
    from .metastore.db import redacted

    def copy() -> str:
        copied = copy_metastore(args.source, args.destination)
        rows = sum(t.rows for t in copied)
        return f"Copied {rows:,} rows of {len(copied)} tables into {redacted(args.destination)}"
    return _guarded(copy)


def _lab_options(parser: argparse.ArgumentParser, default) -> None:
    """--home, --metastore and --attach, on the program and on each command: they go before or after the command's name
    (a command's own, given after it, win; `default` SUPPRESS keeps a command's absent one from hiding the
    program's)."""
    parser.add_argument("--home", default=default, help="the lab's folder (default ./.colstats)")
    parser.add_argument("--metastore", default=default, metavar="URL",
                        help="the metastore: postgresql://user:password@host:5432/db (a team's), or a SQLite file "
                             "(default $COLSTATS_METASTORE, else HOME/metastore.db)")
    parser.add_argument("--attach", action="append", default=default, metavar="NAME=URI",
                        help="attach a Hive Metastore (hms=thrift://host:9083): its tables are NAME.db.t")


class _Commands:
    """The subcommands' parsers, each taking the lab's options too."""

    def __init__(self, parser: argparse.ArgumentParser):
        self.sub = parser.add_subparsers(dest="command", required=True)
        self.options = argparse.ArgumentParser(add_help=False)
        _lab_options(self.options, argparse.SUPPRESS)

    def add_parser(self, name: str, **kwargs) -> argparse.ArgumentParser:
        return self.sub.add_parser(name, parents=[self.options], **kwargs)


def build_parser() -> argparse.ArgumentParser:
    """The program's parser, every command with its options (the docs' CLI page is generated from it)."""
    from .skew.join import HOW
    from .skew.report import DEFAULT_MODE, MODES

    parser = argparse.ArgumentParser(prog="colstats-lab", description=__doc__)
    _lab_options(parser, None)
    sub = _Commands(parser)
    sub.add_parser("check-java", help="say whether a suitable Java is installed").set_defaults(func=cmd_check_java)
    sub.add_parser("demo", help="build the demo table, analyze it, print its statistics").set_defaults(func=cmd_demo)
    dashboard = sub.add_parser("dashboard", help="serve the Voila dashboard on the lab's metastore (with --demo, "
                                                  "the demo table built there first if missing)")
    dashboard.add_argument("--demo", action="store_true", help="build the demo table if the metastore lacks it")
    dashboard.add_argument("--cull-after", type=int, default=CULL_AFTER_SECONDS,
                           help="seconds a closed page's kernel (and its Spark) is kept idle before it is shut "
                                f"down (default {CULL_AFTER_SECONDS})")
    dashboard.add_argument("--port", type=int, default=8866)
    dashboard.add_argument("--ip", default="127.0.0.1",
                           help="the address to serve on (default 127.0.0.1, this machine only); any other asks every "
                                "page for a token")
    dashboard.add_argument("--token", help=f"the token pages must give (default ${ENV_DASHBOARD_TOKEN}, else a random "
                                           "one off 127.0.0.1, printed once with the URL; none on 127.0.0.1)")
    dashboard.set_defaults(func=cmd_dashboard)
    metastore = sub.add_parser("metastore", help="the metastore itself: copy one into another")
    metastore_commands = metastore.add_subparsers(dest="metastore_command", required=True)
    copy = metastore_commands.add_parser("copy", help="copy a metastore into a new, empty one (SQLite files and "
                                                      "PostgreSQL URLs, either way), history and sketches included")
    copy.add_argument("source", help="a SQLite file or postgresql://user:password@host:5432/db")
    copy.add_argument("destination", help="the same forms; it must hold nothing yet (a PostgreSQL database exists)")
    copy.set_defaults(func=cmd_metastore_copy)
    sql = sub.add_parser("sql", help="run statements (ANALYZE, DESCRIBE, SHOW, ...)")
    sql.add_argument("statement")
    sql.set_defaults(func=cmd_sql)
    analyze = sub.add_parser("analyze", help="ANALYZE a table (FOR ALL COLUMNS unless told), or every table of a "
                                              "database with --all")
    analyze.add_argument("target", help="db.table or table; with --all, a database")
    analyze.add_argument("--all", action="store_true", help="every table of the database: ANALYZE TABLES IN db")
    analyze.add_argument("--partition", help="a partition spec as in SQL, e.g. \"ds='2026-11-21'\" or ds")
    mode = analyze.add_mutually_exclusive_group()
    mode.add_argument("--columns", help="these columns only, comma-separated")
    mode.add_argument("--basic", action="store_true", help="rows, files and bytes only")
    mode.add_argument("--noscan", action="store_true", help="files and bytes only, no scan (Hive's NOSCAN; for column "
                                                            "statistics from the files' metadata, --metadata)")
    tier = analyze.add_mutually_exclusive_group()
    tier.add_argument("--metadata", action="store_true",
                      help="column statistics from the files' metadata alone, no value read (SQL's FOR COLUMNS ... "
                           "NOSCAN): exact where footers and dictionary pages hold them, bands elsewhere")
    tier.add_argument("--sample", type=float, metavar="PERCENT",
                      help="column statistics from a random PERCENT of each partition's row groups (SAMPLE n PERCENT)")
    analyze.add_argument("--stale", type=float, nargs="?", const=0.0, metavar="THRESHOLD",
                         help="only the partitions whose statistics are not accurate (and, given a threshold, whose "
                              "rows changed by that fraction or more, or by rows not counted), every column")
    analyze.set_defaults(func=cmd_analyze)
    check = sub.add_parser("check", help="exit 1 unless every statistic of the tables is accurate now (no Spark)")
    check.add_argument("tables", nargs="*", help="db.table or table (default: every table of --db)")
    check.add_argument("--db", default="default", help="the database whose tables are checked when none is named")
    check.add_argument("--allow-never-analyzed", action="store_true",
                       help="columns never analyzed do not fail the check (statistics gone stale still do)")
    check.add_argument("--show", type=int, default=10, help="stale statistics listed per table")
    check.set_defaults(func=cmd_check)
    auto = sub.add_parser("autoanalyze", help="keep statistics fresh: analyze the partitions gone stale, round "
                                              "after round (or --once)")
    auto.add_argument("--db", action="append", help="a database to watch (repeatable; default: all)")
    when = auto.add_mutually_exclusive_group()
    when.add_argument("--every", default="10m", help="time between rounds' starts, e.g. 10m, 90s (default 10m)")
    when.add_argument("--once", action="store_true", help="one round, then exit (1 if a table failed)")
    auto.add_argument("--mode", default="all", help="all: never-analyzed partitions too; existing: only the "
                                                     "columns analyzed before, as Hive's hive.stats.auto.update")
    auto.add_argument("--threshold", type=float, default=0.3,
                      help="fraction of a partition's rows changed that makes it due (default 0.3)")
    auto.add_argument("--budget", default="15m", help="time a round may take; the rest waits (default 15m)")
    auto.add_argument("--columns", default="all", help="all, or analyzed: only the columns analyzed before")
    auto.set_defaults(func=cmd_autoanalyze)
    report = sub.add_parser("report", help="write a table's report as a standalone HTML page or JSON (no Spark)")
    report.add_argument("table")
    report.add_argument("output", help="a path ending .html or .json")
    report.set_defaults(func=cmd_report)
    publish = sub.add_parser("publish", help="write the lab's accurate statistics of an attached HMS table into "
                                              "that HMS (withdrawing what went stale)")
    publish.add_argument("table", help="NAME.db.t of a catalog attached with --attach")
    publish.set_defaults(func=cmd_publish)
    execute = sub.add_parser("execute", help="run a notebook's cells in a fresh kernel and save its outputs (as "
                                              "jupyter nbconvert --execute, without its stalls on widget cells)")
    execute.add_argument("notebook")
    execute.add_argument("--output", help="where to write it (default: in place)")
    execute.add_argument("--timeout", type=int, default=600, help="seconds a cell may take (default 600)")
    execute.add_argument("--allow-errors", action="store_true",
                         help="run every cell even after one raises (as nbconvert's --allow-errors); the exit code "
                              "is still 1 when one did")
    execute.set_defaults(func=cmd_execute)
    register = sub.add_parser("register", help="register existing files as a table: Parquet under k=v "
                                                "directories, a Delta table, or an Iceberg metadata file")
    register.add_argument("table", help="db.table or table")
    register.add_argument("path", help="the directory (or, for Iceberg, the metadata file); a file: URI too")
    register.add_argument("--format", default="parquet", choices=["parquet", "delta", "iceberg"])
    register.set_defaults(func=cmd_register)
    describe = sub.add_parser("describe", help="DESCRIBE FORMATTED a table, or one column's statistics (no Spark)")
    describe.add_argument("table")
    describe.add_argument("column", nargs="?", help="a column or struct leaf (payload.user.id)")
    describe.add_argument("--partition", help="a partition spec as in SQL, e.g. \"ds='2026-11-21'\"")
    describe.set_defaults(func=cmd_describe)
    skew = sub.add_parser("skew", help="the heavy hitters of one or more columns and the values to declare skewed")
    skew.add_argument("table")
    skew.add_argument("columns", help="a column, or several comma-separated (their combinations' skew)")
    skew.add_argument("--partition", help="one partition, e.g. ds=2026-11-21")
    skew.add_argument("--top", type=int, default=20, help="the most frequent values listed per partition (default 20)")
    skew.add_argument("--k", type=int, dest="top", help=argparse.SUPPRESS)  # 0.1's name
    skew.add_argument("--mode", default=DEFAULT_MODE, choices=MODES,
                      help=f"exact counts every value; approx a frequent-items sketch (default {DEFAULT_MODE})")
    skew.set_defaults(func=cmd_skew)
    join = sub.add_parser("join-skew", help="predict a join's shuffle: each hot key's rows on both sides and "
                                             "the largest tasks, before it runs")
    join.add_argument("left")
    join.add_argument("left_key", help="the left key column (several comma-separated)")
    join.add_argument("right")
    join.add_argument("right_key", help="the right key column (several comma-separated)")
    join.add_argument("--where", help="choose partitions by their keys, e.g. \"ds = '2026-11-21'\"")
    join.add_argument("--how", default="inner", choices=HOW)
    join.add_argument("--show", type=int, default=5, help="largest tasks listed (default 5)")
    join.set_defaults(func=cmd_join_skew)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
