"""Notebooks run under nbval each in a lab folder of its own, never the user's ./.colstats: a notebook's kernel
starts with $COLSTATS_HOME set to its folder, so what one notebook made is not another's (running beside each
other or one after another in a worker)."""
import copy
import os
import tempfile

import nbformat

import pytest

os.environ["PLOOMBER_STATS_ENABLED"] = "false"
_HOMES: dict[str, str] = {}


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Before the notebook's first cell sets it up (nbval starts the kernel then), its own home."""
    notebook = item.parent.nodeid if item.parent is not None else item.nodeid
    if notebook not in _HOMES:
        _HOMES[notebook] = os.path.join(tempfile.mkdtemp(prefix="colstats-notebooks-"), "lab")
    os.environ["COLSTATS_HOME"] = _HOMES[notebook]


_RAN: dict[str, object] = {}
_ARTIFACTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "artifacts", "notebooks")


def pytest_runtest_teardown(item):
    """Each cell's outputs as this run produced them, kept in a copy of its notebook in tests/artifacts/notebooks/
    (written after every cell, so a notebook that fails part-way keeps what ran): the docs' notebook pages show
    them."""
    outputs = getattr(item, "test_outputs", None)
    parent = item.parent
    if outputs is None or parent is None or not hasattr(parent, "nb"):
        return
    name = os.path.basename(str(parent.fspath))
    ran = _RAN.setdefault(name, copy.deepcopy(parent.nb))
    cell = ran.cells[next(i for i, c in enumerate(parent.nb.cells) if c is item.cell)]
    cell.outputs = [copy.deepcopy(out) for out in outputs]
    cell.execution_count = item.cell_num + 1  # the order this run executed the code cells in
    os.makedirs(_ARTIFACTS, exist_ok=True)
    nbformat.write(ran, os.path.join(_ARTIFACTS, name))
