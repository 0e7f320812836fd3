"""COLUMN_STATS_ACCURATE, the parameter Hive keeps on tables and partitions.

`{"BASIC_STATS":"true","COLUMN_STATS":{"key":"true","value":"true"}}`: values are the string
"true", column names lower-case and sorted, an empty COLUMN_STATS left out, and basic stats
that are not accurate remove the whole key, column flags included.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

PARAM = "COLUMN_STATS_ACCURATE"


@dataclass
class StatsAccuracy:
    basic: bool = False
    columns: set[str] = field(default_factory=set)

    @classmethod
    def parse(cls, text: str | None) -> "StatsAccuracy":
        if not text:
            return cls()
        try:
            doc = json.loads(text)
        except ValueError:
            return cls()
        basic = str(doc.get("BASIC_STATS", "")).lower() == "true"
        columns = {c.lower() for c, v in (doc.get("COLUMN_STATS") or {}).items() if str(v).lower() == "true"}
        return cls(basic, columns if basic else set())

    def to_param(self) -> str | None:
        """The parameter's text, or None when the key should be removed."""
        if not self.basic:
            return None
        doc: dict = {"BASIC_STATS": "true"}
        if self.columns:
            doc["COLUMN_STATS"] = {c: "true" for c in sorted(self.columns)}
        return json.dumps(doc, separators=(",", ":"))
