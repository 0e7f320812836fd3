"""Plotly figures for the views; usable without widgets (`fig.show()`)."""
from __future__ import annotations

import json
import math
from collections.abc import Set
from itertools import pairwise

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from IPython.display import display

from ..column_statistics.model import Date, Timestamp
from ..column_statistics.quantiles import SketchFamily, column_value
from ..metastore.rows.levels import Level

PLOTLY_MIME = "application/vnd.plotly.v1+json"
OTHERS = "(others)"
NULLS = "(NULL)"  # rows with a NULL: never a skewed value, they stay in the default directory


def top_values_figure(top: pd.DataFrame, others: int, total: int, title: str, log_scale: bool = False,
                      marked: Set[str] = frozenset(), nulls: int = 0) -> go.Figure:
    """Bars of the most frequent values and their share of rows, with an 'others' bar for the rest and
    a '(NULL)' bar for rows with NULL; values in `marked` (the recommended skewed ones) in a colour of
    their own."""
    labels = ["NULL" if not isinstance(v, str) and pd.isna(v) else str(v) for v in top["value"]]
    counts = [int(c) for c in top["count"]]
    colors = ["#f58518" if label in marked else "#4c78a8" for label in labels]
    if others > 0:
        labels.append(OTHERS)
        counts.append(int(others))
        colors.append("#bab0ac")
    if nulls > 0:
        labels.append(NULLS)
        counts.append(int(nulls))
        colors.append("#9d755d")
    shares = [c / total if total else 0.0 for c in counts]
    fig = go.Figure(go.Bar(
        x=labels, y=counts, marker_color=colors,
        text=[f"{s * 100:.1f}%" for s in shares], textposition="outside", cliponaxis=False,
        customdata=shares, hovertemplate="%{x}: %{y:,} rows (%{customdata:.1%})<extra></extra>",
    ))
    fig.update_layout(
        title=title, height=360, margin=dict(l=60, r=20, t=50, b=60), template="plotly_white",
        xaxis=dict(title="value", type="category"),
        yaxis=dict(title="rows" + (" (log scale)" if log_scale else ""), type="log" if log_scale else "linear",
                   tickformat=",d" if not log_scale else None),
    )
    return fig


def _axis_top(values: pd.Series, least: float = 10.0) -> float:
    """The largest value, at least `least` (and `least` when there is none)."""
    top = values.max(skipna=True)
    return float(top) if pd.notna(top) and top > least else least


def null_and_ndv_figure(rows: pd.DataFrame, title: str) -> go.Figure:
    """Null fraction and distinct values per column, side by side."""
    fig = go.Figure()
    fig.add_trace(go.Bar(x=rows["column"], y=rows["null_fraction"], name="null fraction", yaxis="y",
                         offsetgroup=0, marker_color="#e45756",
                         hovertemplate="%{x}: %{y:.1%} null<extra></extra>"))
    fig.add_trace(go.Bar(x=rows["column"], y=rows["ndv"], name="distinct values", yaxis="y2",
                         offsetgroup=1, marker_color="#4c78a8",
                         hovertemplate="%{x}: %{y:,} distinct<extra></extra>"))
    fig.update_layout(
        title=title, height=320, margin=dict(l=60, r=60, t=50, b=60), template="plotly_white", barmode="group",
        yaxis=dict(title="null fraction", tickformat=".2~%", rangemode="tozero"),
        # log, as NDVs run from 1 to millions; from 1 up, else the bars start at the smallest NDV and it shows as none
        yaxis2=dict(title="distinct values", overlaying="y", side="right", type="log", tickformat=",d", dtick=1,
                    range=[0, math.log10(_axis_top(rows["ndv"])) * 1.05]),
        legend=dict(orientation="h", y=-0.25),
    )
    return fig


HEATMAP_PARTITIONS = 200  # columns of the skew heat map: the partitions where the heavy hitters weigh most


