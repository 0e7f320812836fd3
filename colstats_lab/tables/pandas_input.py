"""How a pandas DataFrame becomes a Spark DataFrame: one rule, whatever else the frame holds.

PySpark's own conversion tries Arrow and, when one column cannot be converted safely (a nanosecond
timestamp, say), silently converts row by row instead, where a float NaN stays a value and a nullable
integer's NA becomes NaN. The same NULL would then read as NULL or as NaN depending on another column.
Here the frame always goes through Arrow, and what Arrow's path would refuse is made explicit:

- pandas' missing values (None, NaN, NaT, pd.NA) are NULL, as on PySpark's Arrow path;
- timestamps finer than a microsecond are truncated (floored) to microseconds, as Spark keeps them, and
  the result says how many values lost digits;
- categoricals are their values; unsigned integers widen to the next signed type Spark has;
- a column Arrow cannot convert is refused by name, never converted another way.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession

from ..errors import InvalidArgument, one_line

# the signed type each unsigned integer fits in; uint64 beyond int64's range is refused when met
_WIDER_SIGNED = {pa.uint8(): pa.int16(), pa.uint16(): pa.int32(), pa.uint32(): pa.int64(), pa.uint64(): pa.int64()}


@dataclass
class Converted:
    """The Spark DataFrame made of a pandas one, and what the conversion changed, one line each."""

    frame: DataFrame
    notes: list[str] = field(default_factory=list)


def spark_frame_of(spark: SparkSession, data: pd.DataFrame, what: str) -> Converted:
    """`data` as a Spark DataFrame by the rule above; `what` names the frame in an error
    ("the pandas DataFrame written into default.sales"). Raises InvalidArgument naming the column."""
    table, notes = arrow_table_of(data, what)
    try:
        return Converted(spark.createDataFrame(table), notes)
    except (TypeError, ValueError, pa.ArrowException) as exc:  # a type Spark has no counterpart for
        raise InvalidArgument(f"cannot read {what}: {one_line(str(exc))}") from None


def arrow_table_of(data: pd.DataFrame, what: str) -> tuple[pa.Table, list[str]]:
    """The frame as an Arrow table Spark takes as it is, and the notes on what was changed to make it."""
    names = [str(name) for name in data.columns]
    lowered = [n.lower() for n in names]
    twice = next((n for n, low in zip(names, lowered, strict=True) if lowered.count(low) > 1), None)
    if twice is not None:
        raise InvalidArgument(f"cannot read {what}: it has the column {twice} more than once "
                              f"(names are compared without case)")
    columns, notes = [], []
    for name, (_, series) in zip(names, data.items(), strict=True):
        try:
            array = pa.array(series, from_pandas=True)
        except (pa.ArrowException, TypeError, ValueError, OverflowError) as exc:
            raise InvalidArgument(f"cannot read {what}: column {name} ({series.dtype}) does not convert to "
                                  f"one type: {one_line(str(exc), 160)}") from None
        array, note = _as_spark_holds(array, name, what)
        if note:
            notes.append(note)
        columns.append(array)
    return pa.Table.from_arrays(columns, names=names), notes


def _as_spark_holds(array: pa.Array, name: str, what: str) -> tuple[pa.Array, str | None]:
    """The array in a type Spark reads exactly, and a note when a value lost precision on the way."""
    kind = array.type
    if pa.types.is_dictionary(kind):
        return _as_spark_holds(array.dictionary_decode(), name, what)
    if pa.types.is_timestamp(kind) and kind.unit == "ns":
        floored = pc.floor_temporal(array, unit="microsecond")
        changed = pc.sum(pc.not_equal(floored, array).cast(pa.int64())).as_py() or 0
        exact = floored.cast(pa.timestamp("us", tz=kind.tz))
        note = (f"{changed:,} value{'s' if changed != 1 else ''} of {name} had nanoseconds: truncated to "
                f"microseconds, as Spark keeps timestamps") if changed else None
        return exact, note
    if pa.types.is_unsigned_integer(kind):
        wider = _WIDER_SIGNED[kind]
        try:
            return array.cast(wider), None
        except pa.ArrowInvalid:
            raise InvalidArgument(f"cannot read {what}: column {name} ({kind}) holds values above "
                                  f"{2 ** 63 - 1:,}, which no Spark integer type holds") from None
    return array, None
