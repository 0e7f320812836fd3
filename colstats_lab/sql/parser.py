"""A recursive-descent parser for the lab's statements; errors point at the bad token."""
from __future__ import annotations

from dataclasses import replace

from ..coltypes import UnsupportedTypeError, parse_type
from ..column_statistics.estimators import METADATA_TIER, Tier
from ..column_statistics.model import FieldSchema, leaf_name
from ..column_statistics.names import object_name_problem
from ..errors import parse_sql
from ..quoting import identifier, string_literal
from . import statements as st
from .lexer import ParseError, Token, TokenKind, quoted, tokenize

_QUERY_STARTS = ("SELECT", "WITH", "VALUES")


def parse_table_name(name: str) -> st.TableName:
    """`t`, `db.t` or `catalog.db.t` as a statement names a table, each part a name whatever it holds (a table
    handle's name: the parser's rules for names, no statement around it)."""
    text = quoted(name)
    tokens = tokenize(text)
    parser = _Parser(text, tokens)
    table = parser.table_name()
    if parser.tok.kind is not TokenKind.END:
        raise parser.error(f"unexpected {parser.tok.describe()}")
    return replace(table, catalog_position=-1)  # no statement's text to point into: an unknown catalog is named


def column_key(path: str) -> str:
    """A column, or a struct's leaf by its dotted path, as the metastore names it (the parser's column_path)."""
    parts = tuple(part.lower() for part in path.split("."))
    return parts[0] if len(parts) == 1 else leaf_name(parts)


def parse(sql: str) -> list[st.Statement]:
    """Every `;`-separated statement of the text, in order; raises ParseError."""
    tokens = tokenize(sql)
    out: list[st.Statement] = []
    start = 0
    for i, token in enumerate(tokens):
        if token.is_symbol(";") or token.kind is TokenKind.END:
            if i > start:
                out.append(_Parser(sql, tokens[start:i] + [Token(TokenKind.END, "", token.start, token.start)]).statement())
            start = i + 1
    if not out:
        raise ParseError("no statement to run", sql, 0)
    return out


def parse_one(sql: str) -> st.Statement:
    statements = parse(sql)
    if len(statements) != 1:
        raise ParseError(f"expected one statement, found {len(statements)}", sql, 0)
    return statements[0]


def parse_partition_spec(text: str, allow_unvalued: bool = True) -> list[st.PartitionSpecItem]:
    """A partition spec on its own, as a command line or a page takes it (`ds='2026-11-21', hr=3`, or `ds`),
    with or without its parentheses; raises ParseError with the caret in `text`. Only keys and literals pass:
    anything after the spec is an error, never more of a statement."""
    stripped = text.strip()
    wrapped = stripped.startswith("(")
    sql = stripped if wrapped else f"({stripped})"
    shift = len(text) - len(text.lstrip()) - (0 if wrapped else 1)
    try:
        parser = _Parser(sql, tokenize(sql))
        items = parser.partition_spec(allow_unvalued)
        if parser.tok.kind is not TokenKind.END:
            raise parser.error(f"unexpected {parser.tok.describe()} after the partition spec")
    except ParseError as exc:
        raise ParseError(exc.message, text, exc.position + shift) from None
    return [st.PartitionSpecItem(i.key, i.value, i.position + shift, i.is_null) for i in items]


def partition_clause(items: list[st.PartitionSpecItem]) -> str:
    """` PARTITION (`ds`='2026-11-21', `hr`)` of parsed items, each key and value quoted (quoting.py)."""
    return " PARTITION (" + ", ".join(
        identifier(i.key) if i.value is None and not i.is_null else
        f"{identifier(i.key)}={'NULL' if i.is_null else string_literal(i.value or '')}" for i in items) + ")"


SPARK_CATALOG = "spark_catalog"


