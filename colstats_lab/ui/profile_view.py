"""The profile view: one card per column, its histogram as a small plot, its top values as bars, its figures and
its alerts as badges (each badge's tooltip says the rule), read from the statistics the table keeps (no Spark).
The same cards make the dashboard's Profile tab and `Profile.to_html`'s page; the view pages them, so a table
of hundreds of columns opens at once."""
from __future__ import annotations

import ipywidgets as widgets

from ..metastore.rows.levels import TABLE_LEVEL
from . import format as fmt
from .widgets import STYLE, LevelPicker, View, badge, partitions_found, register, tier_badge

CARDS_A_PAGE = 48

_CARD_STYLE = """<style>
.colstats-cards {display: grid; grid-template-columns: repeat(auto-fill, minmax(300px, 1fr)); gap: 10px;
                 font-family: system-ui, sans-serif; font-size: 12px; max-width: 100%;}
.colstats-card {border: 1px solid #ddd; border-radius: 6px; padding: 8px 10px; min-width: 0; overflow: hidden;}
.colstats-card h4 {margin: 0 0 2px 0; font-size: 14px; overflow-wrap: anywhere;}
.colstats-card .type {color: #666; font-size: 12px;}
.colstats-card dl {display: grid; grid-template-columns: auto 1fr; gap: 1px 8px; margin: 6px 0;}
.colstats-card dt {color: #666;} .colstats-card dd {margin: 0; text-align: right; font-variant-numeric: tabular-nums;
                                                     overflow-wrap: anywhere;}
.colstats-card .alert {background: #b26a00;} .colstats-card .note {color: #777; font-size: 11px;}
.colstats-top {display: grid; grid-template-columns: minmax(0, 1fr) 90px 44px; gap: 1px 6px; align-items: center;}
.colstats-top .v {overflow: hidden; text-overflow: ellipsis; white-space: nowrap;}
.colstats-top .b {height: 8px; background: #e0e0e0;} .colstats-top .b > span {display: block; height: 8px;
                                                                               background: #4c78a8;}
.colstats-top .s {text-align: right; font-variant-numeric: tabular-nums;}
</style>"""


def profile_cards(profile, start: int = 0, count: int | None = None) -> str:
    """The cards of `profile`'s columns from `start` (all, or `count` of them), with their style."""
    chosen = profile.profiles[start:None if count is None else start + count]
    return f'{STYLE}{_CARD_STYLE}<div class="colstats-cards">{"".join(_card(p) for p in chosen)}</div>'


def profile_page(profile) -> str:
    """A whole HTML page of the profile: its heading, its alerts' rules and every column's card."""
    from ..column_statistics.profile import ALERT_RULES

    title = f"Profile of {profile.table}" + ("" if profile.level == TABLE_LEVEL else f", {profile.level}")
    rules = "".join(f"<li><b>{fmt.escape(k)}</b>: {fmt.escape(v)}</li>" for k, v in ALERT_RULES.items())
    return (f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{fmt.escape(title)}</title></head>'
            f'<body style="font-family: system-ui, sans-serif; margin: 16px">'
            f'<h2>{fmt.escape(title)}</h2><p class="colstats-muted">{_summary(profile)}</p>'
            f'{profile_cards(profile)}<details><summary>Alert rules</summary><ul>{rules}</ul></details>'
            f'</body></html>')


def _summary(profile) -> str:
    alerts = sum(len(p.alerts) for p in profile.profiles)
    sampled = any(p.sampled for p in profile.profiles)
    return fmt.escape(f"{profile.rows:,} rows, {len(profile.profiles)} columns, {alerts} alerts; read from the "
                      "statistics the lab keeps, no scan" + ("; some figures from a sample (badged)" if sampled else ""))


