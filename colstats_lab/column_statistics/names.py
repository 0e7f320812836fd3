"""Partition names as Hive writes them: `ds=2026-11-21/hr=11`, with Hive's path escaping.

The escaped set is Hive's `FileUtils.escapePathName` (and Spark's `ExternalCatalogUtils`):
control characters, `"#%'*/:=?\\{[]^` and DEL become `%XX`; a null or empty value is
`__HIVE_DEFAULT_PARTITION__`.
"""
from __future__ import annotations

import re

from ..errors import InvalidInputException

DEFAULT_PARTITION_NAME = "__HIVE_DEFAULT_PARTITION__"
MAX_OBJECT_NAME = 128  # Hive's TBLS.TBL_NAME and DBS.NAME hold 128 characters

_OBJECT_NAME = re.compile(r"\w+")  # letters of any script, digits and underscores, as Hive's validateName


def object_name_problem(name, what: str = "table") -> str | None:
    """Why `name` cannot name a database or a table, or None when it can. Hive's rule (letters, digits and
    underscores) keeps every name a single folder inside the warehouse: no `/`, `..`, absolute path, dot,
    space, NUL or control character can reach a path through it."""
    if not isinstance(name, str) or not name:
        return f"a {what} is named by a non-empty string, not {name!r}"
    if len(name) > MAX_OBJECT_NAME:
        return f"{what} name {name[:40]!r}... is {len(name)} characters long; Hive keeps {MAX_OBJECT_NAME}"
    if not _OBJECT_NAME.fullmatch(name):
        bad = next(ch for ch in name if not _OBJECT_NAME.fullmatch(ch))
        shown = repr(bad) if bad.isprintable() and bad != " " else f"U+{ord(bad):04X}"
        return (f"{what} name {name!r} holds {shown}: database and table names are letters, digits and "
                "underscores, as in Hive (a name is never a path)")
    return None


def split_table_name(name: str, current_db: str) -> tuple[str, str]:
    """`table` (in `current_db`) or `db.table`, as the lab's Python API takes a table, lower-cased: the one
    reading of a table name outside statements (no name holds a dot, as in Hive)."""
    if not isinstance(name, str) or not name.strip():
        raise InvalidInputException(f"a table is named by a non-empty string, not {name!r}")
    parts = name.strip().split(".")
    if len(parts) > 2 or not all(parts):
        raise InvalidInputException(f"{name!r} is not `table` or `db.table`: a name may not contain a dot (.)")
    return (parts[0] if len(parts) == 2 else current_db).lower(), parts[-1].lower()

_ESCAPED = set('"#%\'*/:=?\\\x7f{[]^') | {chr(c) for c in range(1, 0x20)}


def escape_path_name(text: str) -> str:
    return "".join(f"%{ord(ch):02X}" if ch in _ESCAPED else ch for ch in text)


def unescape_path_name(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        if text[i] == "%" and _is_hex(text[i + 1:i + 3]):
            out.append(chr(int(text[i + 1:i + 3], 16)))
            i += 3
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _is_hex(pair: str) -> bool:
    return len(pair) == 2 and all(c in "0123456789abcdefABCDEF" for c in pair)


def make_part_name(keys: list[str], values: list[str | None]) -> str:
    """`ds=2026-11-21/hr=11` from keys and their values in key order."""
    if len(keys) != len(values):
        raise InvalidInputException(f"{len(keys)} partition keys but {len(values)} values")
    return "/".join(
        f"{escape_path_name(k)}={DEFAULT_PARTITION_NAME if v is None or v == '' else escape_path_name(v)}"
        for k, v in zip(keys, values, strict=True)
    )


def parse_part_name(name: str) -> list[tuple[str, str | None]]:
    """The (key, value) pairs of a partition name; the default partition's value is None."""
    pairs = []
    for fragment in name.split("/"):
        key, sep, value = fragment.partition("=")
        if not sep or not key:
            raise InvalidInputException(f"malformed partition name {name!r}: {fragment!r} is not key=value")
        raw = unescape_path_name(value)
        pairs.append((unescape_path_name(key), None if value == DEFAULT_PARTITION_NAME else raw))
    return pairs


def hive_part_name(name: str) -> str:
    """A partition name as the metastore keeps it, its keys lower-cased as Hive's are (`eventdate=2026-01-01` of
    `eventDate=2026-01-01`, the spelling views show); the values as they are."""
    if not any(any(c.isupper() for c in fragment.partition("=")[0]) for fragment in name.split("/")):
        return name
    pairs = parse_part_name(name)
    return make_part_name([k.lower() for k, _ in pairs], [v for _, v in pairs])
