"""Pruning list-bucketing directories: `x = 30` reads only `x=30/`, `x = 50` (not skewed) only the
default directory, `x IN (30, 50)` both, and a predicate that doesn't fix the skewed columns reads all.

Two sound tests, either of which prunes a directory:
- the whole condition in SQL's three-valued logic (AND, OR, NOT, `=`, `<>`, IN, IS NULL) over what a
  directory can hold: a skewed value's directory holds exactly that value, the default directory of a
  one-column skew any other value or NULL; the directory is read only when TRUE is possible;
- for several skewed columns, the top-level AND terms fixing each of them (`=`, IN): the default
  directory is skipped when every combination they allow is skewed.
Anything else keeps directories, so a pruned scan returns the same rows as a full one.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from sqlglot import exp

from ..coltypes import parse_type
from ..column_statistics.partition_values import canonical_value
from ..errors import InvalidArgument
from ..metastore import SkewedInfo, Table
from ..metastore.rows.levels import Level
from ..storage import parent, relative
from ..tables.snapshot import PartitionFiles
from .report import PruningDecision
from .statistics import ANYTHING, FALSE, NULL, TRUE, and3, conjuncts, or3

_MAX_COMBINATIONS = 10_000  # beyond this the default directory is kept rather than enumerating


def prune_list_bucketing(table: Table, parts: list[PartitionFiles], where: exp.Expression | None,
                         rows_of: Callable[[str], int], enabled: bool = True
                         ) -> tuple[list[PartitionFiles], list[PruningDecision]]:
    """The partitions' files a query with `where` must read, and a decision per list-bucketing directory
    (`rows_of` gives a file's row count); with `enabled` false (Hive's hive.optimize.listbucketing off)
    every directory is read."""
    kept_parts, decisions = [], []
    constraints = _constraints(table, where)
    for part in parts:
        spec = part.partition.list_bucketing if part.partition is not None else None
        if spec is None:
            kept_parts.append(part)
            continue
        by_directory: dict[str, list] = {}
        for data_file in part.files:
            base = next(d for d in part.dirs if data_file.path.startswith(d.rstrip("/") + "/"))
            sub = relative(parent(data_file.path), base)
            by_directory.setdefault(sub, []).append(data_file)
        values = {spec.directory_of(tuple(v)): tuple(v) for v in spec.skewedColValues}
        kept_files = []
        for sub, files in sorted(by_directory.items()):
            keep, reason = (_decide(spec, values.get(sub), sub == spec.default_directory, constraints) if enabled
                            else (True, "hive.optimize.listbucketing is off"))
            if keep and enabled and where is not None:
                domain = _domain(spec, values.get(sub), sub == spec.default_directory)
                if domain is not None and TRUE not in _outcomes(where, table, domain):
                    keep, reason = False, f"the condition cannot be true for {_describe(spec, domain)}"
            rows = sum(rows_of(f.path) for f in files)
            decisions.append(PruningDecision(Level.LIST_BUCKETING, f"{part.part_name}/{sub}", keep, reason, rows,
                                             sum(f.size for f in files)))
            if keep:
                kept_files.extend(files)
        kept_parts.append(PartitionFiles(part.partition, part.dirs, kept_files, part.deletes))
    return kept_parts, decisions


def _decide(spec: SkewedInfo, value: tuple[str, ...] | None, is_default: bool,
            constraints: dict[str, set[str]]) -> tuple[bool, str]:
    named = [c for c in spec.skewedColNames if c in constraints]
    if not named:
        return True, f"no condition fixes {', '.join(spec.skewedColNames)}"
    if value is not None:
        for column, text in zip(spec.skewedColNames, value, strict=True):
            if column in constraints and text not in constraints[column]:
                return False, f"holds only {column} = {text}, which the query excludes"
        held = ", ".join(f"{c} = {t}" for c, t in zip(spec.skewedColNames, value, strict=True))
        return True, "holds " + held + ", which matches"
    if not is_default:
        return True, "a directory the skew spec does not name"
    if len(named) < len(spec.skewedColNames):
        free = [c for c in spec.skewedColNames if c not in constraints]
        return True, f"holds the other values; {', '.join(free)} is not fixed"
    choices = [sorted(constraints[c]) for c in spec.skewedColNames]
    if _product_size(choices) > _MAX_COMBINATIONS:
        return True, "too many value combinations to rule out the other values"
    skewed = {tuple(v) for v in spec.skewedColValues}
    missing = [combo for combo in itertools.product(*choices) if combo not in skewed]
    if missing:
        return True, f"holds the values that are not skewed, e.g. {', '.join(missing[0])}"
    return False, "every value the query asks for is skewed and has its own directory"


def _product_size(choices) -> int:
    size = 1
    for choice in choices:
        size *= len(choice)
    return size


def _constraints(table: Table, where: exp.Expression | None) -> dict[str, set[str]]:
    """Column -> allowed canonical values, from AND terms `col = literal` and `col IN (literals)`."""
    out: dict[str, set[str]] = {}
    for term in conjuncts(where):
        column: exp.Column | None = None
        literals: list = []
        if isinstance(term, exp.EQ):
            left, right = term.this, term.expression
            if isinstance(right, exp.Column):
                left, right = right, left
            if isinstance(left, exp.Column):
                column, literals = left, [right]
        elif isinstance(term, exp.In) and isinstance(term.this, exp.Column) and not term.args.get("query"):
            column, literals = term.this, term.expressions
        if column is None:
            continue
        field = table.column(column.name)
        if field is None or field.name in table.partition_key_names:
            continue
        texts = [_literal_text(lit, field.type) for lit in literals]
        if any(t is None for t in texts):
            continue
        allowed = {t for t in texts if t is not None}
        out[field.name] = out[field.name] & allowed if field.name in out else allowed
    return out


def _literal_text(node: exp.Expression, type_name: str) -> str | None:
    """The canonical text of a literal compared with a column of `type_name`, or None when the
    comparison's meaning is not plain equality of that text (then nothing is pruned on it)."""
    base = parse_type(type_name).base
    if isinstance(node, exp.Cast) and isinstance(node.this, exp.Literal) and node.this.is_string:
        node = node.this  # DATE '2026-11-21', TIMESTAMP '...'
    negative = isinstance(node, exp.Neg)
    if negative:
        node = node.this
    if isinstance(node, exp.Boolean):
        return canonical_value("", type_name, "true" if node.this else "false") if base == "boolean" else None
    if not isinstance(node, exp.Literal):
        return None
    if node.is_string and base in ("tinyint", "smallint", "int", "bigint", "float", "double", "decimal", "boolean"):
        text = node.this  # Spark casts the string to the column's type
    elif node.is_string != (base in ("string", "varchar", "char", "date", "timestamp")):
        return None  # a number against a string column compares as numbers: '01' = 1
    else:
        text = node.this
    try:
        return canonical_value("", type_name, ("-" if negative else "") + text, what="value")
    except InvalidArgument:
        return None


