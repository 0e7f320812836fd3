"""Why an estimate is off, and what to run about it: the likely cause of each operator whose estimate is
off by `OFF_BY` or more, and the fixes those causes ask for. Spark's estimates follow
`spark.sql.catalyst.plans.logical.statsEstimation`: a join's rows from its keys' distinct counts (the most
selective key alone when there are several), a filter's from its columns' ranges (evenly spread without
a histogram) with the selectivities of its conjuncts multiplied, and sizes only without a row count."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..quoting import column_ref, qualified
from .operators import LEAVES, ColumnUse, Operator

OFF_BY = 10.0  # a q-error from which an estimate is called off and its cause named
INHERITED = 3.0  # an operator whose own error is within this factor of its input's only carries it
CARRIED = "carries its input's error"


@dataclass
class Diagnosis:
    """Each operator's cause (by id) and the fixes, in the order first needed."""
    lab_tables: dict[str, str] = field(default_factory=dict)  # read as files, with why: Spark has their sizes only
    lab_names: set[str] = field(default_factory=set)  # every lab table of the query
    causes: dict[int, str] = field(default_factory=dict)
    fixes: list[str] = field(default_factory=list)

    def fix(self, text: str) -> None:
        if text not in self.fixes:
            self.fixes.append(text)


def q_error(estimated: int | None, actual: int | None) -> float | None:
    """max(est/act, act/est), each floored at one row; None when either is unknown."""
    if estimated is None or actual is None:
        return None
    e, a = max(float(estimated), 1.0), max(float(actual), 1.0)
    return max(e / a, a / e)


def diagnose(operators: list[Operator], stale: dict[str, bool], cbo: bool, histograms: bool,
             lab_tables: dict[str, str], lab_names: set[str]) -> Diagnosis:
    """The causes of the operators off by OFF_BY or more (`stale`: the lab's tables whose statistics it knows
    are stale, by name; `lab_tables`: those read as files, with why, whose statistics Spark never sees) and
    the fixes, including those a plan without any row estimate needs."""
    found = Diagnosis(lab_tables, lab_names)
    for op in operators:
        if op.kind in LEAVES and op.table in lab_tables:
            if stale.get(op.table) or "not all accurate" in lab_tables[op.table]:
                found.fix(f"ANALYZE TABLE {_table(op.table)} COMPUTE STATISTICS FOR COLUMNS: Spark plans it with the "
                          "lab's statistics once they are accurate, with its size only until then")
        elif op.kind in LEAVES and op.catalog_rows is not None and op.estimated_rows is None and not cbo:
            found.fix("spark.conf.set('spark.sql.cbo.enabled', 'true'): the catalog keeps row counts Spark's "
                      "optimizer ignores without it")
        elif op.kind in LEAVES and op.table and op.catalog_rows is None and op.table not in lab_tables \
                and op.kind != "LocalRelation":
            found.fix(f"ANALYZE TABLE {_table(op.table)} COMPUTE STATISTICS FOR ALL COLUMNS (Spark has its size only)")
    for op in operators:
        error = q_error(op.estimated_rows, op.actual_rows)
        if error is not None and error >= OFF_BY:
            found.causes[op.id] = _cause(op, operators, stale, cbo, histograms, found)
        elif op.estimated_rows is None and any(operators[c].estimated_rows is not None for c in op.children):
            # the estimate of rows stops here: Spark falls back to sizes from this operator up
            missing = _without_statistics(op)
            if missing:
                _analyze_fix(missing, found)
                found.causes[op.id] = "no row estimate: " + _what_lacks(op, missing)
    return found


