"""A Spark query's optimized logical plan as rows: each operator with the optimizer's estimate under the
session's settings (rows, bytes), what it needs statistics of (a join's keys, a filter's columns, a group's
keys, and whether Spark has statistics and a histogram for each), and, once the query ran, the rows it
produced, from the executed plan's `numOutputRows` metrics.

Read through a classic session's JVM objects (py4j): `queryExecution().optimizedPlan()` for the estimates,
`executedPlan()` for the metrics (adaptive execution's final plan once it ran), linked by each physical
node's `logicalLink`. A physical scan links to the
top of the Project-Filter-Relation pattern it was planned from, and a partial aggregate to the same Aggregate
as its final one, so each metric goes to the first operator of its own kind at or below its link, the final
aggregate first (the plan is walked root first)."""
from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pyspark import InheritableThread

from .task_metrics import RecordedTasks, TaskRecorder

# Spark's operators whose output has as many rows as their one child's
ROW_PRESERVING = {"Project", "Sort", "SubqueryAlias", "Repartition", "RepartitionByExpression",
                  "RebalancePartitions", "Window", "ResolvedHint", "View", "WithCTE"}
LEAVES = {"LogicalRelation", "HiveTableRelation", "LocalRelation", "DataSourceV2Relation",
          "DataSourceV2ScanRelation", "InMemoryRelation", "Range", "OneRowRelation", "LogicalRDD"}
# the logical operator a physical one with a row count computes
PHYSICAL_KIND = {"FileSourceScanExec": "leaf", "RowDataSourceScanExec": "leaf", "BatchScanExec": "leaf",
                 "HiveTableScanExec": "leaf", "InMemoryTableScanExec": "leaf", "LocalTableScanExec": "leaf",
                 "RangeExec": "leaf", "RDDScanExec": "leaf", "FilterExec": "Filter",
                 "BroadcastHashJoinExec": "Join", "SortMergeJoinExec": "Join", "ShuffledHashJoinExec": "Join",
                 "BroadcastNestedLoopJoinExec": "Join", "CartesianProductExec": "Join",
                 "HashAggregateExec": "Aggregate", "ObjectHashAggregateExec": "Aggregate",
                 "SortAggregateExec": "Aggregate", "ExpandExec": "Expand", "GenerateExec": "Generate",
                 "SampleExec": "Sample", "SortExec": "Sort"}  # a sort's rows are its input's; its time, spill, memory
# a range comparison as an expression's text shows it: `(price#5 > 75.0)`, `(d#3 <= 2026-01-01)`
_RANGE_TEXT = re.compile(r" (?:>|>=|<|<=) ")
_ATTRIBUTE_ID = re.compile(r"#(\d+)L?(?=[,)\]]|$)")  # the ids in an attribute list's text: `List(k#1L, v#2)`
OWN_TEXT_FIELDS = 10_000  # an operator's text with every field of it, none cut off


@dataclass(frozen=True)
class ColumnUse:
    """A column an operator needs statistics of: its name, the table it comes from (None: computed), and
    whether the optimizer has statistics (and a histogram) for it at that operator's input."""
    name: str
    table: str | None
    has_stats: bool
    has_histogram: bool


@dataclass
class RunFigures:
    """What Spark's SQL metrics say an operator's physical node did in one run: its time (the node's timing
    metrics summed over its tasks, in seconds), bytes (a scan's files read, an exchange's shuffle written, else
    its output's data size), spill and peak memory in bytes (None where the node keeps no such metric), and its
    output rows per task of the one pass of its stage (`task_rows`, sorted)."""
    time_s: float | None = None
    bytes: int | None = None
    spill_bytes: int | None = None
    peak_memory: int | None = None
    task_rows: list[int] = field(default_factory=list)

    @property
    def tasks(self) -> int | None:
        return len(self.task_rows) or None

    def spread(self) -> tuple[int, float, int] | None:
        """The fewest, median and most rows a task produced."""
        if not self.task_rows:
            return None
        rows = self.task_rows
        middle = len(rows) // 2
        median = rows[middle] if len(rows) % 2 else (rows[middle - 1] + rows[middle]) / 2
        return rows[0], median, rows[-1]


