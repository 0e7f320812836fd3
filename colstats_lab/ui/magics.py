"""IPython magics: `%%analyze` runs statements and shows the statistics view; `%skew` shows the skew view.

Errors a user makes (a statement that does not parse, an unknown table or column) are printed as
a short message, with a caret under the bad token, instead of a traceback.
"""
from __future__ import annotations

from contextlib import nullcontext

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from ..lab import Lab
from ..metastore import MetastoreError
from ..sql import ParseError, parse
from ..sql.executor import execute
from ..sql.statements import Analyze, Query, RefreshMetadata
from .progress import SparkProgress


def _user_error(exc: Exception) -> UsageError:
    return UsageError(exc.pretty() if isinstance(exc, ParseError) else str(exc))


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
        args = parse_argstring(self.analyze, line)
        lab = self._lab(args.lab)
        try:
            statements = parse(cell)
        except ParseError as exc:
            raise _user_error(exc) from None
        result = None
        for stmt in statements:
            try:
                with SparkProgress(lab.spark) if _needs_spark(stmt) else nullcontext():
                    result = execute(lab, stmt)
            except (ParseError, MetastoreError) as exc:
                raise _user_error(exc) from None
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
        args = parse_argstring(self.skew, line)
        table, dot, columns = args.target.rpartition(".")
        if not dot or not table or not columns:
            raise UsageError(f"expected table.column, got {args.target!r}")
        lab = self._lab(args.lab)
        names = [c.strip() for c in columns.split(",") if c.strip()]
        try:
            with SparkProgress(lab.spark):
                view = lab.view_skew(table, names if len(names) > 1 else names[0], k=args.top,
                                     partition=args.partition, min_share=args.min_share, mode=args.mode)
        except (ParseError, MetastoreError) as exc:
            raise _user_error(exc) from None
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
        try:
            view = lab.view_pruning(query)
        except (ParseError, MetastoreError) as exc:
            raise _user_error(exc) from None
        display(view)
        self._set_result(view.report)


def _needs_spark(stmt) -> bool:
    return isinstance(stmt, Query) or (isinstance(stmt, Analyze) and stmt.mode != "noscan")


def load_ipython_extension(ipython) -> None:
    ipython.register_magics(ColstatsMagics)