def shares_heatmap(report, title: str, label=str) -> go.Figure:
    """Heavy hitters (rows) by partition (columns): each cell the value's share of that partition. Past
    HEATMAP_PARTITIONS partitions, those where a heavy hitter holds the largest share are shown; `label`
    names a partition as shown (its keys as the files spell them)."""
    labels = [str(v) for v in report.heavy_hitters()["value"]]
    frame = report.frame.assign(label=report.frame["value"].map(str))
    frame = frame[frame["label"].isin(labels)]
    shares = frame.pivot_table(index="label", columns="partition", values="share", aggfunc="max", fill_value=0.0)
    partitions = list(report.partitions)
    if len(partitions) > HEATMAP_PARTITIONS:
        weight = shares.max(axis=0).reindex(partitions, fill_value=0.0)
        keep = set(weight.sort_values(ascending=False, kind="stable").index[:HEATMAP_PARTITIONS])
        partitions = [p for p in partitions if p in keep]  # in partition order
        title += f" (the {HEATMAP_PARTITIONS} of {len(report.partitions):,} partitions where they weigh most)"
    shares = shares.reindex(index=labels, columns=partitions, fill_value=0.0)
    fig = go.Figure(go.Heatmap(z=shares.to_numpy().tolist(), x=[label(p) for p in partitions], y=labels,
                               colorscale="Blues", zmin=0,
                               hovertemplate="%{y} in %{x}: %{z:.1%}<extra></extra>", colorbar=dict(tickformat=".0%")))
    fig.update_layout(title=title, height=120 + 24 * max(len(labels), 1), margin=dict(l=80, r=20, t=50, b=60),
                      template="plotly_white", xaxis=dict(type="category"), yaxis=dict(type="category"))
    return fig


FRESHNESS_PARTITIONS = 200  # rows of the freshness map: the partitions needing attention first


def freshness_heatmap(frame: pd.DataFrame, title: str) -> go.Figure:
    """Partitions (rows) by columns: accurate (green), not accurate (red) or never analyzed (grey), the
    reason on hover; from a stats_frame's partition rows. Past FRESHNESS_PARTITIONS partitions, those with
    the most columns not accurate, then never analyzed, are shown."""
    parts = frame[frame["partition"].notna()]
    accurate = parts["accurate"]
    state = pd.Series(np.where(accurate.isna(), 0, np.where(accurate == True, 2, 1)),  # noqa: E712 - object column
                      index=parts.index)
    parts = parts.assign(state=state)
    names = list(dict.fromkeys(parts["partition"]))
    shown = sorted(names)
    if len(names) > FRESHNESS_PARTITIONS:  # chosen before pivoting: 10,000 partitions pivot 200
        attention = (parts["state"].eq(1) * 1000 + parts["state"].eq(0)).groupby(parts["partition"]).sum()
        keep = set(attention.sort_values(ascending=False, kind="stable").index[:FRESHNESS_PARTITIONS])
        shown = [p for p in shown if p in keep]
        parts = parts[parts["partition"].isin(keep)]
        title += f" (the {FRESHNESS_PARTITIONS} of {len(names):,} partitions needing it most)"
    columns = list(dict.fromkeys(parts["column"]))
    grid = parts.pivot(index="partition", columns="column", values="state").reindex(index=shown, columns=columns)
    reasons = parts.pivot(index="partition", columns="column", values="reason").reindex(index=shown, columns=columns)
    labels = {0: "never analyzed", 1: "not accurate", 2: "accurate"}
    text = [[f"{labels[int(v)]}" + (f": {r}" if r and int(v) == 1 else "") for v, r in zip(row, why, strict=True)]
            for row, why in zip(grid.to_numpy().tolist(), reasons.to_numpy().tolist(), strict=True)]
    fig = go.Figure(go.Heatmap(
        z=grid.to_numpy().tolist(), x=columns, y=shown, text=text, zmin=0, zmax=2, showscale=False,
        colorscale=[[0, "#bab0ac"], [0.33, "#bab0ac"], [0.34, "#e45756"], [0.66, "#e45756"], [0.67, "#54a24b"],
                    [1, "#54a24b"]],
        hovertemplate="%{y} · %{x}: %{text}<extra></extra>", xgap=1, ygap=1))
    fig.update_layout(title=title, height=120 + 18 * max(len(shown), 1), margin=dict(l=140, r=20, t=50, b=40),
                      template="plotly_white", xaxis=dict(type="category", side="top"),
                      yaxis=dict(type="category", autorange="reversed"))
    return fig


