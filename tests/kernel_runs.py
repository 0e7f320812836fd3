"""Running a notebook's cells in a real kernel from a test, without the client sleeping through a reply.

nbclient waits for a cell's reply with one ZMQ poll as long as the cell's whole timeout. When the reply
arrives while a widget's comm messages are in flight, that poll can miss the wake-up and return only at its
deadline (nbclient issue 312): in CI a cell that replied after 2 s was seen 600 s later. Waiting in slices
of a second costs nothing and bounds a missed wake-up to that second."""
from __future__ import annotations

import time
from queue import Empty
from typing import Any

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
    async def async_start_new_kernel_client(self):
        client = await super().async_start_new_kernel_client()
        for channel in (client.shell_channel, client.iopub_channel):
            channel.get_msg = _sliced(channel.get_msg)
        return client


def run_notebook(notebook, directory: str, timeout: int, **options) -> None:
    """Runs every cell of `notebook` in a fresh python3 kernel started in `directory`, filling in the outputs;
    a cell that raises fails here. The kernel is shut down at once: a graceful shutdown of a kernel holding a
    Spark JVM has itself waited out long timeouts."""
    SlicedWaitClient(notebook, timeout=timeout, kernel_name="python3", shutdown_kernel="immediate",
                     resources={"metadata": {"path": directory}}, **options).execute()
