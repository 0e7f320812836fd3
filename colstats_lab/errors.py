"""One error family: everything a user can cause is a ColstatsError naming the input that caused it.

Errors of the libraries underneath (sqlglot, Spark, pyarrow, ipywidgets) are translated where they
arise, by the helpers here, so that a caller catches one base class and a magic shows one line.
"""
from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager


class ColstatsError(Exception):
    """Base of every error colstats_lab raises for bad input or a refused request."""


class InvalidArgument(ColstatsError):
    """An argument a caller gave that the lab cannot take: a bad name, option, spec or value, named."""


# the metastore's exceptions, as Hive's Thrift API names them

class MetastoreError(ColstatsError):
    """Base of every error the metastore raises."""


class NoSuchObjectException(MetastoreError):
    """A database, table, partition or column that does not exist."""


class AlreadyExistsException(MetastoreError):
    """A database, table or partition that exists already."""


class InvalidObjectException(MetastoreError):
    """An object whose content is not valid for where it is stored."""


class InvalidInputException(MetastoreError, InvalidArgument):
    """An argument to the metastore's API that is malformed: a bad name, filter or statistics object."""


class MetaException(MetastoreError):
    """The metastore cannot do what was asked (a refused state change, a broken file)."""


class MetastoreUnavailable(MetaException):
    """The metastore's database cannot do what was asked of it now: its disk is full, it is read-only, another
    writer held it too long, its server went away. The message names the database and the cause."""


class ParseError(ColstatsError):
    """A statement or expression that does not parse: the message, and the text with a caret under
    the bad token (`.sql`, `.position`, `.line`, `.column`)."""

    def __init__(self, message: str, sql: str, position: int):
        self.message = message
        self.sql = sql
        self.position = max(0, min(position, len(sql)))
        line_start = sql.rfind("\n", 0, self.position) + 1
        line_end = sql.find("\n", self.position)
        line_end = len(sql) if line_end == -1 else line_end
        self.line = sql.count("\n", 0, self.position) + 1
        self.column = self.position - line_start + 1
        self.excerpt = sql[line_start:line_end]
        super().__init__(self.pretty())

    def pretty(self) -> str:
        caret = " " * (self.column - 1) + "^"
        return f"{self.message} (line {self.line}, column {self.column})\n  {self.excerpt}\n  {caret}"


class QueryError(ColstatsError):
    """Spark refused a query or a read of the lab's data (an unknown column, a type mismatch, a file
    that is not Parquet); `.query` is what was asked and `.error_class` Spark's condition, if any."""

    def __init__(self, message: str, query: str | None = None, error_class: str | None = None):
        self.query = query
        self.error_class = error_class
        super().__init__(message)


class ValueOutOfRange(ColstatsError):
    """A value in the data the lab cannot keep as a figure (a date or timestamp outside 0001-01-01 to 9999-12-31,
    Python's and Hive's range), named with its file and column."""


class StorageError(ColstatsError):
    """A location the lab cannot list, read or write (a missing bucket, denied credentials, an unreachable
    endpoint, a file system whose package is not installed, a file changed while it was read), named."""


class LabWarning(UserWarning):
    """Something a command did that a user should know of, though nothing failed: files left out of a table that
    Spark cannot read, empty partition folders."""


def one_line(text: str, limit: int = 300) -> str:
    """The first line of a foreign message, shortened: what a user reads, without the JVM's stack."""
    first = next((line.strip() for line in str(text).splitlines() if line.strip()), "")
    return first if len(first) <= limit else first[:limit - 1] + "…"


def did_you_mean(name: str, candidates) -> str:
    """"; did you mean x?" with the closest of `candidates` to `name` (compared without case, named as spelled),
    or "" when none is close."""
    import difflib

    spelled = {str(c).lower(): str(c) for c in candidates}
    close = difflib.get_close_matches(name.lower(), list(spelled), n=1)
    return f"; did you mean {spelled[close[0]]}?" if close else ""


def from_sqlglot(exc: Exception, text: str) -> ParseError:
    """sqlglot's ParseError or TokenError as ours, with the caret where sqlglot stopped."""
    errors = getattr(exc, "errors", None) or [{}]
    error = errors[0]
    line, col = error.get("line") or 1, error.get("col") or 1
    offset = sum(len(x) + 1 for x in text.split("\n")[:line - 1]) + max(col - 1, 0)
    description = error.get("description") or one_line(str(exc)) or "does not parse"
    missing = _MISSING.match(description)
    if missing:  # sqlglot names its own classes and fields: say what the user left out instead
        part, kind = missing.groups()
        if kind in _CLAUSES:
            description = f"expected a condition after {_CLAUSES[kind]}"
        else:
            node = _OPERATORS.get(kind, kind.lower())
            side = "after" if part == "expression" or kind in _PREFIXES else "before" if part == "this" else None
            description = (f"expected an expression {side} {node}" if side
                           else f"expected an expression here: {node} is incomplete")
    return ParseError(description, text, offset)