def scan_fractions_figure(fractions: pd.DataFrame, title: str) -> go.Figure:
    """Grouped bars: the fraction of a partition each query reads without and with list bucketing."""
    fig = go.Figure()
    fig.add_trace(go.Bar(x=fractions["query"], y=fractions["without"], name="without list bucketing",
                         marker_color="#bab0ac", hovertemplate="%{x}: %{y:.0%}<extra></extra>"))
    fig.add_trace(go.Bar(x=fractions["query"], y=fractions["with"], name="with list bucketing",
                         marker_color="#54a24b", hovertemplate="%{x}: %{y:.0%}<extra></extra>"))
    fig.update_layout(title=title, height=320, margin=dict(l=60, r=20, t=50, b=60), template="plotly_white",
                      barmode="group", yaxis=dict(tickformat=".0%", range=[0, 1.05]), legend=dict(orientation="h", y=-0.25))
    return fig


KEPT_COLOR, PRUNED_COLOR = "#54a24b", "#bab0ac"
EM_SPACE = "\u2003"  # a space no renderer trims


TREEMAP_PARTITIONS = 300  # partitions drawn one by one; the rest are summed into a box per decision


def _file_label(identifier: str) -> str:
    """A file's box label that fits in a box: Spark's part-00000-<uuid>-c000.snappy.parquet as part-00000…c000;
    the whole name is on hover."""
    name = identifier.rsplit("/", 1)[-1]
    stem = name.split(".", 1)[0]
    parts = stem.split("-")
    return f"{parts[0]}-{parts[1]}…{parts[-1]}" if len(parts) > 3 and len(stem) > 24 else name


def pruning_treemap(report, measure: str = "bytes", spelled=None) -> go.Figure:
    """The table's partitions, list-bucketing directories and files as nested boxes sized by bytes (or
    rows), green where the query reads them and grey where pruning skips them. Past TREEMAP_PARTITIONS
    partitions the largest are drawn and the others summed into one kept and one pruned box. `spelled` names a
    partition as the files spell its keys (`eventDate=...`)."""
    spelled = spelled or (lambda name: name)
    root = report.table
    ids, labels, parents, values, colors, hover = [root], [root], [""], [0], ["#ffffff"], [""]
    partitions = [d for d in report.decisions if d.level == Level.PARTITION]
    drawn = {d.identifier for d in sorted(partitions, key=lambda d: getattr(d, measure), reverse=True)
             [:TREEMAP_PARTITIONS]}
    summed: dict[bool, list] = {True: [], False: []}
    for d in partitions:
        if d.identifier not in drawn:
            summed[d.kept].append(d)
    some_summed = bool(summed[True] or summed[False])
    for d in report.decisions:
        if d.level == Level.PARTITION and d.identifier in drawn:
            parent = root
        elif d.level == Level.FILE:
            owner = _partition_of(d.identifier, drawn)
            if owner is None and some_summed:
                continue  # in a summed partition
            parent = root if owner is None else f"partition:{owner}"
        else:
            continue
        ids.append(f"{d.level}:{d.identifier}")
        shown = _file_label(d.identifier) if d.level == Level.FILE else spelled(d.identifier)
        labels.append(shown)
        parents.append(parent)
        values.append(max(getattr(d, measure), 0))
        colors.append(KEPT_COLOR if d.kept else PRUNED_COLOR)
        hover.append(f"{d.identifier if d.level == Level.FILE else shown}<br>{'kept' if d.kept else 'pruned'}: "
                     f"{d.reason}")
    for kept, group in summed.items():
        if group:
            ids.append(f"others:{kept}")
            labels.append(f"{len(group):,} more {'kept' if kept else 'pruned'} partitions")
            parents.append(root)
            values.append(sum(max(getattr(d, measure), 0) for d in group))
            colors.append(KEPT_COLOR if kept else PRUNED_COLOR)
            hover.append("summed: too many partitions to draw one by one")
    with_children = set(parents)
    for i, unit_id in enumerate(ids):  # a partition with files is sized by them ("remainder" adds its own)
        if unit_id.startswith("partition:") and unit_id in with_children:
            values[i] = 0
    fig = go.Figure(go.Treemap(ids=ids, labels=labels, parents=parents, values=values, marker=dict(colors=colors),
                               customdata=hover, branchvalues="remainder",
                               hovertemplate="%{label}<br>%{value:,} " + measure + "<br>%{customdata}<extra></extra>"))
    fig.update_layout(title=f"What the query reads of {root} ({measure}; green kept, grey pruned)", height=420,
                      margin=dict(l=10, r=10, t=50, b=10))
    return fig


