"""Hive's ValidWriteIdList: which write IDs of one table a reader may see."""
from __future__ import annotations

from dataclasses import dataclass, field

from ...errors import InvalidInputException

NO_OPEN_WRITE = 9223372036854775807  # Long.MAX_VALUE, Hive's minOpenWriteId when nothing is open


@dataclass(frozen=True)
class ValidWriteIdList:
    """`db.table:highWatermark:minOpenWriteId:open ids:aborted ids`, as Hive prints it."""

    table_name: str
    high_watermark: int
    open_write_ids: frozenset[int] = field(default_factory=frozenset)
    aborted_write_ids: frozenset[int] = field(default_factory=frozenset)

    @property
    def min_open_write_id(self) -> int:
        return min(self.open_write_ids, default=NO_OPEN_WRITE)

    def is_write_id_valid(self, write_id: int) -> bool:
        """Committed and at or below the high watermark; write ID 0 (not transactional) always is."""
        if write_id == 0:
            return True
        return (
            write_id <= self.high_watermark
            and write_id not in self.open_write_ids
            and write_id not in self.aborted_write_ids
        )

    def are_all_valid(self, low: int, high: int) -> bool:
        """Whether every write ID from `low` to `high` is valid (as is_write_id_valid)."""
        if high <= 0:
            return True
        low = max(low, 1)
        return high <= self.high_watermark and not any(
            low <= w <= high for w in self.open_write_ids | self.aborted_write_ids)

    def describe(self) -> str:
        """The snapshot in words: the writes it sees (Hive's string stays `str()`)."""
        unseen = sorted(self.open_write_ids | self.aborted_write_ids)
        seen = f"writes up to ID {self.high_watermark:,}" if self.high_watermark else "no writes"
        return f"{self.table_name} as of {seen}" + (f" but {', '.join(map(str, unseen))} (open or aborted)"
                                                   if unseen else "")

    def __str__(self) -> str:
        open_ids = ",".join(str(i) for i in sorted(self.open_write_ids))
        aborted = ",".join(str(i) for i in sorted(self.aborted_write_ids))
        return f"{self.table_name}:{self.high_watermark}:{self.min_open_write_id}:{open_ids}:{aborted}"

    @classmethod
    def parse(cls, text: str) -> ValidWriteIdList:
        parts = text.rsplit(":", 4)
        if len(parts) != 5:
            raise InvalidInputException(f"not a ValidWriteIdList: {text!r}")
        name, hwm, _min_open, open_ids, aborted = parts

        def ids(chunk: str) -> frozenset[int]:
            return frozenset(int(i) for i in chunk.split(",") if i)

        try:
            return cls(name, int(hwm), ids(open_ids), ids(aborted))
        except ValueError:
            raise InvalidInputException(f"not a ValidWriteIdList: {text!r}") from None
