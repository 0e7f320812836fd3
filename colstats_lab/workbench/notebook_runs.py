"""Running a notebook's cells in a fresh kernel without the client sleeping through a reply
(`colstats-lab execute`).

A notebook whose cells show widgets can stall `jupyter nbconvert --execute` (nbclient issue 312): measured
here on the quickstart, 1 run in 2 stopped at its `%%analyze` cell with the kernel idle, the cell answered,
and nbconvert waiting in one ZMQ poll of the shell channel as long as the cell's whole timeout (600 s). The
kernel waits on nothing; the client misses the reply's wake-up while the cell's widget messages arrive.
Waiting in slices of a second costs nothing and bounds a missed wake-up to that second."""
from __future__ import annotations

import time
from queue import Empty
from typing import Any

import nbformat
from nbclient import NotebookClient

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


def execute_file(path: str, output: str, timeout: int, directory: str) -> int:
    """Runs the notebook at `path` (in `directory`) and writes it with its outputs to `output`; returns the
    number of code cells run."""
    notebook = nbformat.read(path, as_version=4)
    run_notebook(notebook, directory, timeout)
    nbformat.write(notebook, output)
    return sum(cell.cell_type == "code" for cell in notebook.cells)
