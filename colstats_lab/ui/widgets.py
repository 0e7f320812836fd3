"""The views' frame: a View is an ipywidgets box built from a lab; each view is one module that
registers itself here, so `lab.views(name, ...)` and the dashboard find it by name."""
from __future__ import annotations

from collections.abc import Callable, Set

import ipywidgets as widgets
import pandas as pd

from ..errors import ColstatsError
from ..frames import names_and_total
from . import format as fmt

VIEWS: dict[str, type[View]] = {}

STYLE = """<style>
.colstats-table {border-collapse: collapse; font-size: 13px; font-family: system-ui, sans-serif;}
.colstats-table th {text-align: left; padding: 4px 8px; border-bottom: 2px solid #888; white-space: nowrap;}
.colstats-table td {padding: 3px 8px; border-bottom: 1px solid #ddd; white-space: nowrap;}
.colstats-table td.num {text-align: right; font-variant-numeric: tabular-nums;}
.colstats-fit {width: 100%;} .colstats-fit td, .colstats-fit th {white-space: normal;}
.colstats-table td.wrap {white-space: normal; min-width: 240px; max-width: 520px; color: #555; font-size: 12px;}
.colstats-table td.narrow {white-space: normal; min-width: 150px; max-width: 165px; font-size: 12px;}
.colstats-badge {border-radius: 8px; padding: 1px 8px; font-size: 12px; color: white; white-space: nowrap;}
.colstats-ok {background: #2e7d32;} .colstats-stale {background: #c62828;} .colstats-none {background: #757575;}
.colstats-tier {background: #6a51a3; margin-left: 4px;}
.colstats-bar {display: inline-block; width: 48px; height: 8px; background: #e0e0e0; margin-right: 6px;
               vertical-align: middle;}
.colstats-bar > span {display: inline-block; vertical-align: top; height: 8px; background: #e45756;}
.colstats-header, .colstats-workers {font-family: system-ui, sans-serif; font-size: 14px; margin: 4px 0;}
.colstats-muted {font-family: system-ui, sans-serif; font-size: 12px; color: #666;}
.colstats-opens {cursor: pointer;} .colstats-opens:hover {background: #eef3fb;}
</style>"""


def register(name: str) -> Callable[[type[View]], type[View]]:
    def wrap(cls: type[View]) -> type[View]:
        VIEWS[name] = cls
        cls.view_name = name
        return cls
    return wrap


class View(widgets.VBox):
    """Base of every view: a VBox with a title line and a way to show messages.

    `.result` is what the view shows (a SkewReport, a PruningReport, an ANALYZE's Result); its public
    attributes read through the view, so `r = %skew sales.x` then `r.recommended` works while `r`
    displays as the view."""

    view_name = "view"

    def __init__(self, result=None, **kwargs):
        self.result = result
        self.header = widgets.HTML()
        self.message = widgets.HTML()
        super().__init__(children=[self.header], **kwargs)

    def __getattr__(self, name: str):
        # only reached when the view itself has no such attribute; private names are the widget's business
        result = self.__dict__.get("result")
        if name.startswith("_") or result is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getattr(result, name)

    def say(self, text: str) -> None:
        self.message.value = f'<div class="colstats-header">{fmt.escape(text)}</div>'


def publish_from(view: View, button: widgets.Button, publish: Callable[[], str], refresh: Callable[[], None]) -> None:
    """A view's publish button pressed: the button held while `publish` runs, then the view refreshed and the
    publish's message (or the refusal, one line, never a traceback) said under it."""
    button.disabled = True
    try:
        message = publish()
    except ColstatsError as exc:
        message = str(exc)
    finally:
        button.disabled = False
    refresh()
    view.say(message)


LEVEL_CHOICES = 200  # partitions a level picker lists at once


