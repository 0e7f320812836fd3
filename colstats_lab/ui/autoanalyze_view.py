"""The auto-analyze workers as the dashboard's landing shows them: their latest rounds, and the queue (what the
next round would analyze, most stale first, under the latest round's options). Nothing when no worker ever ran."""
from __future__ import annotations

import datetime as dt
import json

from ..analyze.autoanalyze import AutoAnalyzeOptions, DueOwner, share
from . import format as fmt

SHOWN = 10


def autoanalyze_html(rounds: list[dict], queued: tuple[AutoAnalyzeOptions, list[DueOwner]] | None) -> str:
    """`lab.autoanalyze.rounds()` and `lab.autoanalyze.queue()` as the landing shows them."""
    if not rounds or queued is None:
        return ""
    options, queue = queued
    lines = "".join(f"<li>{_round(r)}</li>" for r in rounds)
    waiting = "".join(f"<li>{fmt.escape(d.describe())}</li>" for d in queue[:SHOWN])
    more = f"<li>… and {len(queue) - SHOWN:,} more</li>" if len(queue) > SHOWN else ""
    how = (f"threshold {share(options.threshold)}, mode {options.mode}, "
           f"{', '.join(options.databases) if options.databases else 'every database'}")
    said = (f"<b>Queue</b> ({fmt.counted(len(queue), 'partition')} due, most stale first; {fmt.escape(how)}):"
            f"<ul>{waiting}{more}</ul>" if queue else f"<b>Queue</b>: nothing due ({fmt.escape(how)}).")
    return f'<div class="colstats-workers"><b>Auto-analyze</b>, latest rounds:<ul>{lines}</ul>{said}</div>'



def _round(r: dict) -> str:
    started = dt.datetime.fromtimestamp(r["started_at"], dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    who = fmt.escape(r["worker"])
    if r["ended_at"] is None:
        return f"{started} by {who}: running, or its worker stopped"
    tables = {t["table"] for t in json.loads(r["tables"] or "[]") if "owners" in t}
    text = (f"{started} by {who}: {r['analyzed']:,} of {r['due']:,} due analyzed in {fmt.counted(len(tables), 'table')}, "
            f"{r['ended_at'] - r['started_at']:.1f} s")
    if r["left_for_later"]:
        text += f"; {r['left_for_later']:,} left for the next round"
    if r["failed"]:
        text += f"; {r['failed']} failed"
    return text