_MISSING = re.compile(r"Required keyword: '(\w+)' missing for <class 'sqlglot\.[\w.]*?(\w+)'>")
_PREFIXES = {"Not", "Neg", "Cast", "Paren"}  # operators whose `this` follows them
_CLAUSES = {"Where": "WHERE", "Having": "HAVING", "Qualify": "QUALIFY"}
_OPERATORS = {"Mul": "'*'", "Div": "'/'", "Add": "'+'", "Sub": "'-'", "Mod": "'%'", "EQ": "'='", "NEQ": "'<>'",
              "GT": "'>'", "GTE": "'>='", "LT": "'<'", "LTE": "'<='", "And": "AND", "Or": "OR", "Not": "NOT",
              "In": "IN", "Between": "BETWEEN", "Like": "LIKE", "Alias": "alias", "Cast": "CAST"}


# parentheses a query or condition may nest: sqlglot's parser recurses about twenty frames a level, so Python's
# limit is reached near fifty; a person writes a handful
MAX_NESTING = 32
_BALANCED_FROM = 8  # an AND or OR chain longer than this is rebuilt as a balanced tree


def parse_sql(text: str, dialect: str = "spark"):
    """`sqlglot.parse_one`, raising our ParseError (with a caret) for text that does not parse or nests deeper
    than MAX_NESTING; long AND/OR chains come back balanced (`balanced`)."""
    import sqlglot
    from sqlglot.errors import ParseError as SqlglotParseError
    from sqlglot.errors import TokenError

    check_nesting(text, dialect)
    try:
        tree = sqlglot.parse_one(text, read=dialect)
    except (SqlglotParseError, TokenError) as exc:
        raise from_sqlglot(exc, text) from None
    except RecursionError:
        raise ParseError("the query nests too deeply to read", text, 0) from None
    if tree is None:
        raise ParseError("expected a query, found nothing", text, 0)
    return balanced(tree)


def parse_condition(text: str, dialect: str = "spark"):
    """A condition's text (what follows WHERE) as sqlglot's tree, raising our ParseError with a caret."""
    import sqlglot
    from sqlglot.errors import ParseError as SqlglotParseError
    from sqlglot.errors import TokenError

    if not text.strip():
        raise ParseError("expected a condition, found nothing", text, 0)
    check_nesting(text, dialect)
    try:
        return balanced(sqlglot.condition(text, dialect=dialect))
    except (SqlglotParseError, TokenError) as exc:
        raise from_sqlglot(exc, text) from None
    except RecursionError:
        raise ParseError("the condition nests too deeply to read", text, 0) from None


def check_nesting(text: str, dialect: str = "spark") -> None:
    """Raises ParseError at the parenthesis that opens a level deeper than MAX_NESTING (strings, quoted names and
    comments are read as the dialect reads them, so a parenthesis inside them does not count)."""
    import sqlglot
    from sqlglot.errors import TokenError
    from sqlglot.tokens import TokenType

    try:
        tokens = sqlglot.tokenize(text, read=dialect)
    except TokenError as exc:
        raise from_sqlglot(exc, text) from None
    depth = 0
    for token in tokens:
        if token.token_type in (TokenType.L_PAREN, TokenType.L_BRACKET):
            depth += 1
            if depth > MAX_NESTING:
                raise ParseError(f"this nests parentheses more than {MAX_NESTING} deep: write the condition flatter",
                                 text, token.start)
        elif token.token_type in (TokenType.R_PAREN, TokenType.R_BRACKET):
            depth -= 1


def balanced(tree):
    """`tree` with every chain of more than _BALANCED_FROM ANDs (or ORs) rebuilt as a balanced tree of the same
    operands in the same order: the same condition (both are associative, in SQL's three-valued logic too), whose
    depth grows with the logarithm of its length, so no pass over it nears Python's recursion limit (a generated
    `k = 1 OR ... OR k = 1000` is a thousand levels deep as parsed)."""
    from sqlglot import exp

    roots = [node for node in tree.walk() if isinstance(node, exp.Connector)
             and type(node.parent) is not type(node)]
    for root in reversed(roots):  # inner chains first: an outer chain's operands are already balanced
        operands, stack = [], [root]
        while stack:
            node = stack.pop()
            if type(node) is type(root):
                stack.extend((node.expression, node.this))
            else:
                operands.append(node)
        if len(operands) > _BALANCED_FROM:
            rebuilt = _balanced_chain(type(root), operands)
            if root is tree:
                tree = rebuilt
            else:
                root.replace(rebuilt)
    return tree


def _balanced_chain(kind, operands: list):
    if len(operands) == 1:
        return operands[0]
    middle = len(operands) // 2
    return kind(this=_balanced_chain(kind, operands[:middle]), expression=_balanced_chain(kind, operands[middle:]))