# What a directory can hold of one skewed column: ("is", text) exactly that value, never NULL; or
# ("not in", texts) any other value, or NULL.
Domain = dict[str, tuple[str, Any]]  # column -> ("is", its value) or ("not in", the values it is not)


def _domain(spec: SkewedInfo, value: tuple[str, ...] | None, is_default: bool) -> Domain | None:
    if value is not None:
        return {c: ("is", t) for c, t in zip(spec.skewedColNames, value, strict=True)}
    if is_default and len(spec.skewedColNames) == 1:
        return {spec.skewedColNames[0]: ("not in", frozenset(v[0] for v in spec.skewedColValues))}
    return None  # the default directory of several columns: the AND terms' test covers it


def _describe(spec: SkewedInfo, domain: Domain) -> str:
    column = spec.skewedColNames[0]
    kind, held = domain[column]
    if kind == "not in":
        return f"the default directory ({column} not in {', '.join(sorted(held))}, or NULL)"
    return ", ".join(f"{c} = {domain[c][1]}" for c in spec.skewedColNames)


def _outcomes(node: exp.Expression, table: Table, domain: Domain) -> frozenset:
    """The truth values the condition may take on a directory's rows (three-valued logic)."""
    if isinstance(node, exp.Paren):
        return _outcomes(node.this, table, domain)
    if isinstance(node, (exp.And, exp.Or)):
        combine = and3 if isinstance(node, exp.And) else or3
        left, right = _outcomes(node.this, table, domain), _outcomes(node.expression, table, domain)
        return frozenset(combine(a, b) for a in left for b in right)
    if isinstance(node, exp.Not):
        return frozenset({TRUE: FALSE, FALSE: TRUE, NULL: NULL}[o] for o in _outcomes(node.this, table, domain))
    if isinstance(node, exp.Boolean):
        return frozenset({TRUE if node.this else FALSE})
    if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
        held = _held(node.this, table, domain)
        if held is None:
            return ANYTHING
        return frozenset({FALSE}) if held[0] == "is" else frozenset({TRUE, FALSE})
    if isinstance(node, (exp.EQ, exp.NEQ)):
        named, value = node.this, node.expression
        if isinstance(value, exp.Column):
            named, value = value, named
        outcome = _membership(named, [value], table, domain)
        if outcome is None or isinstance(node, exp.EQ):
            return outcome or ANYTHING
        return frozenset({TRUE: FALSE, FALSE: TRUE, NULL: NULL}[o] for o in outcome)
    if isinstance(node, exp.In) and not node.args.get("query"):
        return _membership(node.this, node.expressions, table, domain) or ANYTHING
    return ANYTHING


def _held(node: exp.Expression, table: Table, domain: Domain):
    if not isinstance(node, exp.Column):
        return None
    field = table.column(node.name)
    return domain.get(field.name) if field is not None else None


def _membership(column: exp.Expression, literals: list, table: Table, domain: Domain) -> frozenset | None:
    """The outcomes of `column IN (literals)` (or `=` one literal) on the directory's rows; None when the
    column is not one the directory fixes or a literal's meaning is not plain equality."""
    held = _held(column, table, domain)
    if held is None:
        return None
    texts = [_literal_text(lit, table.column_type(column.name)) for lit in literals]
    if any(t is None for t in texts):
        return None
    kind, value = held
    if kind == "is":
        return frozenset({TRUE if value in texts else FALSE})
    # the default directory: another value (TRUE possible unless every literal is skewed) or NULL
    return frozenset({FALSE, NULL} if set(texts) <= value else {TRUE, FALSE, NULL})
