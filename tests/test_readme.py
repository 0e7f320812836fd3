"""The README's quick start, as a newcomer follows it: its notebook cells run in a real kernel and end
on the statistics view of the demo table."""
from __future__ import annotations

import datetime as dt
import os
import re
import textwrap

import nbformat
import pytest
from kernel_runs import run_notebook
from served import ARTIFACTS

pytestmark = pytest.mark.slow  # the full lane only: a real kernel starting Spark

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WIDGET = "application/vnd.jupyter.widget-view+json"


def _quick_start_cells() -> list[str]:
    with open(os.path.join(ROOT, "README.md")) as f:
        section = f.read().split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return [textwrap.dedent(block).strip() for block in re.findall(r"```python\n(.*?)```", section, re.S)]


def _write_timing(notebook, started: dt.datetime) -> None:
    """When the kernel started, each cell ran and the kernel was shut down, in tests/artifacts: one CI run
    took 617 s here instead of about 16 s, and this says which phase to look at when it happens again."""
    ended = dt.datetime.now(dt.UTC)
    lines = [f"test started {started.isoformat()}"]
    for index, cell in enumerate(notebook.cells):
        timing = cell.metadata.get("execution", {})
        lines.append(f"cell {index}: input {timing.get('iopub.execute_input', '-')}, "
                     f"reply {timing.get('shell.execute_reply', '-')}")
    lines.append(f"client returned {ended.isoformat()} ({(ended - started).total_seconds():.1f} s in all)")
    os.makedirs(ARTIFACTS, exist_ok=True)
    with open(os.path.join(ARTIFACTS, "readme_timing.txt"), "w") as out:
        out.write("\n".join(lines) + "\n")


def test_the_quick_start_reaches_a_statistics_view(tmp_path, monkeypatch):
    cells = _quick_start_cells()
    assert len(cells) == 2 and cells[1].startswith("%%analyze")
    with open(os.path.join(ROOT, "Makefile")) as f:
        assert re.search(r"^lab:", f.read(), re.M)  # step 1's command exists
    monkeypatch.setenv("COLSTATS_HOME", str(tmp_path / "lab"))
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(code) for code in cells]
    started = dt.datetime.now(dt.UTC)
    try:
        run_notebook(notebook, str(tmp_path), timeout=600)
    finally:
        _write_timing(notebook, started)
    outputs = notebook.cells[-1].outputs
    printed = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "Analyzed default.sales" in printed and "140000 rows" in printed.replace(",", "")
    shown = [o for o in outputs if o.output_type == "execute_result"]
    assert len(shown) == 1 and WIDGET in shown[0].data  # the statistics view, once, as the cell's value
    assert "StatsView" in shown[0].data["text/plain"]
