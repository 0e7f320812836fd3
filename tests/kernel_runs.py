"""The tests run notebooks as users do with `colstats-lab execute`: through the package's runner."""
from colstats_lab.workbench.notebook_runs import run_notebook

__all__ = ["run_notebook"]
