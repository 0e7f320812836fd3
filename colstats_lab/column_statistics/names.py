"""Partition names as Hive writes them: `ds=2026-11-21/hr=11`, with Hive's path escaping.

The escaped set is Hive's `FileUtils.escapePathName` (and Spark's `ExternalCatalogUtils`):
control characters, `"#%'*/:=?\\{[]^` and DEL become `%XX`; a null or empty value is
`__HIVE_DEFAULT_PARTITION__`.
"""
from __future__ import annotations

from ..errors import InvalidInputException

DEFAULT_PARTITION_NAME = "__HIVE_DEFAULT_PARTITION__"


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
        for k, v in zip(keys, values)
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