def _spark_errors() -> tuple[type[BaseException], ...]:
    from pyspark.errors import PySparkException

    try:  # classic sessions raise Py4J's error for failures that Spark does not classify
        from py4j.protocol import Py4JJavaError
    except ImportError:  # pragma: no cover - Spark Connect only installs
        return (PySparkException,)
    return (PySparkException, Py4JJavaError)


@contextmanager
def spark_errors(what: str, query: str | None = None, aliases: dict[str, str] | None = None) -> Iterator[None]:
    """Spark's errors from the block as QueryError: `what` says what was being done, then Spark's
    condition and the first line of its message, the part of the query it points at and the query
    itself (shortened); `aliases` turns names Spark saw (temporary views) back into the user's. PySpark's
    own log of such an error (a JSON ERROR line with Java's stack, on stderr) is held back: the QueryError
    says it in one line."""
    loggers = _query_context_loggers()
    levels = [logger.level for logger in loggers]
    logged = _log_size()
    for logger in loggers:
        logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    except _spark_errors() as exc:
        unreadable = _unreadable_scheme(_message(exc))
        if unreadable:
            raise QueryError(f"{what}: Spark cannot read {unreadable}:// here: add the connector for it to the cluster "
                             f"(hadoop-aws for s3a://), or map the prefix with colstats.storage.spark_prefixes",
                             query, _condition(exc)) from None
        failed_read = _failed_read(exc)  # a file Spark could not read, however deep in its stages: named, with why
        message = f"{what}: {failed_read or _message(exc)}"
        fragment = _fragment(exc)
        if fragment:
            message += f" (at {fragment!r})"
        if query:
            message += f" in: {one_line(query, 160)}"
        if spark_log is not None and _log_size() > logged:
            message += f" (Spark's log of it: {spark_log})"
        for name, alias in (aliases or {}).items():
            message = message.replace(f"`{name}`", alias).replace(name, alias)
        raise QueryError(message, query, _condition(exc)) from None
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


spark_log: str | None = None  # the file Spark's log goes to, when the lab launched Spark's JVM (engine.py)


def _log_size() -> int:
    try:
        return os.path.getsize(spark_log) if spark_log else 0
    except OSError:
        return 0


# Hadoop's words for a file system it has no class for: a class named in the configuration but not on the
# class path (S3A without hadoop-aws), or a scheme nothing is configured for
_MISSING_FILE_SYSTEM = re.compile(r'Class org\.apache\.hadoop\.fs\.(s3a)\.S3AFileSystem not found|'
                                  r'No FileSystem for scheme:? "?([A-Za-z0-9+.-]+)')


def _unreadable_scheme(message: str) -> str | None:
    """The scheme of a location Spark has no file system for, from its message; None for other errors."""
    match = _MISSING_FILE_SYSTEM.search(message)
    return (match.group(1) or match.group(2)) if match else None


def _query_context_loggers() -> list[logging.Logger]:
    """The loggers PySpark 4 writes each captured SQL or DataFrame error to, as PySpark makes them (a plain
    logger of that name would fail on PySpark's keyword arguments)."""
    try:
        from pyspark.logger import PySparkLogger
    except ImportError:  # an older PySpark logs no such lines
        return []
    return [PySparkLogger.getLogger(name) for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger")]


def _fragment(exc: BaseException) -> str | None:
    try:
        contexts = exc.getQueryContext() if hasattr(exc, "getQueryContext") else []
        return next((c.fragment() for c in contexts if c.fragment()), None)
    except Exception:  # noqa: BLE001 - no context to give
        return None


def _message(exc: BaseException) -> str:
    java = getattr(exc, "java_exception", None)  # Py4J's error: its own first line names only the call
    if java is not None:
        try:
            return one_line(java.getMessage())
        except Exception:  # noqa: BLE001 - the JVM side is gone: say what Python knows
            return one_line(str(exc))
    getter = getattr(exc, "getMessage", None)
    return one_line(getter() if getter else str(exc))


def _failed_read(exc: BaseException) -> str | None:
    """Spark's FAILED_READ_FILE message in a classic session's error and its innermost cause (the file is not
    Parquet, cut short, changed), however many stages wrap it; None for other errors and over Spark Connect."""
    cause = getattr(exc, "_origin", None) or getattr(exc, "java_exception", None)
    failed, innermost = None, None
    try:
        while cause is not None:
            text = cause.getMessage()
            if text and failed is None and "[FAILED_READ_FILE" in text:
                failed = one_line(text[text.index("[FAILED_READ_FILE"):])
            innermost = text or innermost
            cause = cause.getCause()
    except Exception:  # noqa: BLE001 - the JVM side is gone: nothing more to say
        return None
    if failed is None:
        return None
    return failed + (f" Cause: {one_line(innermost, 200)}" if innermost and innermost not in failed else "")


def _condition(exc: BaseException) -> str | None:
    get = getattr(exc, "getCondition", None) or getattr(exc, "getErrorClass", None)
    try:
        return get() if get else None
    except Exception:  # noqa: BLE001 - a classic error whose JVM side is gone has no condition to give
        return None
