"""How numbers, sizes and times read in the views: every message a user sees is formatted here."""
from __future__ import annotations

import datetime as dt
import html
import math

import pandas as pd

from ..sizes import counted, size  # noqa: F401 - the views format sizes and counts through here


def count(value) -> str:
    """A count with thousands separators; "" for none (None, NaN, pandas' NA)."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return ""
    return f"{int(value):,}"


def number(value) -> str:
    """A statistic's value as a person reads it: grouped integers, short floats, NaN spelled out."""
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if value == 0:  # -0.0 is 0.0 to Spark's comparisons and to a reader
            value = 0.0
        if value.is_integer() and abs(value) < 1e15:
            return f"{value:,.1f}"
        # ten significant digits: six rounded a max of 4,999.998812 up to "5,000", past what the column holds
        return f"{value:,.10g}" if abs(value) < 1e15 else f"{value:.10g}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def percent(fraction: float | None) -> str:
    return "" if fraction is None else f"{fraction * 100:.1f}%"


def when(seconds: int | None) -> str:
    """A UTC time to the minute; the column header says UTC."""
    if not seconds:
        return ""
    return dt.datetime.fromtimestamp(seconds, dt.UTC).strftime("%Y-%m-%d %H:%M")


def escape(text) -> str:
    return html.escape("" if text is None else str(text))