def _cause(op: Operator, operators: list[Operator], stale: dict[str, bool], cbo: bool, histograms: bool,
           found: Diagnosis) -> str:
    if op.kind in LEAVES:
        if op.table and stale.get(op.table):
            found.fix(f"ANALYZE TABLE {_table(op.table)} COMPUTE STATISTICS FOR COLUMNS, then publish or export it again")
            return f"statistics of {op.table} the lab knows are stale"
        return "the row count Spark keeps for the table is not its rows now"
    inputs = [operators[c] for c in op.children]
    worst_input = max(inputs, key=lambda i: q_error(i.estimated_rows, i.actual_rows) or 1.0, default=None)
    own = _own_error(op, worst_input)
    if worst_input is not None and own is not None and own < INHERITED:
        return f"{CARRIED} (operator {worst_input.id}: {worst_input.node})"
    missing = _without_statistics(op) if cbo else []
    if missing:
        _analyze_fix(missing, found)
        return _what_lacks(op, missing)
    if op.kind == "Join":
        return _join_cause(op)
    if op.kind == "Filter":
        return _filter_cause(op, cbo, histograms, found)
    if op.kind == "Aggregate":
        return "the distinct counts of the grouping columns are multiplied as if independent"
    return "an operator Spark estimates from its input's size only"


def _without_statistics(op: Operator) -> list[ColumnUse]:
    """The columns `op` estimates from that have no statistics at its input."""
    if op.kind == "Join":
        return [c for pair in op.join_keys for c in pair if not c.has_stats]
    return [c for c in op.columns if not c.has_stats] if op.kind in ("Filter", "Aggregate") else []


def _what_lacks(op: Operator, missing: list[ColumnUse]) -> str:
    names = ", ".join(_spelled(c) for c in missing)
    what = {"Join": "join key", "Filter": "a predicate on", "Aggregate": "grouping by"}[op.kind]
    return f"{what} {names} without column statistics"


def _own_error(op: Operator, worst_input: Operator | None) -> float | None:
    """How far off `op` is beyond what its worst input already was."""
    if worst_input is None or worst_input.estimated_rows is None or worst_input.actual_rows is None:
        return None
    if op.estimated_rows is None or op.actual_rows is None:
        return None
    ratio = (max(op.estimated_rows, 1) / max(op.actual_rows, 1)) / \
        (max(worst_input.estimated_rows, 1) / max(worst_input.actual_rows, 1))
    return max(ratio, 1 / ratio)


def _join_cause(op: Operator) -> str:
    if not op.join_keys:
        return "a join without equality keys: Spark estimates it as a cross product"
    if len(op.join_keys) > 1:
        return f"a join on {len(op.join_keys)} keys: Spark's estimate takes the most selective key alone"
    return "the keys' distinct counts overlap less than Spark assumes (a containment assumption)"


def _filter_cause(op: Operator, cbo: bool, histograms: bool, found: Diagnosis) -> str:
    if not cbo:
        return "spark.sql.cbo.enabled is off: a filter keeps every row in Spark's estimate"
    if op.range_filter and not any(c.has_histogram for c in op.range_columns):
        columns = ", ".join(_spelled(c) for c in op.range_columns)
        if not histograms:
            found.fix("spark.conf.set('spark.sql.statistics.histogram.enabled', 'true')")
        if any(c.table in found.lab_names for c in op.range_columns):
            found.fix("lab.set('hive.stats.kll.enable', True): the lab's quantile sketches give Spark its histograms")
        _analyze_fix(op.range_columns, found, force=True)
        return f"a range filter on {columns} without a histogram (Spark assumes evenly spread values)"
    if len(op.columns) > 1:
        return "a predicate on correlated columns (Spark multiplies their selectivities as if independent)"
    return "a predicate Spark estimates with a default selectivity"


def _spelled(column: ColumnUse) -> str:
    return f"{column.table}.{column.name}" if column.table else column.name


def _analyze_fix(columns: list[ColumnUse], found: Diagnosis, force: bool = False) -> None:
    """ANALYZE of the columns' tables (a lab table read as files has its fix named with its scan, unless
    `force`: a histogram needs the columns analyzed again)."""
    by_table: dict[str, list[str]] = {}
    for column in columns:
        if column.table:
            by_table.setdefault(column.table, []).append(column.name)
    for table, names in by_table.items():
        if table in found.lab_tables and not force:
            continue
        found.fix(f"ANALYZE TABLE {_table(table)} COMPUTE STATISTICS FOR COLUMNS "
                  f"{', '.join(column_ref(*name.split('.')) for name in dict.fromkeys(names))}")


def _table(name: str) -> str:
    """A table's dotted name from a plan (`spark_catalog.db.t`) as a statement takes it, each part quoted."""
    return qualified(*name.split("."))
