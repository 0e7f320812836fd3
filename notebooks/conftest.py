"""Notebooks run under nbval each in a lab folder of its own, never the user's ./.colstats: a notebook's kernel
starts with $COLSTATS_HOME set to its folder, so what one notebook made is not another's (running beside each
other or one after another in a worker)."""
import os
import tempfile

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