def _partition_of(path: str, partitions: set[str]) -> str | None:
    """The deepest of `partitions` whose directory holds the file at `path`."""
    parts = path.split("/")
    for depth in range(len(parts) - 1, 0, -1):
        prefix = "/".join(parts[:depth])
        if prefix in partitions:
            return prefix
    return None


def pruning_levels_figure(report) -> go.Figure:
    """Per pruning level, the bytes kept and pruned."""
    levels = report.levels
    kept = [report.totals(level)["bytes_kept"] for level in levels]
    pruned = [report.totals(level)["bytes"] - k for level, k in zip(levels, kept, strict=True)]
    fig = go.Figure()
    fig.add_trace(go.Bar(y=levels, x=kept, name="kept", orientation="h", marker_color=KEPT_COLOR,
                         hovertemplate="%{y}: %{x:,} bytes kept<extra></extra>"))
    fig.add_trace(go.Bar(y=levels, x=pruned, name="pruned", orientation="h", marker_color=PRUNED_COLOR,
                         hovertemplate="%{y}: %{x:,} bytes pruned<extra></extra>"))
    fig.update_layout(title="Bytes kept and pruned at each level", barmode="stack", height=120 + 40 * len(levels),
                      margin=dict(l=160, r=20, t=50, b=40), template="plotly_white",
                      yaxis=dict(autorange="reversed"), legend=dict(orientation="h", y=-0.3))
    return fig


def plan_figure(operators: pd.DataFrame, off_by: float, title: str) -> go.Figure:
    """A query plan as its operators, root at the top and each indented under its parent, with the rows
    Spark estimated (a diamond) and the rows the operator produced (a dot) on a log axis, joined by a line;
    an operator off by `off_by` or more is drawn red."""
    deepest = int(operators["depth"].max())
    # the axis' labels are right-aligned: a node moves right under its parent by the spaces after it
    labels = [f"{node} #{i}" + EM_SPACE * 2 * (deepest - int(d))
              for i, d, node in zip(operators["id"], operators["depth"], operators["node"], strict=True)]
    estimated = [None if pd.isna(v) else max(int(v), 1) for v in operators["estimated_rows"]]
    actual = [None if pd.isna(v) else max(int(v), 1) for v in operators["actual_rows"]]
    off = [not pd.isna(q) and q >= off_by for q in operators["q_error"]]
    colors = [PRUNED_COLOR if not bad else "#d62728" for bad in off]
    fig = go.Figure()
    for label, est, act, color in zip(labels, estimated, actual, colors, strict=True):
        if est is not None and act is not None:
            fig.add_trace(go.Scatter(x=[est, act], y=[label, label], mode="lines", line=dict(color=color, width=2),
                                     showlegend=False, hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=estimated, y=labels, mode="markers", name="estimated rows",
                             marker=dict(symbol="diamond", size=11, color=colors, line=dict(width=1, color="#333")),
                             hovertemplate="%{y}: %{x:,} rows estimated<extra></extra>"))
    fig.add_trace(go.Scatter(x=actual, y=labels, mode="markers", name="actual rows",
                             marker=dict(symbol="circle", size=9, color=KEPT_COLOR),
                             hovertemplate="%{y}: %{x:,} rows produced<extra></extra>"))
    fig.update_layout(title=title, height=140 + 28 * len(labels), template="plotly_white",
                      margin=dict(l=20, r=20, t=50, b=40), legend=dict(orientation="h", y=-0.15),
                      xaxis=dict(type="log", title="rows (log scale)"),
                      yaxis=dict(autorange="reversed", automargin=True, categoryorder="array", categoryarray=labels))
    return fig