def _card(p) -> str:
    badges = badge(p.accurate, p.reason) + tier_badge(p.sampled or None)
    alerts = "".join(f' <span class="colstats-badge alert" title="{fmt.escape(a.rule + ": " + a.evidence)}">'
                     f"{fmt.escape(a.kind)}</span>" for a in p.alerts)
    figures = [("rows", fmt.count(p.rows)),
               ("NULL", f"{fmt.count(p.nulls)} ({fmt.percent(p.null_fraction)})" if p.nulls is not None else "")]
    if p.nans:
        figures.append(("NaN", fmt.count(p.nans)))
    if p.ndv is not None:
        figures.append(("distinct", f"{fmt.count(p.ndv)} ({fmt.percent(p.distinct_fraction)})"))
    for name, value in (("min", p.min), ("max", p.max), ("mean", p.mean), ("std", p.std)):
        if value is not None:
            figures.append((name, fmt.number(value)))
    if p.quantiles:
        figures.append(("median", fmt.number(p.quantiles["median"])))
    if p.zeros is not None:  # 0 included, as ydata-profiling shows it; an estimate marked as one
        share = fmt.percent(p.zeros / p.values) if p.values else "-"
        figures.append(("zeros", f"{'' if p.zeros_exact else '≈ '}{fmt.count(p.zeros)} ({share})"))
    if p.avg_len is not None:
        figures.append(("length", f"avg {p.avg_len:.1f}, max {fmt.count(p.max_len)}"))
    if p.trues is not None:
        figures.append(("true / false", f"{fmt.count(p.trues)} / {fmt.count(p.falses)}"))
    listed = "".join(f"<dt>{fmt.escape(k)}</dt><dd>{fmt.escape(v)}</dd>" for k, v in figures)
    parts = [f'<h4>{fmt.escape(p.column)}</h4><div class="type">{fmt.escape(p.type)} {badges}{alerts}</div>',
             f"<dl>{listed}</dl>"]
    if p.histogram:
        parts.append(_histogram_svg(p.histogram))
    if p.length_histogram:
        parts.append('<div class="note">lengths</div>' + _histogram_svg(p.length_histogram, label="length histogram"))
    if p.top_values:
        parts.append(_top_values(p.top_values))
    if p.missing:
        parts.append(f'<div class="note">{fmt.escape(p.missing)}</div>')
    return f'<div class="colstats-card">{"".join(parts)}</div>'


def _histogram_svg(histogram: dict, width: int = 280, height: int = 70, label: str = "histogram") -> str:
    """The bins as bars in a small SVG (it scales to the card), the first and last edge under them; each bar's
    tooltip says its range and count, and the count's error."""
    counts, edges = histogram["counts"], histogram["edges"]
    top = max(counts) or 1
    step = width / len(counts)
    bars = []
    for i, c in enumerate(counts):
        h = (height - 14) * c / top
        tip = f"[{edges[i]}, {edges[i + 1]}): {c:,} rows (± {histogram['error']:,})"
        bars.append(f'<rect x="{i * step + 0.5:.1f}" y="{height - 14 - h:.1f}" width="{max(step - 1, 1):.1f}" '
                    f'height="{h:.1f}" fill="#4c78a8"><title>{fmt.escape(tip)}</title></rect>')
    labels = (f'<text x="0" y="{height - 2}" font-size="10" fill="#666">{fmt.escape(_short(edges[0]))}</text>'
              f'<text x="{width}" y="{height - 2}" font-size="10" fill="#666" text-anchor="end">'
              f'{fmt.escape(_short(edges[-1]))}</text>')
    return (f'<svg viewBox="0 0 {width} {height}" width="100%" preserveAspectRatio="none" role="img" '
            f'aria-label="{label}">{"".join(bars)}{labels}</svg>')


def _short(edge) -> str:
    return fmt.number(edge) if isinstance(edge, (int, float)) else str(edge)


def _top_values(shares: dict) -> str:
    rows = "".join(f'<span class="v" title="{fmt.escape(v)}">{fmt.escape(v)}</span>'
                   f'<span class="b"><span style="width:{min(s, 1.0) * 100:.1f}%"></span></span>'
                   f'<span class="s">{fmt.percent(s)}</span>' for v, s in shares.items())
    return f'<div class="colstats-top">{rows}</div>'


@register("profile")
class ProfileView(View):
    """A table's profile: a card per column at the table level or one partition, CARDS_A_PAGE cards a page.
    `.result` is the Profile."""

    def __init__(self, lab, table: str, partition: str | None = None):
        super().__init__()
        self.lab = lab
        self.handle = lab.tables[table]
        self.picker = LevelPicker("Level", TABLE_LEVEL, partitions_found(self.handle.inspect.partitions), partition)
        self.page = widgets.IntSlider(value=1, min=1, max=1, description="Page", continuous_update=False)
        self.cards = widgets.HTML()
        self.picker.dropdown.observe(lambda change: self.refresh(), names="value")
        self.page.observe(lambda change: self._show(), names="value")
        self.children = [self.header, self.picker.box, self.page, self.cards, self.message]
        self.refresh()

    def refresh(self) -> None:
        level = self.picker.dropdown.value
        self.result = self.handle.profile(None if level == TABLE_LEVEL else level)
        pages = max(1, -(-len(self.result.profiles) // CARDS_A_PAGE))
        self.page.max = pages
        self.page.layout.display = None if pages > 1 else "none"
        self.header.value = f'<div class="colstats-header">{_summary(self.result)}</div>'
        self._show()

    def _show(self) -> None:
        self.cards.value = profile_cards(self.result, (self.page.value - 1) * CARDS_A_PAGE, CARDS_A_PAGE)
