"""IPython magics: `%%analyze` runs statements and shows the statistics view; `%skew` shows the skew view.

Errors a user makes (a statement that does not parse, an unknown table or column, an argument out of
range) are ColstatsErrors; each magic shows one as IPython's UsageError: one message, with a caret
under the bad token, and no traceback.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display
from traitlets import Enum, Float, Integer, Unicode

from ..errors import ColstatsError, ParseError
from ..lab import Lab
from ..pruning import PruningReport
from ..skew import DEFAULT_MODE
from ..skew.report import check_options as check_skew_options
from ..sql.statements import Analyze, Query, RefreshMetadata
from ..ui.progress import SparkProgress


@contextmanager
def _user_errors(prefix: str = "") -> Iterator[None]:
    """The package's errors as one UsageError line (a parse error keeps its caret)."""
    try:
        yield
    except ColstatsError as exc:
        text = exc.pretty() if isinstance(exc, ParseError) else str(exc)
        raise UsageError(prefix + text) from None


def _arguments(magic, line: str):
    """The magic's parsed arguments; a line the parser refuses is one UsageError naming it."""
    try:
        return parse_argstring(magic, line)
    except UsageError:
        raise
    except (ValueError, SystemExit) as exc:  # shlex's "No closing quotation", argparse giving up
        raise UsageError(f"cannot read the arguments {line.strip()!r}: {exc}") from None


