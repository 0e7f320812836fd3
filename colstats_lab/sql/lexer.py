"""Tokens of the lab's statements, each with its offset in the text so errors can point at it."""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from ..errors import ParseError
from ..quoting import qualified


class TokenKind(Enum):
    WORD = "word"  # keyword or identifier
    QUOTED = "quoted identifier"  # `name`
    STRING = "string"
    NUMBER = "number"
    SYMBOL = "symbol"
    END = "end of input"


@dataclass(frozen=True)
class Token:
    kind: TokenKind
    text: str  # the value: unquoted for strings and quoted identifiers
    start: int
    end: int

    def is_word(self, *words: str) -> bool:
        return self.kind is TokenKind.WORD and self.text.upper() in words

    def is_symbol(self, *symbols: str) -> bool:
        return self.kind is TokenKind.SYMBOL and self.text in symbols

    def describe(self) -> str:
        if self.kind is TokenKind.END:
            return "end of input"
        return repr(self.text) if self.kind is not TokenKind.STRING else f"string '{self.text}'"


_TWO_CHAR = ("<=", ">=", "<>", "!=", "==", "||", "::")


def tokenize(sql: str) -> list[Token]:
    tokens: list[Token] = []
    i, n = 0, len(sql)
    while i < n:
        ch = sql[i]
        if ch.isspace():
            i += 1
        elif sql.startswith("--", i):
            end = sql.find("\n", i)
            i = n if end == -1 else end
        elif sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            if end == -1:
                raise ParseError("unterminated comment", sql, i)
            i = end + 2
        elif ch.isalpha() or ch == "_":
            j = i
            while j < n and (sql[j].isalnum() or sql[j] == "_"):
                j += 1
            tokens.append(Token(TokenKind.WORD, sql[i:j], i, j))
            i = j
        elif ch.isdigit() or (ch == "." and i + 1 < n and sql[i + 1].isdigit()):
            j = i
            while j < n and (sql[j].isalnum() or sql[j] == "." or (
                    sql[j] in "+-" and sql[j - 1] in "eE" and j + 1 < n and sql[j + 1].isdigit()
                    and sql[i:j - 1].replace(".", "").isdigit())):
                j += 1
            tokens.append(Token(TokenKind.NUMBER, sql[i:j], i, j))
            i = j
        elif ch in "'\"":
            value, j = _read_quoted(sql, i, ch)
            tokens.append(Token(TokenKind.STRING, value, i, j))
            i = j
        elif ch == "`":
            name, j = _read_backquoted(sql, i)
            tokens.append(Token(TokenKind.QUOTED, name, i, j))
            i = j
        else:
            width = 2 if sql[i:i + 2] in _TWO_CHAR else 1
            tokens.append(Token(TokenKind.SYMBOL, sql[i:i + width], i, i + width))
            i += width
    tokens.append(Token(TokenKind.END, "", n, n))
    return tokens


# Spark's escapes in a quoted string (ParserUtils.unescapeSQLString): `\%` and `\_` stay escaped for LIKE
_ESCAPES = {"0": "\0", "b": "\b", "n": "\n", "r": "\r", "t": "\t", "Z": "\x1a", "%": "\\%", "_": "\\_"}


def _read_quoted(sql: str, start: int, quote: str) -> tuple[str, int]:
    """A quoted string from `start`, unescaped as Spark's parser does, so a value reads the same in the lab's
    statements and in the queries it hands to Spark; the value and the index after its closing quote."""
    out, i = [], start + 1
    while i < len(sql):
        ch = sql[i]
        if ch == "\\" and i + 1 < len(sql):
            following = sql[i + 1]
            if following == "u" and _is_hex(sql[i + 2:i + 6], 4):
                out.append(chr(int(sql[i + 2:i + 6], 16)))
                i += 6
            elif following in "0123" and len(sql[i + 1:i + 4]) == 3 and all(c in "01234567" for c in sql[i + 1:i + 4]):
                out.append(chr(int(sql[i + 1:i + 4], 8)))
                i += 4
            else:
                out.append(_ESCAPES.get(following, following))
                i += 2
        elif ch == quote:
            if sql[i + 1:i + 2] == quote:  # '' inside a string is one quote
                out.append(quote)
                i += 2
            else:
                return "".join(out), i + 1
        else:
            out.append(ch)
            i += 1
    raise ParseError("unterminated string", sql, start)


def _is_hex(text: str, width: int) -> bool:
    return len(text) == width and all(c in "0123456789abcdefABCDEF" for c in text)


def _read_backquoted(sql: str, start: int) -> tuple[str, int]:
    """A backquoted name from `start`, where two backquotes stand for one (as in Spark and Hive); the name
    and the index after its closing backquote."""
    parts, i = [], start + 1
    while True:
        end = sql.find("`", i)
        if end == -1:
            raise ParseError("unterminated quoted identifier", sql, start)
        parts.append(sql[i:end])
        if sql[end + 1:end + 2] != "`":
            return "`".join(parts), end + 1
        i = end + 2


def quoted(name: str) -> str:
    """`catalog.db.t`, `db.t` or `t` as the parser reads it back: each part in backquotes, so odd characters
    stay a name."""
    return qualified(*name.split(".", 2))
