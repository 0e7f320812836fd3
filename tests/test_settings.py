"""The one table of settings (`colstats_lab.settings.SETTINGS`) is what a lab answers and what the docs list:
each default is what a new lab says, each check refuses a bad value in one line, and every setting the code
reads by name is in the table."""
from __future__ import annotations

import os
import re

import pytest

from colstats_lab import InvalidArgument, Lab
from colstats_lab.settings import BOOLEAN, COUNT, SECONDS, SETTINGS

PACKAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "colstats_lab")


@pytest.fixture
def lab(tmp_path):
    lab = Lab(home=str(tmp_path / "lab"))
    yield lab
    lab.reset()
    lab.close()


def test_a_new_lab_answers_every_setting_with_the_tables_default(lab):
    listed = lab.settings()
    assert list(listed["name"]) == [s.name for s in SETTINGS]
    for setting in SETTINGS:
        assert lab.get(setting.name) == setting.default, setting.name
    assert not listed["changed"].any()


def test_a_changed_setting_is_listed_as_changed_and_reset_puts_the_default_back(lab):
    lab.set("colstats.runs.keep", "7")
    lab.set("hive.txn.timeout", 20)
    listed = lab.settings().set_index("name")
    assert listed.loc["colstats.runs.keep", "value"] == 7 and listed.loc["colstats.runs.keep", "changed"]
    assert listed.loc["hive.txn.timeout", "value"] == 20.0
    assert sorted(lab.reset()) == ["colstats.runs.keep", "hive.txn.timeout"]
    assert lab.get("colstats.runs.keep") == 1000 and lab.get("hive.txn.timeout") == 300.0


@pytest.mark.parametrize("takes, bad", [(BOOLEAN, "maybe"), (COUNT, "many"), (SECONDS, "-1")])
def test_each_checked_setting_refuses_a_bad_value_naming_its_key(lab, takes, bad):
    checked = [s for s in SETTINGS if s.takes == takes]
    assert checked
    for setting in checked:
        with pytest.raises(InvalidArgument, match=re.escape(setting.name)):
            lab.set(setting.name, bad)
        assert lab.get(setting.name) == setting.default


def test_every_setting_the_code_reads_by_name_is_in_the_table():
    read = set()
    for folder, _, files in os.walk(PACKAGE):
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(folder, name)) as f:
                    read |= set(re.findall(r"""\b(?:lab|session|self)\.get\(["']((?:hive|metastore|colstats)\.[a-z_.]+)["']\)""",
                                           f.read()))
    assert read, "the pattern finds the reads"
    assert read <= {s.name for s in SETTINGS}, read - {s.name for s in SETTINGS}
