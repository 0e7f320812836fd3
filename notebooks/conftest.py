"""Notebooks run under nbval in a lab folder of their own, never the user's ./.colstats."""
import os
import tempfile

os.environ["COLSTATS_HOME"] = os.path.join(tempfile.mkdtemp(prefix="colstats-notebooks-"), "lab")
os.environ["PLOOMBER_STATS_ENABLED"] = "false"
