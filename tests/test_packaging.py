"""The pins in pyproject.toml and environment.yml agree."""
import os
import re
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _pins_from_pyproject() -> set[str]:
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    return set(project["dependencies"]) | set(project["optional-dependencies"]["test"])


def _pins_from_environment() -> set[str]:
    pins = set()
    with open(os.path.join(ROOT, "environment.yml")) as f:
        in_pip = False
        for line in f:
            if re.match(r"^\s*- pip:\s*$", line):
                in_pip = True
            elif in_pip and re.match(r"^\s{6}- ", line):
                item = line.strip()[2:]
                if not item.startswith("-e"):
                    pins.add(item)
    return pins


def test_environment_yml_pins_equal_pyproject():
    assert _pins_from_environment() == _pins_from_pyproject()


def test_every_dependency_is_pinned_to_a_version():
    for pin in _pins_from_pyproject():
        assert "==" in pin, f"{pin} is not pinned"


def test_environment_yml_brings_java_17():
    with open(os.path.join(ROOT, "environment.yml")) as f:
        assert re.search(r"^\s*- openjdk=17\s*$", f.read(), re.M)