def clear(output, wait: bool = False) -> None:
    """Clears a view's Output widget; outside IPython (a script) there is nothing shown to clear, and IPython's
    clear_output would print terminal escapes to stdout."""
    from IPython import get_ipython

    if get_ipython() is not None:
        output.clear_output(wait=wait)


def show(fig: go.Figure) -> None:
    """Displays a figure as Plotly's mime bundle, which JupyterLab and Voila render with their Plotly
    extension and no network, with HTML beside it for everything else: a notebook exported to HTML
    (nbconvert), a viewer without the extension. That HTML names plotly.js on Plotly's CDN (fetched once per page).
    Outside IPython (a script) nothing is shown: IPython's display would print the bundle's JSON to stdout; the
    view keeps the figure."""
    from IPython import get_ipython

    if get_ipython() is None:
        return
    display({PLOTLY_MIME: json.loads(fig.to_json()),
             "text/html": fig.to_html(full_html=False, include_plotlyjs="cdn"),
             "text/plain": f"<plotly figure: {fig.layout.title.text}>"}, raw=True)


def distribution_figure(sketch, type_name: str, title: str, bins: int = 20) -> go.Figure:
    """The column's values as a histogram of `bins` equal-width bins between its min and max, each bar the
    share of the values read from the KLL sketch's CDF (so within the sketch's rank error; a sketch
    imported from Spark's histogram holds shares, not counts), the quartiles marked by dotted lines and
    named in the title."""
    low, high = float(sketch.low), float(sketch.high)
    whole = sketch.family is SketchFamily.BIGINT
    edges = np.linspace(low, high, bins + 1) if high > low else np.array([low, high])
    below = [sketch.fraction_below(math.ceil(e) if whole else float(e), False) for e in edges]
    below[-1] = 1.0  # the last bin holds the maximum
    shares = [max(0.0, b - a) for a, b in pairwise(below)] if high > low else [1.0]
    middles = [(a + b) / 2 for a, b in pairwise(edges)] if high > low else [low]
    ranges = [f"{column_value(math.ceil(a) if whole else a, type_name)} to {column_value(b, type_name)}"
              for a, b in pairwise(edges)] if high > low else [str(column_value(low, type_name))]
    fig = go.Figure(go.Bar(x=[_plotted(column_value(m, type_name)) for m in middles], y=shares,
                           marker_color="#4c78a8", customdata=ranges,
                           hovertemplate="%{customdata}: about %{y:.1%} of the values<extra></extra>"))
    quartiles = sketch.quartiles() or []
    for value in quartiles:
        fig.add_shape(type="line", xref="x", yref="paper", x0=_plotted(column_value(value, type_name)),
                      x1=_plotted(column_value(value, type_name)), y0=0, y1=1,
                      line=dict(color="#f58518", dash="dot"))
    named = ", ".join(f"{n} {column_value(v, type_name)}" for n, v in zip(("Q1", "median", "Q3"), quartiles, strict=True))
    fig.update_layout(title=f"{title}<br><sup>{named}</sup>" if named else title, height=320, bargap=0.02,
                      margin=dict(l=60, r=20, t=70, b=50), template="plotly_white",
                      xaxis=dict(title="value"), yaxis=dict(title="share of the values", tickformat=".0%"))
    return fig


