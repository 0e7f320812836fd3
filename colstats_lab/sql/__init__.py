"""The lab's statements: the lexer, the parser (with caret errors) and the statements it builds; running
them is `commands`'."""
from .lexer import ParseError
from .parser import parse, parse_one, parse_partition_spec, partition_clause