@dataclass
class Operator:
    """One node of the optimized plan; `id` is its place root first, `parent` its parent's id."""
    id: int
    parent: int | None
    depth: int
    kind: str  # Spark's class: Join, Filter, Aggregate, LogicalRelation, ...
    node: str  # as shown: "Join Inner", "Scan default.sales", ...
    estimated_rows: int | None
    estimated_bytes: int
    table: str | None = None  # a scan's table
    catalog_rows: int | None = None  # a scan's row count in its catalog's statistics (None: none kept)
    catalog_columns: int = 0  # how many of its columns the catalog keeps statistics of
    join_keys: list[tuple[ColumnUse, ColumnUse]] = field(default_factory=list)
    columns: list[ColumnUse] = field(default_factory=list)  # a filter's or a grouping's columns
    range_filter: bool = False
    range_columns: list[ColumnUse] = field(default_factory=list)  # those a range comparison bounds
    limit: int | None = None
    actual_rows: int | None = None
    run: RunFigures | None = None  # what Spark measured of it while the query ran (classic sessions)
    children: list[int] = field(default_factory=list)
    plan: Any = field(default=None, repr=False, compare=False)  # the JVM node
    text: str | None = field(default=None, repr=False, compare=False)  # its own text, once read


def _seq(scala_seq) -> list:
    return [scala_seq.apply(i) for i in range(scala_seq.size())]


def _option(scala_option):
    return scala_option.get() if scala_option.isDefined() else None


def _kind(java_object) -> str:
    return java_object.getClass().getSimpleName()


def _expression_kind(expression) -> str:
    """An expression's class name in one call (`nodeName` is it for these: And, EqualTo, AttributeReference)."""
    return expression.nodeName()


def optimized_operators(dataframe, leaf_table: Callable[[Any], str | None],
                        renamed: dict[str, str] | None = None) -> list[Operator]:
    """The operators of `dataframe`'s optimized plan, root first; `leaf_table` names the table a relation
    without a catalog entry reads (a lab table bound as a view over its files), from the relation's root
    paths; `renamed`, the lab table a catalog table (`db.table`) stands for."""
    plan = dataframe._jdf.queryExecution().optimizedPlan()
    sources: dict[int, str | None] = {}  # attribute id -> table of the relation that outputs it
    operators: list[Operator] = []
    _walk(plan, None, 0, operators, leaf_table)
    for op in operators:
        lab_name = next((lab for catalog, lab in (renamed or {}).items()
                         if op.table and (op.table == catalog or op.table.endswith("." + catalog))), None)
        if lab_name is not None:
            op.table, op.node = lab_name, f"Scan {lab_name}"
    for op in operators:
        if op.kind in LEAVES:
            for attribute_id in _ATTRIBUTE_ID.findall(op.plan.output().toString()):  # one call, not three a column
                sources[int(attribute_id)] = op.table
    for op in operators:
        _describe_needs(op, sources)
    return operators


def _walk(node, parent: int | None, depth: int, out: list[Operator], leaf_table) -> None:
    statistics = node.stats()
    rows = _option(statistics.rowCount())
    kind = _kind(node)
    op = Operator(len(out), parent, depth, kind, kind, None if rows is None else int(str(rows)),
                  int(str(statistics.sizeInBytes())), plan=node)
    out.append(op)
    if parent is not None:
        out[parent].children.append(op.id)
    if kind in LEAVES:
        _describe_leaf(op, leaf_table)
    elif kind == "Join":
        op.node = f"Join {node.joinType().toString()}"
    elif kind in ("GlobalLimit", "LocalLimit"):
        try:
            op.limit = int(str(node.limitExpr().eval(None)))
        except Exception:  # a limit Spark computes at run time: no bound known here
            op.limit = None
    for child in _seq(node.children()):
        _walk(child, op.id, depth + 1, out, leaf_table)