@magics_class
class ColstatsMagics(Magics):
    """Settable with `%config ColstatsMagics.top = 20` or in ipython_config.py (`c.ColstatsMagics.top`)."""

    home = Unicode(None, allow_none=True,
                   help="the folder of the Lab the magics make when the notebook has made none "
                        "(default: $COLSTATS_HOME or ./.colstats)").tag(config=True)
    top = Integer(10, help="how many of the most frequent values %skew shows").tag(config=True)
    min_share = Float(0.02, help="share of rows that makes a value a heavy hitter in %skew").tag(config=True)
    skew_mode = Enum(["exact", "approx"], default_value=None, allow_none=True,
                     help="%skew's counting: exact, or a frequent-items sketch (default: the lab's own)"
                     ).tag(config=True)

    def _lab(self, name: str | None) -> Lab:
        if name is None:
            return Lab.current(self.home)
        lab = self.shell.user_ns.get(name) if self.shell is not None else None
        if not isinstance(lab, Lab):
            raise UsageError(f"--lab {name}: no Lab of that name in this notebook")
        return lab

    def _returned(self, value):
        """The magic's value: shown as the cell's output when it ends the cell, kept when assigned
        (`r = %skew sales.x`), and in `_` either way."""
        self.shell.user_ns["_"] = value
        return value

    @magic_arguments()
    @argument("--lab", default=None, help="the variable holding the Lab to use (default: the last Lab created)")
    @argument("--no-view", action="store_true", help="show the statements' results only, not the statistics view")
    @cell_magic
    def analyze(self, line: str, cell: str):
        """Run the cell's statements (`;`-separated; anything Lab.sql takes), showing each one's outcome:
        the statistics view of an analyzed table, the metadata of a refreshed one, the rows of a query.
        The last one is the cell's value: a view whose `.result` is the statement's Result (its
        attributes read through), or the Result itself."""
        args = _arguments(self.analyze, line)
        lab = self._lab(args.lab)
        with _user_errors():
            statements = lab.parse(cell)
        output = None
        for stmt in statements:
            if output is not None:
                display(output)  # the previous statement's, now that another follows
            with _user_errors():
                with SparkProgress(lab.spark) if _needs_spark(stmt) else nullcontext():
                    result = lab.run(stmt)
                view = None if args.no_view else _view_of(lab, stmt, result)
            if view is not None and result.message:
                print(result.message)  # a Result shows its own
            output = result if view is None else view
        return self._returned(output)

    @magic_arguments()
    @argument("target", help="table.column or table.col1,col2, e.g. sales.x")
    @argument("--lab", default=None, help="the variable holding the Lab to use")
    @argument("--partition", default=None, help="the partition to show first, e.g. ds=2026-11-21")
    @argument("--top", type=int, default=None, help="how many of the most frequent values to show (default 10)")
    @argument("--min-share", type=float, default=None,
              help="share of rows that makes a value a heavy hitter (default 0.02)")
    @argument("--mode", default=None, choices=["exact", "approx"], help="exact counts or a frequent-items sketch")
    @line_magic
    def skew(self, line: str):
        """The heavy hitters of one or more columns per partition, with the list-bucketing recommendation,
        how the shares move across partitions, and the scan list bucketing saves. The value is the skew
        view; `.result` is the SkewReport, whose attributes read through (`r = %skew sales.x; r.recommended`).
        `%skew [--run] orders.customer_id [LEFT|RIGHT|FULL] JOIN customers.id [WHERE ds = '...']` predicts a
        join's shuffle skew from statistics instead (`--run` also counts each task as Spark places it)."""
        join = _JOIN.match(line.strip())
        if join is not None:
            return self._join_skew(join)
        args = _arguments(self.skew, line)
        lab = self._lab(args.lab)
        table, columns = _table_and_columns(lab, _unquoted(args.target))
        names = [c.strip() for c in columns.split(",") if c.strip()]
        if not table or not names:
            raise UsageError(f"expected table.column, got {args.target!r}")
        top = self.top if args.top is None else args.top
        min_share = self.min_share if args.min_share is None else args.min_share
        mode = args.mode or self.skew_mode
        with _user_errors():
            check_skew_options(mode or DEFAULT_MODE, top, min_share)
            with SparkProgress(lab.spark):
                view = lab.views.skew(table, names if len(names) > 1 else names[0], top=top,
                                      partition=args.partition and _unquoted(args.partition),
                                      min_share=min_share, mode=mode)
        return self._returned(view)

    def _join_skew(self, join) -> object:
        """`%skew [--lab NAME] [--run] orders.customer_id [LEFT|RIGHT|FULL [OUTER]] JOIN customers.id [WHERE ...]`:
        the join's shuffle predicted from statistics (the join skew view; `.result` is the report)."""
        sides = []
        for target in (join["left"], join["right"]):
            table, dot, column = _unquoted(target).rpartition(".")
            if not dot or not table or not column:
                raise UsageError(f"expected table.column on each side of JOIN, got {target!r}")
            sides += [table, column]
        lab = self._lab(join["lab"])
        with _user_errors():
            with SparkProgress(lab.spark):
                view = lab.views("join_skew", *sides, where=join["where"], how=(join["how"] or "inner").lower(),
                                run=bool(join["run"]))
        return self._returned(view)

    @magic_arguments()
    @argument("target", help="table.column, e.g. sales.x")
    @argument("--lab", default=None, help="the variable holding the Lab to use")
    @argument("--partition", default=None, help="a partition instead of the table level, e.g. ds=2026-11-21")
    @argument("--over-time", action="store_true", help="the table level's states over time, not the partitions")
    @line_magic
    def drift(self, line: str):
        """`%drift table.column [--partition ds=... | --over-time] [--lab NAME]`: for a partitioned table the
        latest state of each partition against the partition before; with --partition that partition's states
        over time, with --over-time the table level's (null fraction, distinct values, quartiles and PSI at
        each kept state); and the column's rules' outcomes (`lab.tables[name].expect`). The value is the drift view;
        `.result` is its frame."""
        args = _arguments(self.drift, line)
        table, dot, column = _unquoted(args.target).rpartition(".")
        if not dot or not table or not column:
            raise UsageError(f"expected table.column, got {args.target!r}")
        lab = self._lab(args.lab)
        with _user_errors():
            view = lab.views("drift", table, column.strip(), partition=args.partition and _unquoted(args.partition),
                            along="time" if args.over_time or args.partition else None)
        return self._returned(view)

    @magic_arguments()
    @argument("table", help="the table, e.g. sales")
    @argument("--lab", default=None, help="the variable holding the Lab to use")
    @argument("--partition", default=None, help="a partition instead of the table level, e.g. ds=2026-11-21")
    @line_magic
    def profile(self, line: str):
        """`%profile table [--partition ds=...] [--lab NAME]`: the table's profile from the statistics it keeps (no
        Spark job): a card per column with its histogram, top values, figures and alerts. The value is the
        profile view; `.result` is the Profile (`.suggest()`, `.to_great_expectations(path)`, `.to_html(path)`)."""
        args = _arguments(self.profile, line)
        lab = self._lab(args.lab)
        with _user_errors():
            view = lab.views("profile", _unquoted(args.table), partition=args.partition and _unquoted(args.partition))
        return self._returned(view)

    @line_cell_magic
    def explain(self, line: str, cell: str | None = None):
        """`%explain [--lab NAME] [--run] SELECT ...`, or `%%explain [--lab NAME] [--run]` over a cell holding
        the query: how Spark plans it, operator by operator (estimated rows and bytes, whose statistics each
        scan had, why an estimate is off and what to run; with --run the query runs once and each operator's
        rows are counted), drawn as the plan view; a SELECT over one lab table shows the pruning view, what it
        reads. The query is taken as written (quotes kept). `.result` is the report."""
        options, query = _explain_options(line, cell)
        lab = self._lab(options.get("lab"))
        if not query:
            raise UsageError("expected a query, e.g. %explain --run SELECT * FROM sales WHERE ds = '2026-11-21'")
        with _user_errors():
            report = lab.explain(query, run="run" in options)
            view = lab.views("pruning" if isinstance(report, PruningReport) else "plan", query, report=report)
        return self._returned(view)


