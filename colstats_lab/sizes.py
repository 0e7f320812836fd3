"""Byte sizes and counts as every message spells them (the views' format re-exports this): `446.2 MiB`, `3 tables`."""
from __future__ import annotations

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def size(num_bytes: int | None) -> str:
    """`446.2 MiB`; bytes always carry a unit."""
    if num_bytes is None:
        return ""
    value = float(num_bytes)
    for unit in _UNITS:
        if abs(value) < 1024 or unit == _UNITS[-1]:
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return ""


def counted(number: int, noun: str, plural: str | None = None) -> str:
    """`1 partition`, `19 partitions`, `1,000 rows`: a count as every message spells it."""
    return f"{number:,} {noun if number == 1 else plural or noun + 's'}"
