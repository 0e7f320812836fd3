"""The join skew view: both sides' hot keys with their rows, output rows and shuffle task; the predicted
tasks as a chart (largest first, with the rows past which AQE's skew join splits a task); the
recommendation in one sentence with the setting or code; and "Run it", which counts each task's rows as
Spark places them and draws them beside the prediction."""
from __future__ import annotations

import ipywidgets as widgets

from ..skew.join import ShuffleSkewReport
from . import charts
from . import format as fmt
from .widgets import View, html_table, refusal, register


def _rows(value: float) -> str:
    """Rows as counted (4,000) or, where a sketch gives an average multiplicity, as estimated (0.99, not 0)."""
    return fmt.count(int(value)) if float(value).is_integer() or abs(value) >= 100 else f"{value:,.2f}"


@register("join_skew")
class JoinSkewView(View):
    def __init__(self, lab, left: str, left_key: str, right: str, right_key: str, where: str | None = None,
                 how: str = "inner", run: bool = False, report: ShuffleSkewReport | None = None):
        super().__init__()
        self.lab = lab
        self.arguments = (left, left_key, right, right_key, where, how)
        self.result = report or lab.tables[left].join_skew(right, left_key, right_key, where=where, how=how, run=run)
        self.run_button = widgets.Button(description="Run it", icon="play",
                                         tooltip="count each task's rows as Spark places them")
        self.run_button.on_click(lambda _: self.run())
        self.chart = widgets.Output()
        self.keys_html = widgets.HTML()
        self.recommendation_html = widgets.HTML()
        self.children = [self.header, self.recommendation_html, self.run_button, self.message, self.chart,
                         self.keys_html]
        self.refresh()

    def run(self) -> None:
        """Counts the tasks' rows in Spark (one aggregation per side) and redraws."""
        left, left_key, right, right_key, where, how = self.arguments
        self.message.value = ""
        try:
            self.result = self.lab.tables[left].join_skew(right, left_key, right_key, where=where, how=how, run=True)
        except Exception as exc:  # shown as one line, as every view does
            self.message.value = refusal(exc).value
            return
        self.refresh()

    def refresh(self) -> None:
        report = self.result
        left, right = report.sides
        largest = report.largest
        self.header.value = (
            f'<div class="colstats-header"><b>{fmt.escape(left.table)}.{fmt.escape(left.key)}</b> {report.how} join '
            f'<b>{fmt.escape(right.table)}.{fmt.escape(right.key)}</b> · {report.settings.partitions} shuffle tasks · '
            f'largest task {int(largest["partition"])}: {fmt.count(int(largest["predicted_rows"]))} rows predicted, '
            f'{report.skew_ratio:.1f}x the median</div>'
            f'<div class="colstats-muted">left: {fmt.escape(left.source)}<br>right: {fmt.escape(right.source)}</div>')
        code = f"<pre>{fmt.escape(report.code)}</pre>" if report.code else ""
        notes = "".join(f'<div class="colstats-muted">{fmt.escape(note)}</div>' for note in report.notes)
        self.recommendation_html.value = (f'<div class="colstats-recommendation"><b>Recommendation</b>: '
                                          f'{fmt.escape(report.recommendation)}{code}{notes}</div>')
        split = set(report.split_by_aqe())
        self.figure = charts.shuffle_tasks_figure(report.tasks, "Predicted rows per shuffle task", split,
                                                  self._split_rows())
        charts.clear(self.chart)
        with self.chart:
            charts.show(self.figure)
        keys = report.hot_keys.head(20)
        shown = keys.assign(key=keys["key"].map(str), left_rows=keys["left_rows"].map(_rows),
                            right_rows=keys["right_rows"].map(_rows), output_rows=keys["output_rows"].map(_rows),
                            task=keys["partition"])
        self.keys_html.value = html_table(shown[["key", "left_rows", "right_rows", "output_rows", "task"]],
                                          numeric={"left_rows", "right_rows", "output_rows", "task"})

    def _split_rows(self) -> float | None:
        """The output rows of a task whose bigger side reaches AQE's limit, for the chart's line (None: AQE
        would split nothing of this join type)."""
        report = self.result
        settings = report.settings
        if not (settings.adaptive and settings.skew_join) or report.how == "full":
            return None
        tasks = report.tasks
        side = "left" if report.how in ("inner", "left") else "right"
        limit = max(settings.skew_factor * float(tasks[f"{side}_bytes"].median()), settings.skew_threshold_bytes)
        per_byte = (tasks["predicted_rows"] / tasks[f"{side}_bytes"].where(tasks[f"{side}_bytes"] > 0)).median()
        return None if per_byte != per_byte else float(limit * per_byte)