def _describe_leaf(op: Operator, leaf_table) -> None:
    node = op.plan
    catalog_table = None
    if op.kind == "LogicalRelation":
        catalog_table = _option(node.catalogTable())
    elif op.kind == "HiveTableRelation":
        catalog_table = node.tableMeta()
    if catalog_table is not None:
        op.table = catalog_table.identifier().unquotedString()
        stats = _option(catalog_table.stats())
        if stats is not None:
            count = _option(stats.rowCount())
            op.catalog_rows = None if count is None else int(str(count))
            op.catalog_columns = stats.colStats().size()
    elif op.kind == "LogicalRelation":
        op.table = leaf_table(node)
    elif op.kind in ("DataSourceV2Relation", "DataSourceV2ScanRelation"):
        op.table = str(node.name())
    op.node = f"Scan {op.table}" if op.table else ("Scan " + {"LocalRelation": "local rows", "Range": "range",
                                                                "InMemoryRelation": "cached rows",
                                                                "OneRowRelation": "one row"}.get(op.kind, "files"))


def _attributes(expression) -> list:
    return _seq(expression.references().toSeq())


def _column_use(attribute, child_stats, sources: dict[int, str | None]) -> ColumnUse:
    """`attribute` with whether `child_stats` (an input's `attributeStats`) hold statistics and a histogram of it."""
    stat = _option(child_stats.get(attribute))
    name, _, attribute_id = str(attribute.toString()).rpartition("#")  # `price#12` or `ss_item_sk#3L`
    return ColumnUse(name, sources.get(int(attribute_id.rstrip("L"))), stat is not None,
                     stat is not None and stat.histogram().isDefined())


def _describe_needs(op: Operator, sources: dict[int, str | None]) -> None:
    node = op.plan
    if op.kind == "Join":
        condition = _option(node.condition())
        if condition is None:
            return
        left, right = node.left(), node.right()
        left_stats = right_stats = None  # read once, when a key needs them
        for conjunct in _conjuncts(condition):
            if _expression_kind(conjunct) not in ("EqualTo", "EqualNullSafe"):
                continue
            a, b = _uncast(conjunct.left()), _uncast(conjunct.right())
            if _expression_kind(a) != "AttributeReference" or _expression_kind(b) != "AttributeReference":
                continue
            if not left.outputSet().contains(a):
                a, b = b, a
            left_stats, right_stats = left_stats or left.stats().attributeStats(), \
                right_stats or right.stats().attributeStats()
            op.join_keys.append((_column_use(a, left_stats, sources), _column_use(b, right_stats, sources)))
    elif op.kind == "Filter":
        child_stats = node.child().stats().attributeStats()
        conjuncts = _conjuncts(node.condition())
        seen: dict[str, ColumnUse] = {}
        ranged: dict[str, ColumnUse] = {}
        for conjunct in conjuncts:
            in_range = _RANGE_TEXT.search(conjunct.toString()) is not None
            for attribute in _attributes(conjunct):
                use = _column_use(attribute, child_stats, sources)
                seen.setdefault(f"{use.table}.{use.name}", use)
                if in_range:
                    ranged.setdefault(f"{use.table}.{use.name}", use)
        op.columns, op.range_columns, op.range_filter = list(seen.values()), list(ranged.values()), bool(ranged)
    elif op.kind == "Aggregate":
        child_stats = node.child().stats().attributeStats()
        op.columns = [_column_use(a, child_stats, sources) for e in _seq(node.groupingExpressions())
                      for a in _attributes(e)]


# what Spark wraps a join key in without changing which rows meet: a cast to compare two types (a bigint key
# against a double one), and a floating-point key's normalization of NaN and -0.0
_KEY_WRAPPERS = ("Cast", "KnownFloatingPointNormalized", "NormalizeNaNAndZero")


def _uncast(expression):
    """A join key's column under the wrappers Spark adds (_KEY_WRAPPERS)."""
    while _expression_kind(expression) in _KEY_WRAPPERS:
        expression = expression.child()
    return expression


def _conjuncts(expression) -> list:
    if _expression_kind(expression) == "And":
        return _conjuncts(expression.left()) + _conjuncts(expression.right())
    return [expression]


LATE_STAGE_JOBS_S = 1.0  # how long a stopped run's tag is still cancelled after its thread ended


