"""Running a notebook's cells in a fresh kernel without the client sleeping through a reply
(`colstats-lab execute`).

A notebook whose cells show widgets can stall `jupyter nbconvert --execute` (nbclient issue 312): measured
here on the quickstart, 1 run in 2 stopped at its `%%analyze` cell with the kernel idle, the cell answered,
and nbconvert waiting in one ZMQ poll of the shell channel as long as the cell's whole timeout (600 s). The
kernel waits on nothing; the client misses the reply's wake-up while the cell's widget messages arrive.
Waiting in slices of a second costs nothing and bounds a missed wake-up to that second."""
from __future__ import annotations

import re
import time
from dataclasses import dataclass
from queue import Empty
from typing import Any

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from ..errors import ColstatsError

SLICE_SECONDS = 1.0


def _sliced(get_msg):
    async def get_msg_in_slices(timeout: float | None = None) -> Any:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            remaining = SLICE_SECONDS if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                return await get_msg(timeout=min(SLICE_SECONDS, remaining))
            except Empty:
                if deadline is not None and time.monotonic() >= deadline:
                    raise
    return get_msg_in_slices


class SlicedWaitClient(NotebookClient):
    """nbclient's client, its shell and IOPub waits cut into one-second polls."""

    async def async_start_new_kernel_client(self):
        client = await super().async_start_new_kernel_client()
        for channel in (client.shell_channel, client.iopub_channel):
            channel.get_msg = _sliced(channel.get_msg)
        return client


def run_notebook(notebook, directory: str, timeout: int, **options) -> None:
    """Runs every cell of `notebook` in a fresh python3 kernel started in `directory`, filling in the outputs;
    a cell that raises raises here (nbclient's CellExecutionError). The kernel is shut down at once: a
    graceful shutdown of a kernel holding a Spark JVM has itself waited out long timeouts."""
    SlicedWaitClient(notebook, timeout=timeout, kernel_name="python3", shutdown_kernel="immediate",
                     resources={"metadata": {"path": directory}}, **options).execute()


@dataclass(frozen=True)
class FailedCell:
    """A code cell that raised: its number among the notebook's code cells (from 1), its first line, and the
    error's name and message."""

    number: int
    first_line: str
    error: str
    message: str

    def __str__(self) -> str:
        return f"cell {self.number} ({self.first_line!r}) raised {self.error}: {self.message}"


class NotebookFailed(ColstatsError):
    """A notebook whose cells raised: `failed` names each, `output` is where its outputs were written."""

    def __init__(self, failed: list[FailedCell], output: str):
        self.failed, self.output = failed, output
        super().__init__("; ".join(map(str, failed)))


def execute_file(path: str, output: str, timeout: int, directory: str, allow_errors: bool = False) -> int:
    """Runs the notebook at `path` (in `directory`) and writes it with its outputs to `output`; returns the
    number of code cells run. A cell that raises stops the run (every cell runs with `allow_errors`); the
    outputs made so far are written either way, and NotebookFailed names the cells that raised."""
    notebook = nbformat.read(path, as_version=4)
    try:
        run_notebook(notebook, directory, timeout, allow_errors=allow_errors)
    except CellExecutionError:
        pass  # the failed cell carries its error output: named below, after the outputs are written
    nbformat.write(notebook, output)
    failed = failed_cells(notebook)
    if failed:
        raise NotebookFailed(failed, output)
    return sum(cell.cell_type == "code" for cell in notebook.cells)


def failed_cells(notebook) -> list[FailedCell]:
    """The code cells whose outputs hold an error, in order."""
    failed = []
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    for number, cell in enumerate(code, 1):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                first = next((line for line in cell.source.splitlines() if line.strip()), "")
                message = re.sub(r"\x1b\[[0-9;]*m", "", str(out.get("evalue", ""))).strip().splitlines()
                failed.append(FailedCell(number, first[:80], str(out.get("ename", "Error")),
                                         message[0] if message else ""))
                break
    return failed