class LevelPicker:
    """A view's level dropdown: the table level, then at most LEVEL_CHOICES partitions from
    `find(text, limit) -> (names, how many hold text)`; past that many a search box narrows them, so a
    table of 100,000 partitions stays usable. `dropdown.value` is the level shown."""

    def __init__(self, description: str, table_level: str, find: Callable[[str, int], tuple[list[str], int]],
                 value: str | None = None, label: Callable[[str], str] | None = None):
        self.table_level, self.find = table_level, find
        self.label = label or (lambda name: name)  # how a partition's name is shown (its keys as the files spell them)
        self.search = widgets.Text(placeholder="part of a partition name, e.g. ds=2026-11", description="Find",
                                   continuous_update=False, layout=widgets.Layout(width="360px"))
        self.found = widgets.HTML()
        self.dropdown = widgets.Dropdown(options=self._options("", value), value=value or table_level,
                                         description=description, layout=widgets.Layout(width="420px"))
        self.dropdown.layout.display = None if self.total else "none"
        self.search.layout.display = self.found.layout.display = None if self.total > LEVEL_CHOICES else "none"
        self.search.observe(lambda change: self.narrow(change["new"]), names="value")
        self.box = widgets.HBox([self.dropdown, self.search, self.found])

    def _options(self, text: str, keep: str | None) -> list:
        names, count = self.find(text, LEVEL_CHOICES)
        if not text:
            self.total = count
        first = f", the first {LEVEL_CHOICES:,} listed" if count > LEVEL_CHOICES else ""
        self.found.value = (f'<span class="colstats-muted">{count:,} partitions'
                            + (f" hold {fmt.escape(text)}" if text else "") + first
                            + ("" if text else "; type to find others") + "</span>")
        extra = [keep] if keep and keep != self.table_level and keep not in names else []
        listed = [self.table_level] + extra + names
        labels = [name if name == self.table_level else self.label(name) for name in listed]
        return listed if labels == listed else list(zip(labels, listed, strict=True))

    def narrow(self, text: str) -> None:
        """Lists the partitions whose names hold `text`, keeping the level shown."""
        current = self.dropdown.value
        self.dropdown.options = self._options(text.strip(), current)
        self.dropdown.value = current


def partitions_found(search: Callable[[str, int], pd.DataFrame]) -> Callable[[str, int], tuple[list[str], int]]:
    """A LevelPicker's `find` over a table's partitions: `search` is its `inspect.partitions`."""
    def find(text: str, limit: int) -> tuple[list[str], int]:
        return names_and_total(search(text, limit))
    return find


def names_holding(names: list[str]) -> Callable[[str, int], tuple[list[str], int]]:
    """A LevelPicker's `find` over names in memory."""
    def find(text: str, limit: int) -> tuple[list[str], int]:
        held = [n for n in names if text in n]
        return held[:limit], len(held)
    return find


def refusal(exc: Exception) -> widgets.HTML:
    """A refused request as a viewer sees it: one line in red, never a traceback (a parse error keeps
    its caret under the bad token)."""
    return widgets.HTML(f'<pre class="colstats-header" style="color: #c62828; white-space: pre-wrap">'
                        f'{fmt.escape(str(exc))}</pre>')


def badge(accurate: bool | None, reason: str) -> str:
    css = "colstats-none" if accurate is None else ("colstats-ok" if accurate else "colstats-stale")
    label = "no stats" if accurate is None else ("accurate" if accurate else "not accurate")
    return f'<span class="colstats-badge {css}" title="{fmt.escape(reason)}">{label}</span>'


def tier_badge(tier: str | None) -> str:
    """A badge beside the status when a column's figures came from the files' metadata or a sample (`tier`, as
    `frames.tier_said` says it; none for every value read): its tooltip points at inspect.bounds()."""
    if not isinstance(tier, str) or tier == "every value":
        return ""
    label = "metadata" if tier == "metadata" else tier.split(" (")[0]
    why = f"{tier}: some figures are estimates with a band (inspect.bounds())"
    return f'<span class="colstats-badge colstats-tier" title="{fmt.escape(why)}">{fmt.escape(label)}</span>'


def fraction_bar(fraction: float | None) -> str:
    if fraction is None:
        return ""
    width = max(0.0, min(1.0, fraction)) * 100
    return f'<span class="colstats-bar"><span style="width:{width:.1f}%"></span></span>{fmt.percent(fraction)}'


def html_table(frame: pd.DataFrame, numeric: Set[str] = frozenset(), raw_html: Set[str] = frozenset(),
               wrap: Set[str] = frozenset(), row_attributes: list[str] | None = None,
               narrow: Set[str] = frozenset(), fit: bool = False) -> str:
    """A frame as the views' table: `wrap` columns wrap their text in a wide cell, `narrow` ones in a narrow
    one (a value a line); `row_attributes`, one per row, go into each `<tr>` as they are. With `fit`, the table
    takes the width it is given and its cells that may break (raw HTML holding a breakable space) do."""
    head = "".join(f"<th>{fmt.escape(c)}</th>" for c in frame.columns)
    body = []
    for index, row in enumerate(frame.itertuples(index=False)):
        cells = []
        for name, value in zip(frame.columns, row, strict=True):
            text = value if name in raw_html else fmt.escape(value)
            css = "num" if name in numeric else ("wrap" if name in wrap else "narrow" if name in narrow else "")
            cells.append(f'<td class="{css}">{text}</td>' if css else f"<td>{text}</td>")
        attributes = f" {row_attributes[index]}" if row_attributes else ""
        body.append(f"<tr{attributes}>" + "".join(cells) + "</tr>")
    table_class = "colstats-table colstats-fit" if fit else "colstats-table"
    return (f'{STYLE}<div style="overflow-x: auto"><table class="{table_class}"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table></div>')