class CountingRun:
    """The query's one run (its rows are counted, not collected) in a thread of its own, so that its plan is
    read while it runs. Its jobs carry a tag of their own (a tag, not a job group: the caller's group stays)."""

    def __init__(self, dataframe) -> None:
        execution = dataframe._jdf.queryExecution()
        execution.executedPlan()  # planned here, before the thread runs what it planned
        self._context = dataframe.sparkSession.sparkContext
        self._tag = f"colstats-explain-{uuid.uuid4().hex}"
        self._failure: list[BaseException] = []
        self.tasks = TaskRecorder(self._context)  # each operator's rows over one pass, whatever sampled it first
        self.tasks.start()

        def count() -> None:
            self._context.addJobTag(self._tag)
            try:
                execution.toRdd().count()
            except BaseException as error:  # handed to the waiting thread, which raises it
                self._failure.append(error)
            finally:
                self._context.removeJobTag(self._tag)
        self._thread = InheritableThread(target=count, daemon=True)  # the caller's job properties go with it
        self._thread.start()

    def wait(self) -> None:
        """Waits for the run; raises what it raised. Interrupted, it stops the run first."""
        try:
            self._thread.join()
        except BaseException:
            self.stop()
            raise
        self.tasks.stop()
        if self._failure:
            raise self._failure[0]

    def stop(self) -> None:
        """Cancels the run's jobs until its thread ends: one submitted after a first cancel is cancelled too
        (an interrupt may come before the run's job starts; pyspark's own SIGINT handler cancels only the
        jobs running then)."""
        while self._thread.is_alive():
            self._context.cancelJobsWithTag(self._tag)
            self._thread.join(0.2)
        # a query stage the run started in a thread of Spark's own (a broadcast: its job carries the run's tag) may
        # submit its job after the run's thread ended, cancelled (seen: still running a second later)
        deadline = time.monotonic() + LATE_STAGE_JOBS_S
        while time.monotonic() < deadline:
            self._context.cancelJobsWithTag(self._tag)
            time.sleep(0.1)
        self.tasks.stop()


def count_actual_rows(dataframe, operators: list[Operator], running: CountingRun | None = None) -> None:
    """Sets each operator's `actual_rows` once the query ran (`running`, a run started already; None: it runs
    now): from the executed plan's metrics where a physical node
    computes it, from its child's for an operator that keeps every row (a projection, a sort), bounded by a
    limit's count; each join's node names the physical join that ran."""
    plan = dataframe._jdf.queryExecution().executedPlan()
    if running is None:
        running = CountingRun(dataframe)
    adaptive = _kind(plan) == "AdaptiveSparkPlanExec"  # its final plan is known once it ran
    try:
        links = [] if adaptive else list(_linked(plan, operators))  # a fixed plan is linked while it runs
    except BaseException:
        running.stop()
        raise
    running.wait()
    _read_links(list(_linked(plan, operators)) if adaptive else links, running.tasks.recorded)
    rows_from_inputs(operators)


def rows_from_inputs(operators: list[Operator]) -> None:
    """The rows of the operators no metric counted, from their inputs': a projection or a sort its input's,
    a limit the smaller of its bound and its input's, a union the sum of its inputs'."""
    for op in reversed(operators):  # children before parents
        if op.actual_rows is not None:
            continue
        known = [operators[c].actual_rows for c in op.children]
        if len(known) == 1 and known[0] is not None and op.kind in ROW_PRESERVING:
            op.actual_rows = known[0]
        elif len(known) == 1 and known[0] is not None and op.limit is not None:
            op.actual_rows = min(op.limit, known[0])
        elif op.kind == "Union" and known and None not in known:
            op.actual_rows = sum(k for k in known if k is not None)


def name_join_strategies(dataframe, operators: list[Operator]) -> None:
    """Adds to each join's node the physical join Spark planned for it ("Join Inner (BroadcastHashJoin)"):
    what the estimates decided (adaptive execution's initial plan: nothing ran)."""
    _read_links(list(_linked(dataframe._jdf.queryExecution().executedPlan(), operators)), None)


def _read_links(links: list, tasks: RecordedTasks | None) -> None:
    """Each linked join's kind onto its node and, given the run's `tasks`, each operator's rows: its
    `numOutputRows` over one pass (Spark's own sum where no task recorded it)."""
    for physical, kind, target in links:
        if target.kind == "Join" and "(" not in target.node:
            target.node += f" ({kind.removesuffix('Exec')})"
        if tasks is not None and target.actual_rows is None:
            metric = _option(physical.metrics().get("numOutputRows"))
            if metric is not None:
                one_pass = tasks.total(int(metric.id()))
                target.actual_rows = int(metric.value()) if one_pass is None else one_pass
            target.run = run_figures(physical, tasks, None if metric is None else int(metric.id()))


