"""The auto-analyze workers as the dashboard's landing shows them: their latest rounds, and the queue (what the
next round would analyze, most stale first, under the latest round's options). Nothing when no worker ever ran."""
from __future__ import annotations

import pandas as pd

from ..analyze.autoanalyze import share
from . import format as fmt

SHOWN = 10


def autoanalyze_html(rounds: pd.DataFrame, queue: pd.DataFrame) -> str:
    """`lab.autoanalyze.rounds()` and `lab.autoanalyze.queue()` as the landing shows them."""
    options = queue.attrs.get("options")
    if rounds.empty or options is None:
        return ""
    lines = "".join(f"<li>{_round(r)}</li>" for r in rounds.to_dict("records"))
    waiting = "".join(f"<li>{fmt.escape(said)}</li>" for said in queue["said"][:SHOWN])
    more = f"<li>… and {len(queue) - SHOWN:,} more</li>" if len(queue) > SHOWN else ""
    how = (f"threshold {share(options.threshold)}, mode {options.mode}, "
           f"{', '.join(options.databases) if options.databases else 'every database'}")
    said = (f"<b>Queue</b> ({fmt.counted(len(queue), 'partition')} due, most stale first; {fmt.escape(how)}):"
            f"<ul>{waiting}{more}</ul>" if len(queue) else f"<b>Queue</b>: nothing due ({fmt.escape(how)}).")
    return f'<div class="colstats-workers"><b>Auto-analyze</b>, latest rounds:<ul>{lines}</ul>{said}</div>'


def _round(r: dict) -> str:
    started = r["started_at"].strftime("%Y-%m-%d %H:%M:%S UTC")
    who = fmt.escape(r["worker"])
    if pd.isna(r["ended_at"]):
        return f"{started} by {who}: running, or its worker stopped"
    text = (f"{started} by {who}: {r['analyzed']:,} of {r['due']:,} due analyzed in "
            f"{fmt.counted(len(r['tables']), 'table')}, {r['seconds']:.1f} s")
    if r["left_for_later"]:
        text += f"; {r['left_for_later']:,} left for the next round"
    if r["failed"]:
        text += f"; {r['failed']} failed"
    return text
