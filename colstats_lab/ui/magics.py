"""IPython magics: `%%analyze` runs statements and shows the statistics view; `%skew` shows the skew view.

Errors a user makes (a statement that does not parse, an unknown table or column, an argument out of
range) are ColstatsErrors; each magic shows one as IPython's UsageError: one message, with a caret
under the bad token, and no traceback.
"""
from __future__ import annotations

from contextlib import contextmanager, nullcontext
from typing import Iterator

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from ..errors import ColstatsError, ParseError
from ..lab import Lab
from ..sql import parse
from ..sql.executor import execute
from ..sql.statements import Analyze, Query, RefreshMetadata
from ..skew import DEFAULT_MODE
from ..skew.report import check_options as check_skew_options
from .progress import SparkProgress


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
    def _lab(self, name: str | None) -> Lab:
        if name is None:
            return Lab.current()
        lab = self.shell.user_ns.get(name)
        if not isinstance(lab, Lab):
            raise UsageError(f"--lab {name}: no Lab of that name in this notebook")
        return lab

    def _set_result(self, value) -> None:
        # The view is the cell's output; the result object goes to `_` for use in code.
        self.shell.user_ns["_"] = value

    @magic_arguments()
    @argument("--lab", default=None, help="the variable holding the Lab to use (default: the last Lab created)")
    @argument("--no-view", action="store_true", help="show the statements' results only, not the statistics view")
    @cell_magic
    def analyze(self, line: str, cell: str):
        """Run the cell's statements (`;`-separated; anything Lab.sql takes) and show the statistics
        view of each analyzed table. The last statement's Result is left in `_`."""
        args = _arguments(self.analyze, line)
        lab = self._lab(args.lab)
        with _user_errors():
            statements = parse(cell)
        result = None
        for stmt in statements:
            with _user_errors():
                with SparkProgress(lab.spark) if _needs_spark(stmt) else nullcontext():
                    result = execute(lab, stmt)
                if result.message:
                    print(result.message)
                if isinstance(stmt, Analyze) and not args.no_view:
                    display(lab.view_stats(result.details.table))
                elif isinstance(stmt, RefreshMetadata) and not args.no_view and not result.details.up_to_date:
                    display(lab.metadata(result.details.table))
                elif result.df is not None:
                    display(result.df)
        self._set_result(result)

    @magic_arguments()
    @argument("target", help="table.column or table.col1,col2, e.g. sales.x")
    @argument("--lab", default=None, help="the variable holding the Lab to use")
    @argument("--partition", default=None, help="the partition to show first, e.g. ds=2026-11-21")
    @argument("--top", type=int, default=10, help="how many of the most frequent values to show")
    @argument("--min-share", type=float, default=0.02, help="share of rows that makes a value a heavy hitter")
    @argument("--mode", default=None, choices=["exact", "approx"], help="exact counts or a frequent-items sketch")
    @line_magic
    def skew(self, line: str):
        """Show the heavy hitters of one or more columns per partition, with the list-bucketing recommendation,
        how the shares move across partitions, and the scan list bucketing saves. `_` is the SkewReport."""
        args = _arguments(self.skew, line)
        table, dot, columns = _unquoted(args.target).rpartition(".")
        names = [c.strip() for c in columns.split(",") if c.strip()]
        if not dot or not table or not names:
            raise UsageError(f"expected table.column, got {args.target!r}")
        lab = self._lab(args.lab)
        with _user_errors():
            check_skew_options(args.mode or DEFAULT_MODE, args.top, args.min_share)
            with SparkProgress(lab.spark):
                view = lab.view_skew(table, names if len(names) > 1 else names[0], k=args.top,
                                     partition=args.partition and _unquoted(args.partition),
                                     min_share=args.min_share, mode=args.mode)
        display(view)
        self._set_result(view.top)


    @line_magic
    def explain(self, line: str):
        """`%explain [--lab NAME] SELECT ...`: show what a query over one lab table reads: segments,
        partitions, list-bucketing directories, files and row groups kept or pruned, with rows, bytes
        and reasons. The query is taken as written (quotes kept). `_` is the PruningReport."""
        words = line.strip().split(None, 2)
        lab_name = None
        if words[:1] == ["--lab"]:
            if len(words) < 3:
                raise UsageError("expected --lab NAME followed by a SELECT query")
            lab_name, line = words[1], words[2]
        lab = self._lab(lab_name)
        query = line.strip()
        if not query:
            raise UsageError("expected a SELECT query, e.g. %explain SELECT * FROM sales WHERE ds = '2026-11-21'")
        with _user_errors():
            view = lab.view_pruning(query)
        display(view)
        self._set_result(view.report)


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
