"""COLUMN_STATS_ACCURATE, the parameter Hive keeps on tables and partitions.

`{"BASIC_STATS":"true","COLUMN_STATS":{"key":"true","value":"true"}}`, read and written as Hive's
`StatsSetupConst` does:
- a value is true when its text is "true" in any case (Java's `Boolean.valueOf`);
- a parameter that is not a JSON object is Hive's legacy form: "true" (any case) means basic
  statistics accurate and no column flags, anything else nothing accurate;
- column flags are kept whether or not BASIC_STATS is set (Hive reads them apart), but this lab
  uses a column's statistics only when the basic statistics are accurate too;
- written with BASIC_STATS first, column names lower-case in Java's String order (UTF-16 code
  units), non-ASCII names as they are (Jackson does not escape them), an empty COLUMN_STATS left out,
  and no parameter at all when nothing is accurate.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache

PARAM = "COLUMN_STATS_ACCURATE"


def _is_true(value) -> bool:
    return str(value).strip().lower() == "true"


def _java_order(name: str) -> bytes:
    return name.encode("utf-16-be")


@dataclass
class StatsAccuracy:
    basic: bool = False
    columns: set[str] = field(default_factory=set)

    @classmethod
    def parse(cls, text: str | None) -> StatsAccuracy:
        basic, columns = _parsed(text or "")
        return cls(basic, set(columns))

    def to_param(self) -> str | None:
        """The parameter's text, or None when the key should be removed."""
        if not self.basic:
            return None
        doc: dict = {"BASIC_STATS": "true"}
        if self.columns:
            doc["COLUMN_STATS"] = dict.fromkeys(sorted(self.columns, key=_java_order), "true")
        return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)


@lru_cache(maxsize=1024)
def _parsed(text: str) -> tuple[bool, frozenset[str]]:
    """The flags of a parameter's text, remembered: 100,000 partitions share a few distinct texts."""
    if not text:
        return False, frozenset()
    try:
        doc = json.loads(text)
    except ValueError:
        doc = None
    if not isinstance(doc, dict):  # Hive's legacy value
        return _is_true(text), frozenset()
    flags = doc.get("COLUMN_STATS")
    columns = frozenset(str(c).lower() for c, v in flags.items() if _is_true(v)) if isinstance(flags, dict) else frozenset()
    return _is_true(doc.get("BASIC_STATS")), columns