def _explain_options(line: str, cell: str | None) -> tuple[dict[str, str], str]:
    """`--lab NAME` and `--run`, in any order, before the query (a line magic) or alone on the line (a cell
    magic, whose cell holds the query)."""
    rest, options = line.strip(), {}
    while rest.startswith("--"):
        flag = re.match(r"--(run|lab)\b\s*(\S+)?\s*", rest)
        if flag is None or (flag.group(1) == "lab" and not flag.group(2)):
            raise UsageError(f"expected --lab NAME or --run before the query, not {rest.split()[0]!r}")
        if flag.group(1) == "run":
            options["run"] = "yes"
            rest = rest[len("--run"):].strip()
        else:
            options["lab"] = flag.group(2)
            rest = rest[flag.end():].strip()
    if cell is not None and rest:
        raise UsageError(f"%%explain takes only --lab NAME and --run on its line, not {rest!r}; the query goes in "
                         "the cell")
    return options, (rest if cell is None else cell).strip()


_JOIN = re.compile(r"^(?:--lab\s+(?P<lab>\S+)\s+)?(?P<run>--run\s+)?(?P<left>\S+)\s+"
                   r"(?:(?P<how>inner|left|right|full)\s+(?:outer\s+)?)?join\s+(?P<right>\S+)"
                   r"(?:\s+where\s+(?P<where>.+))?$", re.IGNORECASE | re.DOTALL)


def _view_of(lab: Lab, stmt, result):
    """What a statement shows beside its message: the statistics view after ANALYZE, the metadata after a
    REFRESH METADATA that changed it; the view's `.result` is the statement's Result."""
    if isinstance(stmt, Analyze):
        view = lab.views.stats(result.details.table)
    elif isinstance(stmt, RefreshMetadata) and not result.details.up_to_date:
        view = lab.views.metadata(result.details.table)
    else:
        return None
    view.result = result
    return view


def _unquoted(text: str) -> str:
    """IPython keeps the quotes of a quoted argument ("sales.my col"): take them off."""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def _needs_spark(stmt) -> bool:
    return isinstance(stmt, Query) or (isinstance(stmt, Analyze) and stmt.mode != "noscan")


def load_ipython_extension(ipython) -> None:
    ipython.register_magics(ColstatsMagics)
    # Spark's cold start (about 12 s) overlaps the user's next cells instead of the first %%analyze
    Lab.start_spark_early()


def _table_and_columns(lab, target: str) -> tuple[str, str]:
    """`[db.]table` and the column text after it in `table.column`, `db.table.column` or a struct's leaf
    (`events.payload.user.id`): the longest prefix of at most two names that is a table, else the first name."""
    parts = target.split(".")
    for size in (2, 1):
        if len(parts) > size:
            try:
                lab.resolve(".".join(parts[:size]))
            except ColstatsError:
                continue
            return ".".join(parts[:size]), ".".join(parts[size:])
    table, _, columns = target.rpartition(".")
    return table, columns
