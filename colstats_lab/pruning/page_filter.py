"""What a page may ask of a table: a filter typed into a dashboard's box, parsed and allowlisted before anything
reads it. A page is a reader, not a SQL console: whoever can load it may type anything, and Spark SQL can call
Java (`java_method`, `reflect`), read files and environment variables. So only column references of the table,
literals, comparisons, `IN` and `BETWEEN` of literals, `IS [NOT] NULL`, `LIKE`, `AND`/`OR`/`NOT`, arithmetic,
casts to plain types and a short list of pure functions pass; anything else is refused in one line with a caret
under it, before any Spark job. The query is then built from the checked tree by sqlglot, never pasted."""
from __future__ import annotations

from sqlglot import exp

from ..errors import ParseError, parse_condition
from ..metastore import Table
from .references import qualifiers_of, referenced_column

MAX_FILTER_LENGTH = 4_000  # characters a page's filter may hold

_STRUCTURE = (exp.And, exp.Or, exp.Not, exp.Paren, exp.EQ, exp.NEQ, exp.NullSafeEQ, exp.GT, exp.GTE, exp.LT,
              exp.LTE, exp.In, exp.Between, exp.Is, exp.Like, exp.ILike, exp.Null, exp.Boolean, exp.Literal, exp.Neg,
              exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod, exp.Cast, exp.TryCast, exp.DataType, exp.Identifier,
              exp.Column, exp.Dot, exp.Tuple)
# pure functions of their arguments: no I/O, no JVM reflection, no state, cheap per row
_FUNCTIONS = (exp.Lower, exp.Upper, exp.Length, exp.Abs, exp.Coalesce, exp.Trim, exp.Substring, exp.Year,
              exp.Month, exp.Day, exp.Round, exp.Floor, exp.Ceil, exp.IsNan, exp.Concat)
_TYPES = {exp.DataType.Type.BOOLEAN, exp.DataType.Type.TINYINT, exp.DataType.Type.SMALLINT, exp.DataType.Type.INT,
          exp.DataType.Type.BIGINT, exp.DataType.Type.FLOAT, exp.DataType.Type.DOUBLE, exp.DataType.Type.DECIMAL,
          exp.DataType.Type.TEXT, exp.DataType.Type.VARCHAR, exp.DataType.Type.CHAR, exp.DataType.Type.DATE,
          exp.DataType.Type.TIMESTAMP, exp.DataType.Type.DATETIME}
ALLOWED_FUNCTIONS = sorted(f.key.upper() for f in _FUNCTIONS)


def page_filter(text: str, table: Table) -> exp.Expression | None:
    """The checked condition of `text` over `table` (None for an empty box); raises ParseError with a caret under
    the first part that is not allowed, or names a column the table does not have."""
    if not isinstance(text, str):
        raise ParseError(f"a filter is text, not {type(text).__name__}", "", 0)
    if len(text) > MAX_FILTER_LENGTH:
        raise ParseError(f"a filter holds at most {MAX_FILTER_LENGTH:,} characters; this one {len(text):,}",
                         text, MAX_FILTER_LENGTH)
    if "\x00" in text:
        raise ParseError("a filter holds no NUL character", text, text.index("\x00"))
    if not text.strip():
        return None
    condition = parse_condition(text)
    qualifiers = qualifiers_of(table)
    for node in condition.walk():
        if isinstance(node, _FUNCTIONS):
            continue
        if not isinstance(node, _STRUCTURE):
            raise ParseError(f"{_shown(node)} is not allowed in a page's filter: it takes the table's columns, "
                             f"literals, comparisons, IN, BETWEEN, IS NULL, LIKE, AND/OR/NOT and "
                             f"{', '.join(ALLOWED_FUNCTIONS)}", text, _position(node, text))
        if isinstance(node, exp.DataType) and node.this not in _TYPES:
            raise ParseError(f"a page's filter casts to plain types only, not {node.sql(dialect='spark')}", text,
                             _position(node, text))
        if isinstance(node, exp.In) and (node.args.get("query") or node.args.get("unnest")):
            raise ParseError("IN takes a list of values in a page's filter, not a query", text, _position(node, text))
        if isinstance(node, (exp.Column, exp.Dot)) and not isinstance(node.parent, exp.Dot):
            if isinstance(node, exp.Column) and node.args.get("catalog"):
                raise ParseError(f"{node.sql(dialect='spark')} names another catalog's table", text,
                                 _position(node, text))
            if referenced_column(table, node, qualifiers) is None:
                raise ParseError(str(table.no_such_column(node.sql(dialect="spark"))), text, _position(node, text))
    for node in condition.walk():  # what a page wrote as comments stays on the page
        node.comments = None
    return condition


def count_query(table: Table, condition: exp.Expression | None) -> str:
    """`SELECT count(*) FROM `db`.`t` [WHERE condition]`, built by sqlglot from the checked tree."""
    query = exp.select(exp.Count(this=exp.Star())).from_(
        exp.Table(this=exp.to_identifier(table.tableName, quoted=True),
                  db=exp.to_identifier(table.dbName, quoted=True)))
    if condition is not None:
        query = query.where(condition, copy=True)
    return query.sql(dialect="spark")


def _shown(node: exp.Expression) -> str:
    if isinstance(node, (exp.Anonymous, exp.Func)):
        name = node.name if isinstance(node, exp.Anonymous) else node.key
        return f"function {name.upper()}"
    if isinstance(node, (exp.Subquery, exp.Select, exp.Query)):
        return "a query"
    return node.key.upper()


def _position(node: exp.Expression, text: str) -> int:
    """Where `node` starts in `text`: its own position where sqlglot kept one, else its first descendant's."""
    for candidate in node.walk():
        start = (candidate.meta or {}).get("start") if isinstance(candidate.meta, dict) else None
        if isinstance(start, int):
            return start
    return 0
