"""pyproject.toml's ranges, the tested versions in requirements.lock and environment.yml agree, and the
built wheel works on its own."""
import os
import re
import subprocess
import sys
import sysconfig
import tomllib
import urllib.request
import zipfile

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version
from served import free_port, serving

from colstats_lab.demo import build_demo

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _requirements_from_pyproject() -> list[Requirement]:
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    return [Requirement(text) for text in project["dependencies"] + project["optional-dependencies"]["test"]]


def _locked() -> dict[str, Version]:
    with open(os.path.join(ROOT, "requirements.lock")) as f:
        pins = [line.strip().split("==") for line in f if line.strip() and not line.startswith("#")]
    assert all(len(pin) == 2 for pin in pins), "every line of the lock is name==version"
    return {canonicalize_name(name): Version(version) for name, version in pins}


def test_every_dependency_is_a_range_the_locked_version_meets():
    locked = _locked()
    for requirement in _requirements_from_pyproject():
        assert any(spec.operator == ">=" for spec in requirement.specifier), f"{requirement} has no lower bound"
        assert not any(spec.operator == "==" for spec in requirement.specifier), f"{requirement} forces a version"
        version = locked.get(canonicalize_name(requirement.name))
        assert version is not None, f"{requirement.name} is not in requirements.lock"
        assert requirement.specifier.contains(version), f"the locked {requirement.name} {version} is outside {requirement}"


def test_the_tested_environment_is_the_lock():
    """What make install put in the venv these tests run in is what requirements.lock says."""
    from importlib.metadata import version as installed
    for name, version in _locked().items():
        assert Version(installed(name)) == version, name


def test_environment_yml_installs_the_lock_and_the_package():
    with open(os.path.join(ROOT, "environment.yml")) as f:
        text = f.read()
    assert re.search(r"^\s+- -r requirements\.lock\s*$", text, re.M)
    assert re.search(r"^\s+- -e \.\[test,docs\]\s*$", text, re.M)  # the extras make install takes


def test_python_versions_pyspark_supports_are_admitted():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        admitted = SpecifierSet(tomllib.load(f)["project"]["requires-python"])
    assert all(admitted.contains(v) for v in ("3.11", "3.12", "3.13", "3.14"))


def test_environment_yml_brings_java_17():
    with open(os.path.join(ROOT, "environment.yml")) as f:
        assert re.search(r"^\s*- openjdk=17\s*$", f.read(), re.M)


@pytest.mark.slow
def test_the_built_wheel_serves_the_dashboard_from_a_fresh_venv(tmp_path, lab):
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist), ROOT], check=True,
                   capture_output=True, timeout=300)
    (wheel,) = dist.glob("colstats_lab-*.whl")
    assert "colstats_lab/workbench/dashboard.ipynb" in zipfile.ZipFile(wheel).namelist()
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    # the dependencies come from this environment (a path file), the package only from the wheel
    with open(os.path.join(site, "tested_dependencies.pth"), "w") as f:
        f.write(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)], check=True,
                   capture_output=True, timeout=300)
    where = subprocess.run([str(python), "-c", "import colstats_lab.cli as c; print(c.DASHBOARD_NOTEBOOK)"],
                           check=True, capture_output=True, text=True, cwd=str(tmp_path)).stdout.strip()
    assert where.startswith(site) and os.path.exists(where)

    build_demo(lab, rows_per_day=500)  # the dashboard's demo table is there: no demo build
    port = free_port()
    command = [str(venv / "bin" / "colstats-lab"), "--home", lab.home, "dashboard", "--port", str(port)]
    env = {**os.environ, "PLOOMBER_STATS_ENABLED": "false",
           # the dependencies' data files (Voila's templates) are this environment's too
           "JUPYTER_PATH": os.path.join(sys.prefix, "share", "jupyter")}
    with serving(command, port, str(tmp_path / "dashboard.log"), timeout=120, env=env, cwd=str(tmp_path)) as url:
        with urllib.request.urlopen(url, timeout=240) as response:
            page = response.read().decode()
        assert response.status == 200
        # the notebook ran in a kernel of that venv: the dashboard's widget, its title in the text beside it
        assert "application/vnd.jupyter.widget-view+json" in page
        assert "Dashboard(children=(HTML(value=" in page and "\\u003ecolstats_lab\\u003c" in page, page[:2000]
