"""The lab's statements: parsing (with caret errors) and running them."""
from .lexer import ParseError
from .parser import parse, parse_one