# the SQL metrics (by key, as Spark Connect names them too) that hold a physical node's bytes, first found first:
# a scan's files read, an exchange's shuffle written, any node's output data size
_BYTES = ("filesSize", "shuffleBytesWritten", "dataSize")
SPILL, PEAK_MEMORY = "spillSize", "peakMemory"


def run_figures(physical, tasks: RecordedTasks, rows_metric: int | None) -> RunFigures:
    """A physical node's figures from its SQL metrics after a run (`tasks`: what each task added to them)."""
    metrics = physical.metrics()
    names = metrics.keySet().iterator()
    kept = []
    while names.hasNext():
        key = names.next()
        metric = metrics.get(key).get()
        kept.append((str(key), metric.metricType(), int(metric.value())))
    rows = tasks.one_pass(rows_metric) if rows_metric is not None else None
    return figures_of(kept, sorted((rows or {}).values()))


def figures_of(metrics: list[tuple[str, str, int]], task_rows: list[int]) -> RunFigures:
    """The figures of a node's SQL metrics, each (key, type, value summed over its tasks): its time from
    its timing metrics, its bytes (the first of _BYTES it keeps), spill and peak memory; `task_rows`, sorted."""
    seconds, sizes = 0.0, {}
    timed = False
    for name, kind, value in metrics:
        if kind in ("timing", "nsTiming"):
            seconds += value / (1e3 if kind == "timing" else 1e9)
            timed = True
        elif kind == "size":
            sizes[name] = value
    return RunFigures(seconds if timed else None, next((sizes[n] for n in _BYTES if n in sizes), None),
                      sizes.get(SPILL), sizes.get(PEAK_MEMORY), task_rows)


def _linked(plan, operators: list[Operator]):
    """(physical node, its class, the operator it computes) for the physical nodes that compute one, root
    first. A link is matched by the linked operator's own text (its kind and expressions, whose attribute ids
    make it one of a kind in a plan; not its children): adaptive execution re-plans what lies above a query
    stage with the stage in place of its subtree, so its operators are copies of the optimized plan's, equal
    but for that."""
    by_text: dict[str, list[Operator]] = {}
    for op in operators:
        if op.text is None:
            op.text = op.plan.simpleString(OWN_TEXT_FIELDS)
        by_text.setdefault(op.text, []).append(op)
    for physical, kind in _physical_nodes(plan):
        wanted = PHYSICAL_KIND.get(kind)
        link = _option(physical.logicalLink()) if wanted is not None else None
        if wanted is None or link is None:
            continue
        if _kind(link) == "LogicalQueryStage":  # an operator adaptive execution ran as a stage of its own
            link = link.logicalPlan()
        same = by_text.get(link.simpleString(OWN_TEXT_FIELDS), [])
        linked = same[0] if len(same) == 1 else None  # two operators of one text: neither can be told apart
        target = _descend_to(linked, wanted, operators) if linked is not None else None
        if target is not None:
            yield physical, kind, target


def _descend_to(op: Operator, wanted: str, operators: list[Operator]) -> Operator | None:
    """`op` or the first operator below it, along single children, of the kind a physical node computes."""
    while True:
        if (wanted == "leaf" and op.kind in LEAVES) or op.kind == wanted:
            return op
        if len(op.children) != 1:
            return None
        op = operators[op.children[0]]


def _physical_nodes(plan) -> list[tuple[Any, str]]:
    """The executed plan's nodes root first, each with its class, through adaptive execution's query stages."""
    out, stack = [], [plan]
    while stack:
        node = stack.pop()
        kind = _kind(node)
        if kind == "AdaptiveSparkPlanExec":
            stack.append(node.executedPlan())
            continue
        if kind.endswith("QueryStageExec") or kind == "ResultQueryStage":
            stack.append(node.plan())
            continue
        out.append((node, kind))
        stack.extend(reversed(_seq(node.children())))
    return out