def quartiles_figure(frame: pd.DataFrame, type_name: str, title: str) -> go.Figure:
    """One box per partition from its sketch: Q1, median and Q3 as the box, the 5th and 95th percentiles as
    the whiskers (min and max would dwarf the box of a long-tailed column), so a shift between partitions
    shows at a glance."""
    def numbers(values):
        return [_plotted(v) for v in values]

    fig = go.Figure(go.Box(x=list(frame["partition"]), q1=numbers(frame["q1"]), median=numbers(frame["median"]),
                           q3=numbers(frame["q3"]), lowerfence=numbers(frame["p05"]), upperfence=numbers(frame["p95"]),
                           marker_color="#4c78a8", name="quartiles"))
    fig.update_layout(title=f"{title}<br><sup>box: Q1 to Q3 with the median; whiskers: 5th to 95th percentile</sup>",
                      height=340, margin=dict(l=60, r=20, t=60, b=90), template="plotly_white",
                      xaxis=dict(title="partition", type="category"), yaxis=dict(title=type_name), showlegend=False)
    return fig


def _plotted(value):
    """A statistic's value as plotly draws it on a value axis (dates and instants as datetimes)."""
    if isinstance(value, Date):
        return value.to_date().isoformat()
    if isinstance(value, Timestamp):
        return value.to_datetime().isoformat(sep=" ")
    return float(value)



def _say_in_panel(fig: go.Figure, row: int, text: str) -> None:
    """`text` in the middle of subplot `row`, placed on the page: a panel without a trace draws no axes, and an
    annotation placed on its axes' domain lands at the top of the figure (plotly.js), over the others."""
    low, high = fig.layout[f"yaxis{row}"].domain
    fig.add_annotation(text=text, xref="paper", yref="paper", x=0.5, y=(low + high) / 2, showarrow=False,
                       font=dict(color="#777"))