class _Parser:
    def __init__(self, sql: str, tokens: list[Token]):
        self.sql = sql
        self.tokens = tokens
        self.i = 0

    # ---- helpers ------------------------------------------------------------------------

    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def error(self, message: str, token: Token | None = None) -> ParseError:
        token = token or self.tok
        return ParseError(message, self.sql, token.start)

    def advance(self) -> Token:
        token = self.tok
        if token.kind is not TokenKind.END:
            self.i += 1
        return token

    def accept_word(self, *words: str) -> Token | None:
        if self.tok.is_word(*words):
            return self.advance()
        return None

    def expect_word(self, *words: str) -> Token:
        if not self.tok.is_word(*words):
            raise self.error(f"expected {' or '.join(words)}, found {self.tok.describe()}")
        return self.advance()

    def accept_symbol(self, symbol: str) -> Token | None:
        if self.tok.is_symbol(symbol):
            return self.advance()
        return None

    def expect_symbol(self, symbol: str) -> Token:
        if not self.tok.is_symbol(symbol):
            raise self.error(f"expected '{symbol}', found {self.tok.describe()}")
        return self.advance()

    def identifier(self, what: str = "a name") -> Token:
        if self.tok.kind not in (TokenKind.WORD, TokenKind.QUOTED):
            raise self.error(f"expected {what}, found {self.tok.describe()}")
        return self.advance()

    def name(self, what: str = "a name") -> str:
        return self.identifier(what).text.lower()

    def object_name(self, what: str = "a table name") -> str:
        """A database's or table's name: never with a dot, even quoted (Hive 3 refuses them too)."""
        token = self.tok
        name = self.name(what)
        if "." in name:
            raise self.error(f"{token.text} may not contain a dot (.): it separates database and table", token)
        return name

    def check_new_name(self, token: Token, what: str) -> None:
        """A name a statement creates follows Hive's rule (names.object_name_problem), said at its token."""
        problem = object_name_problem(token.text, what)
        if problem:
            raise self.error(problem, token)

    def table_name(self) -> st.TableName:
        """t, db.t, or catalog.db.t: a table of Spark's session catalog (spark_catalog) or of a catalog the
        lab attached (which the statement's run checks)."""
        first_token = self.tok
        first = self.object_name()
        if not self.accept_symbol("."):
            return st.TableName(None, first)
        second = self.object_name()
        if not self.accept_symbol("."):
            return st.TableName(first, second)
        return st.TableName(second, self.object_name(), first, first_token.start - self.tokens[0].start)

    def if_not_exists(self) -> bool:
        if self.accept_word("IF"):
            self.expect_word("NOT")
            self.expect_word("EXISTS")
            return True
        return False

    def if_exists(self) -> bool:
        if self.accept_word("IF"):
            self.expect_word("EXISTS")
            return True
        return False

    def end(self, stmt: st.Statement) -> st.Statement:
        if self.tok.kind is not TokenKind.END:
            raise self.error(f"unexpected {self.tok.describe()}")
        stmt.sql = self.sql[self.tokens[0].start:self.tokens[-1].start].strip()
        return stmt

    # ---- statements ---------------------------------------------------------------------

    def statement(self) -> st.Statement:
        tok = self.tok
        if tok.is_word(*_QUERY_STARTS) or tok.is_symbol("("):
            return self.end_query()
        if self.accept_word("ANALYZE"):
            return self.end(self.analyze())
        if self.accept_word("CREATE"):
            return self.end(self.create())
        if self.accept_word("DROP"):
            return self.end(self.drop())
        if self.accept_word("ALTER"):
            return self.end(self.alter())
        if self.accept_word("DESCRIBE", "DESC"):
            return self.end(self.describe())
        if self.accept_word("SHOW"):
            return self.end(self.show())
        if self.accept_word("MSCK"):
            return self.end(self.msck())
        if self.accept_word("USE"):
            return self.end(st.UseDatabase(name=self.object_name("a database name")))
        if self.accept_word("SET"):
            return self.end(self.set_option())
        if self.accept_word("RESET"):
            return self.end(self.reset_option())
        raise self.error(f"unknown statement {tok.describe()}: expected ANALYZE, CREATE, DROP, ALTER, "
                         "DESCRIBE, SHOW, USE, SET, RESET, MSCK or a SELECT query")

    def end_query(self) -> st.Statement:
        start = self.tokens[0].start
        raw = self.sql[start:self.tokens[-1].start]
        text = raw.strip()
        try:  # a query that does not parse fails with the rest, before any statement runs
            tree = parse_sql(text)
        except ParseError as exc:  # the caret in the whole text, not in this statement alone
            lead = len(raw) - len(raw.lstrip())
            raise ParseError(exc.message, self.sql, start + lead + exc.position) from None
        return st.Query(sql=text, text=text, tree=tree)

    def analyze(self) -> st.Statement:
        if self.accept_word("TABLES"):
            return self.analyze_tables()
        self.expect_word("TABLE", "TABLES")
        table = self.table_name()
        if self.tok.is_word("COLUMNS", "REFRESH"):
            return self.refresh_metadata(table)
        if self.accept_word("DROP"):  # Drill: DROP [METADATA | STATISTICS] [IF EXISTS], the same command
            self.expect_word("METADATA", "STATISTICS")
            return st.DropMetadata(table=table, if_exists=self.if_exists())
        stmt = st.Analyze(table=table)
        if self.accept_word("PARTITION"):
            stmt.partition = self.partition_spec(allow_unvalued=True)
        self.expect_word("COMPUTE")
        self.expect_word("STATISTICS")
        if self.accept_word("NOSCAN"):
            stmt.mode = st.AnalyzeMode.NOSCAN
            if self.tok.is_word("SAMPLE"):
                raise self.error("NOSCAN reads no row: SAMPLE applies to column statistics "
                                 "(FOR COLUMNS ... SAMPLE n PERCENT)")
        elif self.accept_word("FOR"):
            stmt.mode = st.AnalyzeMode.COLUMNS
            if self.accept_word("ALL"):
                self.expect_word("COLUMNS")
            else:
                self.expect_word("COLUMNS")
                if not self.at_tier_clause() and self.tok.kind is not TokenKind.END:
                    stmt.columns = self.column_list()
            if self.at_tier_clause() and self.accept_word("NOSCAN"):
                stmt.tier = METADATA_TIER
                if self.tok.is_word("SAMPLE"):
                    raise self.error("FOR COLUMNS ... NOSCAN reads no value, so it takes no SAMPLE: "
                                     "give one or the other")
            elif self.tok.is_word("SAMPLE"):
                stmt.sample_position = self.tok.start
                stmt.tier = Tier.of_percent(self.sample_clause())
        elif self.tok.is_word("SAMPLE"):
            raise self.error("SAMPLE applies to column statistics: COMPUTE STATISTICS FOR COLUMNS ... "
                             "SAMPLE n PERCENT")
        problem = stmt.problem()  # the grammar allows none; the rule statements built in code are held to
        if problem:
            raise self.error(problem)
        return stmt

    def at_tier_clause(self) -> bool:
        """At `NOSCAN` ending the statement or `SAMPLE` before a number (a column may be named either)."""
        following = self.tokens[min(self.i + 1, len(self.tokens) - 1)]
        return ((self.tok.is_word("NOSCAN") and (following.kind is TokenKind.END or following.is_word("SAMPLE")))
                or (self.tok.is_word("SAMPLE") and following.kind is TokenKind.NUMBER))

    def sample_clause(self) -> float:
        """`SAMPLE n PERCENT`: the percentage, above 0 and at most 100."""
        self.expect_word("SAMPLE")
        number = self.tok
        if number.kind is not TokenKind.NUMBER:
            raise self.error(f"expected a percentage after SAMPLE, found {number.describe()}")
        self.advance()
        percent = float(number.text)
        if not 0 < percent <= 100:
            raise self.error(f"SAMPLE takes a percentage above 0 and at most 100, found {number.text}", number)
        self.expect_word("PERCENT")
        return percent

    def msck(self) -> st.RepairTable:
        self.accept_word("REPAIR")
        self.expect_word("TABLE")
        stmt = st.RepairTable(table=self.table_name())
        mode = self.accept_word("ADD", "DROP", "SYNC")
        if mode:
            stmt.mode = mode.text.upper()
            self.expect_word("PARTITIONS")
        return stmt

    def analyze_tables(self) -> st.AnalyzeTables:
        stmt = st.AnalyzeTables()
        if self.accept_word("FROM", "IN"):
            stmt.db = self.object_name("a database name")
        self.expect_word("COMPUTE")
        self.expect_word("STATISTICS")
        if self.accept_word("NOSCAN"):
            stmt.mode = st.AnalyzeMode.NOSCAN
        elif self.accept_word("FOR"):
            if not self.tok.is_word("ALL"):
                raise self.error(f"ANALYZE TABLES takes FOR ALL COLUMNS (each table has its own columns), "
                                 f"found {self.tok.describe()}")
            self.advance()
            self.expect_word("COLUMNS")
            stmt.mode = st.AnalyzeMode.COLUMNS
        return stmt

    def refresh_metadata(self, table: st.TableName) -> st.RefreshMetadata:
        """Drill's form; the level is a quoted string or a word, `ALL` allowed."""
        stmt = st.RefreshMetadata(table=table)
        if self.accept_word("COLUMNS"):
            if self.accept_word("NONE"):
                stmt.columns = []
            else:
                self.expect_symbol("(")
                stmt.columns = self.column_list()
                self.expect_symbol(")")
        self.expect_word("REFRESH")
        self.expect_word("METADATA")
        if not self.tok.is_word("COMPUTE", "ESTIMATE") and self.tok.kind is not TokenKind.END:
            level = self.tok
            if level.kind not in (TokenKind.STRING, TokenKind.WORD):
                raise self.error(f"expected a metadata level ('TABLE', 'SEGMENT', 'PARTITION', 'FILE', "
                                 f"'ROW_GROUP' or 'ALL'), found {level.describe()}")
            self.advance()
            if level.text.upper() not in ("TABLE", "SEGMENT", "PARTITION", "FILE", "ROW_GROUP", "ALL"):
                raise self.error(f"unknown metadata level {level.text!r}: expected TABLE, SEGMENT, PARTITION, "
                                 "FILE, ROW_GROUP or ALL", level)
            self.expect_word("LEVEL")
            stmt.level = (level.text.upper(), level.start)
        mode = self.accept_word("COMPUTE", "ESTIMATE")
        if mode:
            stmt.statistics_mode = mode.text.upper()
            self.expect_word("STATISTICS")
            if self.accept_symbol("("):
                stmt.statistics_columns = self.column_list()
                self.expect_symbol(")")
            if self.tok.is_word("SAMPLE"):
                stmt.sample_position = self.tok.start
                stmt.sample_percent = self.sample_clause()
        elif self.tok.is_word("SAMPLE"):
            raise self.error("SAMPLE belongs to a COMPUTE or ESTIMATE STATISTICS clause")
        return stmt

    def column_list(self) -> list[tuple[str, int]]:
        columns = []
        while True:
            columns.append(self.column_path())
            if not self.accept_symbol(","):
                return columns

    def column_path(self) -> tuple[str, int]:
        """A column, or a struct's leaf by its path (`payload.user.id`, a part holding a dot in backticks), as
        the metastore names it, and where it starts."""
        start = self.identifier("a column name")
        parts = [start.text.lower()]
        while self.accept_symbol("."):
            parts.append(self.identifier("a struct field name").text.lower())
        return (parts[0] if len(parts) == 1 else leaf_name(tuple(parts))), start.start

    def partition_spec(self, allow_unvalued: bool) -> list[st.PartitionSpecItem]:
        self.expect_symbol("(")
        items = []
        while True:
            key = self.identifier("a partition key")
            if self.accept_symbol("="):
                value, is_null = self.literal()
                items.append(st.PartitionSpecItem(key.text.lower(), value, key.start, is_null))
            elif allow_unvalued:
                items.append(st.PartitionSpecItem(key.text.lower(), None, key.start))
            else:
                raise self.error(f"expected '=' and a value for partition key {key.text}")
            if not self.accept_symbol(","):
                break
        self.expect_symbol(")")
        seen = set()
        for item in items:
            if item.key in seen:
                raise ParseError(f"partition key {item.key} is given twice", self.sql, item.position)
            seen.add(item.key)
        return items

    def literal(self) -> tuple[str | None, bool]:
        """A partition value: string, number (with sign), true/false, or NULL."""
        tok = self.tok
        if tok.kind is TokenKind.STRING:
            self.advance()
            return tok.text, False
        sign = ""
        if tok.is_symbol("-", "+"):
            sign = "-" if self.advance().text == "-" else ""
            tok = self.tok
            if tok.kind is not TokenKind.NUMBER:
                raise self.error(f"expected a number after the sign, found {tok.describe()}")
        if tok.kind is TokenKind.NUMBER:
            self.advance()
            return sign + tok.text, False
        if tok.is_word("TRUE", "FALSE"):
            self.advance()
            return tok.text.lower(), False
        if tok.is_word("NULL"):
            self.advance()
            return None, True
        if tok.is_word("DATE", "TIMESTAMP", "TIMESTAMP_NTZ") and self.tokens[self.i + 1].kind is TokenKind.STRING:
            self.advance()
            return self.advance().text, False
        if tok.is_word("CAST") and self.tokens[self.i + 1].is_symbol("("):
            # CAST('NaN' AS DOUBLE): how quoting.literal writes what has no literal of its own; the value is
            # checked against the key's or column's type where it is used, as any other literal's text
            self.advance()
            self.advance()
            value = self.literal()
            self.expect_word("AS")
            self.type_text()
            self.expect_symbol(")")
            return value
        raise self.error(f"expected a value (a quoted string or a number), found {tok.describe()}")

    def create(self) -> st.Statement:
        if self.accept_word("DATABASE", "SCHEMA"):
            database = st.CreateDatabase(if_not_exists=self.if_not_exists())
            name_token = self.tok
            database.name = self.object_name("a database name")
            self.check_new_name(name_token, "database")
            if self.accept_word("COMMENT"):
                database.comment = self.string()
            return database
        external = self.accept_word("EXTERNAL") is not None
        self.expect_word("TABLE")
        stmt = st.CreateTable(if_not_exists=self.if_not_exists(), external=external)
        first = self.i
        stmt.table = self.table_name()
        for token in self.tokens[first:self.i]:
            if not token.is_symbol("."):
                self.check_new_name(token, "table" if token is self.tokens[self.i - 1] else "database")
        # an external table's columns may be left to its files
        stmt.columns = self.column_defs() if not external or self.tok.is_symbol("(") else []
        formats = ("parquet", "delta", "iceberg") if external else ("parquet",)
        while self.tok.kind is not TokenKind.END:
            if self.accept_word("COMMENT"):
                stmt.comment = self.string()
            elif self.accept_word("PARTITIONED"):
                self.expect_word("BY")
                stmt.partition_keys = self.column_defs()
            elif self.accept_word("SKEWED"):
                if external:
                    raise self.error("SKEWED BY lays out a managed table's files: an external table's are "
                                     "another job's", self.tokens[self.i - 1])
                stmt.skew = self.skew_spec()
            elif self.accept_word("STORED"):
                self.expect_word("AS")
                fmt = self.identifier("a file format")
                if fmt.text.lower() not in formats:
                    raise self.error(f"STORED AS takes {' or '.join(f.upper() for f in formats)}"
                                     f"{'' if external else ' for a managed table'}, not {fmt.text}", fmt)
                stmt.stored_as = fmt.text.lower()
            elif self.accept_word("LOCATION"):
                if not external:
                    raise self.error("LOCATION is for an EXTERNAL table: the lab places a managed table's files",
                                     self.tokens[self.i - 1])
                stmt.location = self.string()
            else:
                raise self.error(f"unexpected {self.tok.describe()}: expected COMMENT, PARTITIONED BY, "
                                 + ("STORED AS or LOCATION" if external else "SKEWED BY or STORED AS"))
        if external and stmt.location is None:
            raise self.error("an EXTERNAL table needs LOCATION '...': where its files are")
        return stmt

    def skew_spec(self) -> st.SkewSpec:
        """After SKEWED: `BY (cols) ON (values) [STORED AS DIRECTORIES]`."""
        self.expect_word("BY")
        self.expect_symbol("(")
        columns = [(self.identifier("a skewed column").text.lower(), self.tokens[self.i - 1].start)]
        while self.accept_symbol(","):
            columns.append((self.identifier("a skewed column").text.lower(), self.tokens[self.i - 1].start))
        self.expect_symbol(")")
        self.expect_word("ON")
        self.expect_symbol("(")
        values, positions = [], []
        while True:
            positions.append(self.tok.start)
            values.append(self.skewed_value(len(columns)))
            if not self.accept_symbol(","):
                break
        self.expect_symbol(")")
        directories = False
        if self.tok.is_word("STORED") and self.tokens[self.i + 1].is_word("AS") \
                and self.tokens[self.i + 2].is_word("DIRECTORIES"):
            self.i += 3
            directories = True
        return st.SkewSpec(tuple(columns), tuple(values), tuple(positions), directories)

    def skewed_value(self, arity: int) -> tuple[str, ...]:
        """One skewed value: a literal for one column, `(v1, v2)` for several."""
        start = self.tok
        if self.accept_symbol("("):
            items = [self.skewed_literal()]
            while self.accept_symbol(","):
                items.append(self.skewed_literal())
            self.expect_symbol(")")
        else:
            items = [self.skewed_literal()]
        if len(items) != arity:
            raise self.error(f"a skewed value needs {arity} element{'s' if arity != 1 else ''} "
                             f"(one per skewed column), this one has {len(items)}", start)
        return tuple(items)

    def skewed_literal(self) -> str:
        tok = self.tok
        value, is_null = self.literal()
        if is_null or value is None:
            raise self.error("NULL cannot be a skewed value", tok)
        return value

    def string(self) -> str:
        if self.tok.kind is not TokenKind.STRING:
            raise self.error(f"expected a quoted string, found {self.tok.describe()}")
        return self.advance().text

    def column_defs(self) -> list[FieldSchema]:
        self.expect_symbol("(")
        columns = []
        while True:
            name = self.identifier("a column name")
            type_start = self.tok
            type_text = self.type_text()
            try:
                col_type = parse_type(type_text)
            except UnsupportedTypeError as exc:
                raise self.error(str(exc), type_start) from None
            comment = self.string() if self.accept_word("COMMENT") else None
            columns.append(FieldSchema(name.text.lower(), col_type.name, comment))
            if not self.accept_symbol(","):
                break
        self.expect_symbol(")")
        return columns

    def type_text(self) -> str:
        """The raw text of a type, including `(p,s)` and nested `<...>`."""
        start = self.identifier("a column type")
        depth = 0
        end = start.end
        if self.tok.is_symbol("("):
            while not self.tok.is_symbol(")"):
                if self.tok.kind is TokenKind.END:
                    raise self.error("unclosed '(' in the column type")
                self.advance()
            end = self.advance().end
        elif self.tok.is_symbol("<"):
            while True:
                tok = self.advance()
                if tok.kind is TokenKind.END:
                    raise self.error("unclosed '<' in the column type", tok)
                depth += tok.text.count("<") if tok.kind is TokenKind.SYMBOL else 0
                depth -= tok.text.count(">") if tok.kind is TokenKind.SYMBOL else 0
                end = tok.end
                if depth == 0:
                    break
        return self.sql[start.start:end]

    def drop(self) -> st.Statement:
        if self.accept_word("DATABASE", "SCHEMA"):
            database = st.DropDatabase(if_exists=self.if_exists())
            database.name = self.object_name("a database name")
            if self.accept_word("CASCADE"):
                database.cascade = True
            else:
                self.accept_word("RESTRICT")
            return database
        self.expect_word("TABLE")
        stmt = st.DropTable(if_exists=self.if_exists())
        stmt.table = self.table_name()
        self.accept_word("PURGE")
        return stmt

    def alter(self) -> st.Statement:
        self.expect_word("TABLE")
        table = self.table_name()
        if self.accept_word("ADD"):
            added = st.AddPartitions(table=table, if_not_exists=self.if_not_exists())
            added.specs.append(self.partition_clause())
            while self.tok.is_word("PARTITION"):
                added.specs.append(self.partition_clause())
            return added
        if self.accept_word("DROP"):
            dropped = st.DropPartitions(table=table, if_exists=self.if_exists())
            dropped.specs.append(self.partition_clause())
            while self.accept_symbol(","):
                dropped.specs.append(self.partition_clause())
            self.accept_word("PURGE")
            return dropped
        if self.tok.is_word("PARTITION"):
            partition = self.partition_clause()
            self.expect_word("CONCATENATE")
            return st.Concatenate(table=table, partition=partition)
        if self.accept_word("CONCATENATE"):
            return st.Concatenate(table=table)
        if self.accept_word("SKEWED"):
            return st.AlterSkewed(table=table, skew=self.skew_spec())
        if self.accept_word("NOT"):
            if self.accept_word("SKEWED"):
                return st.AlterSkewed(table=table, not_skewed=True)
            self.expect_word("STORED")
            self.expect_word("AS")
            self.expect_word("DIRECTORIES")
            return st.AlterSkewed(table=table, not_stored_as_directories=True)
        if self.accept_word("UNSET"):
            self.expect_word("TBLPROPERTIES")
            unset = st.UnsetTableProperties(table=table, if_exists=self.if_exists())
            self.expect_symbol("(")
            while True:
                unset.keys.append((self.string(), self.tok.start))
                if not self.accept_symbol(","):
                    break
            self.expect_symbol(")")
            return unset
        if self.accept_word("SET"):
            if self.accept_word("TBLPROPERTIES"):
                props = st.SetTableProperties(table=table)
                self.expect_symbol("(")
                while True:
                    start = self.tok.start
                    key = self.string()
                    self.expect_symbol("=")
                    props.properties.append((key, self.string(), start))
                    if not self.accept_symbol(","):
                        break
                self.expect_symbol(")")
                return props
            self.expect_word("SKEWED")
            self.expect_word("LOCATION")
            self.expect_symbol("(")
            located = st.SetSkewedLocation(table=table)
            while True:
                start = self.tok.start
                value = self.skewed_value(self.peek_arity())
                self.expect_symbol("=")
                located.locations.append((value, self.string(), start))
                if not self.accept_symbol(","):
                    break
            self.expect_symbol(")")
            return located
        raise self.error(f"expected ADD PARTITION, DROP PARTITION, [PARTITION (..)] CONCATENATE, SKEWED BY, "
                         f"NOT SKEWED, NOT STORED AS DIRECTORIES, SET SKEWED LOCATION, SET TBLPROPERTIES or "
                         f"UNSET TBLPROPERTIES, found {self.tok.describe()}")

    def peek_arity(self) -> int:
        """How many elements the skewed value at the cursor has: 1, or the items of `( ... )`."""
        if not self.tok.is_symbol("("):
            return 1
        depth, count, j = 0, 1, self.i
        while self.tokens[j].kind is not TokenKind.END:
            tok = self.tokens[j]
            if tok.is_symbol("("):
                depth += 1
            elif tok.is_symbol(")"):
                depth -= 1
                if depth == 0:
                    return count
            elif tok.is_symbol(",") and depth == 1:
                count += 1
            j += 1
        return count

    def partition_clause(self) -> list[st.PartitionSpecItem]:
        self.expect_word("PARTITION")
        return self.partition_spec(allow_unvalued=False)

    def describe(self) -> st.Describe:
        stmt = st.Describe()
        if self.accept_word("FORMATTED", "EXTENDED"):
            stmt.formatted = True
        self.accept_word("TABLE")
        stmt.table = self.table_name()
        if self.accept_word("PARTITION"):
            stmt.partition = self.partition_spec(allow_unvalued=False)
        if self.tok.kind is not TokenKind.END:
            stmt.column = self.column_path()
        return stmt

    def show(self) -> st.Statement:
        if self.accept_word("DATABASES", "SCHEMAS"):
            return st.ShowDatabases()
        if self.accept_word("TABLES"):
            listing = st.ShowTables()
            if self.accept_word("IN", "FROM"):
                listing.db = self.object_name("a database name")
                if self.accept_symbol("."):  # catalog.db: an attached catalog's database
                    listing.catalog, listing.db = listing.db, self.object_name("a database name")
            return listing
        if self.accept_word("PARTITIONS"):
            stmt = st.ShowPartitions(table=self.table_name())
            if self.accept_word("PARTITION"):
                stmt.partition = self.partition_spec(allow_unvalued=False)
            return stmt
        if self.accept_word("TBLPROPERTIES"):
            shown = st.ShowTableProperties(table=self.table_name())
            if self.accept_symbol("("):
                shown.key = self.string()
                self.expect_symbol(")")
            return shown
        raise self.error(f"expected DATABASES, TABLES, PARTITIONS or TBLPROPERTIES, found {self.tok.describe()}")

    def reset_option(self) -> st.ResetOption:
        start = self.tok
        while self.tok.kind is not TokenKind.END:
            self.advance()
        key_text = self.sql[start.start:self.tok.start].strip()
        return st.ResetOption(key=key_text or None)

    def set_option(self) -> st.SetOption:
        start = self.tok
        while self.tok.kind is not TokenKind.END and not self.tok.is_symbol("="):
            self.advance()
        key_text = self.sql[start.start:self.tok.start].strip()
        if not key_text:
            raise self.error("expected an option name after SET", start)
        if not self.accept_symbol("="):
            return st.SetOption(key=key_text)
        value_tok = self.tok
        if value_tok.kind is TokenKind.END:
            raise self.error(f"expected a value for option {key_text}")
        value_text = self.sql[value_tok.start:self.tokens[-1].start].strip()
        if value_tok.kind is TokenKind.STRING and self.tokens[self.i + 1].kind is TokenKind.END:
            value_text = value_tok.text
        self.i = len(self.tokens) - 1
        return st.SetOption(key=key_text, value=value_text)
