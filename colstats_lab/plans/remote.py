"""A query's plan over Spark Connect, where no JVM object reaches the client: the optimized plan's operators
from the text of `explain(mode="cost")` (each line one operator, its depth by its indentation, its
`Statistics(sizeInBytes=..., rowCount=...)` the estimate; Spark prints a row count to three significant
digits and a size in binary units), and each operator's rows from the execution's metrics
(`DataFrame.executionInfo`), the physical operators paired with the logical ones of the same kind in
pre-order: joins, scans and aggregates (the final one), and filters only where both plans have as many
(a filter on partition columns alone leaves the physical plan). The server sends each metric summed over
its tasks: an operator's time and bytes come with its rows, the rows of each task do not (NO_TASK_ROWS)."""
from __future__ import annotations

import re

from .operators import LEAVES, Operator, figures_of, rows_from_inputs

NO_TASK_ROWS = ("over Spark Connect, the server sends each metric summed over its tasks: no task's own rows, so "
                "no task spread and no skew as it ran")
_STATISTICS = re.compile(r",?\s*Statistics\(sizeInBytes=([0-9.]+)\s*([KMGTPE]i)?B(?:,\s*rowCount=([0-9.E+-]+))?\)\s*$")
_UNITS = {None: 1, "Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40, "Pi": 2 ** 50, "Ei": 2 ** 60}
_RELATION = re.compile(r"^Relation\s+([^\[\s]*)\[([^\]]*)\]")
_KINDS = {"Relation": "LogicalRelation", "LocalRelation": "LocalRelation", "Range": "Range",
          "OneRowRelation": "OneRowRelation", "InMemoryRelation": "InMemoryRelation"}
# a physical operator's name in the metrics -> the logical kind it computes
_PHYSICAL = {"BroadcastHashJoin": "Join", "SortMergeJoin": "Join", "ShuffledHashJoin": "Join",
             "BroadcastNestedLoopJoin": "Join", "CartesianProduct": "Join", "Filter": "Filter",
             "HashAggregate": "Aggregate", "ObjectHashAggregate": "Aggregate", "SortAggregate": "Aggregate"}


def text_operators(text: str, columns_of: dict[str, set[str]]) -> list[Operator]:
    """The operators of the optimized plan in `explain(mode="cost")`'s text, root first; `columns_of` names
    the lab table a relation over files reads by its columns."""
    lines = text.split("== Optimized Logical Plan ==", 1)[1].split("\n== ", 1)[0].strip("\n").splitlines()
    operators: list[Operator] = []
    stack: list[Operator] = []  # the path from the root to the last operator
    for line in lines:
        start = len(line) - len(line.lstrip(" :+-"))
        body = line[start:]
        found = _STATISTICS.search(body)
        if not body or found is None:
            continue  # a continuation of the line above (a long expression)
        depth = start // 3
        while stack and stack[-1].depth >= depth:
            stack.pop()
        parent = stack[-1] if stack else None
        words = body.split()
        kind = _KINDS.get(words[0], words[0].rstrip(","))
        rows = None if found.group(3) is None else round(float(found.group(3)))
        op = Operator(len(operators), parent.id if parent else None, depth, kind, kind, rows,
                      round(float(found.group(1)) * _UNITS[found.group(2)]))
        if kind == "Join" and len(words) > 1:
            op.node = f"Join {words[1].rstrip(',')}"
        elif kind in LEAVES:
            relation = _RELATION.match(body)
            name = relation.group(1) if relation and relation.group(1) else None
            if name is None and relation:
                wanted = {re.sub(r"#\d+L?$", "", c).lower() for c in relation.group(2).split(",")}
                holding = [table for table, names in columns_of.items() if wanted <= names]
                name = holding[0] if len(holding) == 1 else None  # a partition's file holds no partition key
            op.table = name
            op.catalog_rows = rows if name and relation and relation.group(1) else None
            op.node = f"Scan {name}" if name else "Scan files"
        elif kind in ("GlobalLimit", "LocalLimit") and len(words) > 1 and words[1].rstrip(",").isdigit():
            op.limit = int(words[1].rstrip(","))
        if parent is not None:
            parent.children.append(op.id)
        operators.append(op)
        stack.append(op)
    _name_join_strategies(text, operators)
    return operators


def _name_join_strategies(text: str, operators: list[Operator]) -> None:
    """Each join's physical kind from the physical plan's text, paired in pre-order (when as many)."""
    physical = text.split("== Physical Plan ==", 1)[-1]
    kinds = re.findall(r"(BroadcastHashJoin|SortMergeJoin|ShuffledHashJoin|BroadcastNestedLoopJoin|CartesianProduct)\b",
                       physical)
    joins = [op for op in operators if op.kind == "Join"]
    if len(kinds) == len(joins):
        for op, kind in zip(joins, kinds, strict=True):
            op.node += f" ({kind})"


def count_actual_rows_remote(frame, operators: list[Operator]) -> None:
    """Runs the query once under a count of its rows (one row comes back; Spark Connect sends the metrics of a
    query's execution, not of a write's) and sets the operators' `actual_rows` from the physical operators'
    "number of output rows", paired by kind in pre-order, the count's own two aggregates left out."""
    counting = frame.groupBy().count()
    counting.collect()
    info = counting.executionInfo
    metrics = info.metrics if info is not None else None
    if metrics is None:
        return
    root, graph = metrics.extract_graph()
    physical: list = []
    stack = [root]
    while stack:  # root first, children in the order the server sent them
        node = graph[stack.pop()]
        if node.name:
            physical.append(node)
        stack.extend(reversed([c for c in node.children if c != node.id]))
    aggregates = [m for m in physical if _kind_of(m.name) == "Aggregate"][2:]  # the count's final and partial
    counted = {kind: [m for m in physical if _kind_of(m.name) == kind] for kind in ("Join", "Filter", "leaf")}
    # a final aggregate is followed, below its exchange, by its partial one: every other one in pre-order
    counted["Aggregate"] = aggregates[::2]
    logical = {kind: [op for op in operators if (op.kind in LEAVES if kind == "leaf" else op.kind == kind)]
               for kind in counted}
    for kind, ops in logical.items():
        if len(ops) != len(counted[kind]) or (kind == "Aggregate" and 2 * len(ops) != len(aggregates)):
            continue  # an operator one plan has and the other not: no pairing can be trusted
        for op, node in zip(ops, counted[kind], strict=True):
            op.actual_rows = _rows(node)
            # the server sends each metric summed over the tasks: no task's own rows
            op.run = figures_of([(m.name, m.metric_type, int(m.value)) for m in node.metrics], [])
    rows_from_inputs(operators)


def _kind_of(name: str) -> str | None:
    if name.startswith("Scan ") or name in ("LocalTableScan", "Range", "InMemoryTableScan"):
        return "leaf"
    return _PHYSICAL.get(name.split(" ")[0])


def _rows(node) -> int | None:
    for value in node.metrics:
        if value.name in ("numOutputRows", "number of output rows"):
            return int(value.value)
    return None