def history_figure(history: pd.DataFrame, title: str, along: str = "recorded_at") -> go.Figure:
    """A column's kept states over time: the null fraction, the distinct values, where the states have
    sketches the median with Q1 to Q3 shaded, and the PSI of each state against the one before it (sketches,
    or the top values skew reports kept); a point per state, its write ID and cause on hover. `along` is the
    x axis: the time each state was stored, or "partition" for the latest state of each partition."""
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=4, cols=1, shared_xaxes=True, vertical_spacing=0.05,
                        subplot_titles=("null fraction", "distinct values", "median (Q1 to Q3)",
                                        "PSI against the partition before" if along == "partition"
                                        else "PSI against the state before"))
    when = list(history[along])
    hover = [f"write {w if w is not None else '-'}: {c}" for w, c in zip(history["write_id"], history["cause"], strict=True)]
    if "accurate" in history:  # a state that no longer describes its partition: hollow, with the reason
        hover = [h if ok is not False else f"{h}<br>not accurate now: {why}"
                 for h, ok, why in zip(hover, history["accurate"], history["reason"], strict=True)]
    symbols = ["circle-open" if ok is False else "circle" for ok in history.get("accurate", [True] * len(history))]
    fig.add_trace(go.Scatter(x=when, y=list(history["null_fraction"]), mode="lines+markers", name="null fraction",
                             marker=dict(symbol=symbols, size=8), customdata=hover,
                             hovertemplate="%{y:.2%}<br>%{customdata}<extra></extra>"), row=1, col=1)
    fig.add_trace(go.Scatter(x=when, y=list(history["ndv"]), mode="lines+markers", name="distinct values",
                             marker=dict(symbol=symbols, size=8), customdata=hover,
                             hovertemplate="%{y:,}<br>%{customdata}<extra></extra>"), row=2, col=1)
    sketched = history[history["median"].notna()]
    if len(sketched):
        at = list(sketched[along])
        fig.add_trace(go.Scatter(x=at, y=[_plotted(v) for v in sketched["q3"]], mode="lines", line=dict(width=0),
                                 showlegend=False, hoverinfo="skip"), row=3, col=1)
        fig.add_trace(go.Scatter(x=at, y=[_plotted(v) for v in sketched["q1"]], mode="lines", line=dict(width=0),
                                 fill="tonexty", fillcolor="rgba(76,120,168,0.25)", showlegend=False,
                                 hoverinfo="skip"), row=3, col=1)
        fig.add_trace(go.Scatter(x=at, y=[_plotted(v) for v in sketched["median"]], mode="lines+markers",
                                 name="median"), row=3, col=1)
    else:  # an empty panel says why
        _say_in_panel(fig, 3, "no KLL sketch kept (hive.stats.kll.enable, or the table's colstats.kll.enable)")
    shifted = history[history["psi"].notna()]
    if not len(shifted):
        _say_in_panel(fig, 4, "no PSI: it needs KLL sketches or skew reports' top values in two states")
    if len(shifted):
        fig.add_trace(go.Scatter(x=list(shifted[along]), y=list(shifted["psi"]), mode="lines+markers",
                                 name="PSI",
                                 customdata=[h for h, kept in zip(hover, history["psi"].notna(), strict=True) if kept],
                                 hovertemplate="PSI %{y:.3f}<br>%{customdata}<extra></extra>"), row=4, col=1)
    fig.update_layout(title=title, height=780, margin=dict(l=60, r=20, t=70, b=40), template="plotly_white",
                      showlegend=False)
    if along == "recorded_at":  # the kept states' times are UTC
        fig.update_xaxes(title_text="recorded (UTC)", row=4, col=1)
    fig.update_yaxes(tickformat=".2~%", rangemode="tozero", row=1, col=1)
    fig.update_yaxes(rangemode="tozero", row=2, col=1)  # a steady count reads as steady, not as noise
    fig.update_yaxes(rangemode="tozero", tickformat=".2~g", row=4, col=1)
    return fig


def shuffle_tasks_figure(tasks: pd.DataFrame, title: str, split: set[int] | None = None,
                         split_rows: float | None = None) -> go.Figure:
    """A shuffle's tasks, largest first: predicted output rows as bars (red where AQE's skew join would split
    the task), measured rows beside them once counted, and the rows past which AQE splits as a line."""
    ordered = tasks.sort_values("predicted_rows", ascending=False)
    labels = [f"task {p}" for p in ordered["partition"]]
    split = split or set()
    fig = go.Figure()
    fig.add_trace(go.Bar(x=labels, y=ordered["predicted_rows"], name="predicted rows",
                         marker_color=["#e45756" if p in split else "#4c78a8" for p in ordered["partition"]],
                         hovertemplate="%{x}: %{y:,.0f} rows predicted<extra></extra>"))
    if ordered["actual_rows"].notna().any():
        fig.add_trace(go.Bar(x=labels, y=ordered["actual_rows"].astype("float"), name="rows as Spark placed them",
                             marker_color="#54a24b", hovertemplate="%{x}: %{y:,.0f} rows counted<extra></extra>"))
    tallest = float(ordered["predicted_rows"].max()) if len(ordered) else 0.0
    if split_rows is not None and split_rows <= 2 * tallest:
        fig.add_hline(y=split_rows, line_dash="dash", line_color="#e45756",
                      annotation_text="AQE splits a task past this", annotation_position="top right")
    elif split_rows is not None:  # far above every bar: drawn, it would flatten them
        title += (f"<br><sup>AQE splits a task past about {split_rows:,.0f} rows, "
                  f"{split_rows / max(tallest, 1):,.0f}x the largest</sup>")
    fig.update_layout(title=title, height=340, margin=dict(l=60, r=20, t=50, b=60), template="plotly_white",
                      barmode="group", yaxis=dict(title="output rows", tickformat=",d"),
                      legend=dict(orientation="h", y=-0.25))
    return fig
