"""The pins in pyproject.toml and environment.yml agree, and the built wheel works on its own."""
import os
import re
import subprocess
import sys
import sysconfig
import tomllib
import urllib.request
import zipfile

from colstats_lab.demo import build_demo
from served import free_port, serving

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


def test_the_built_wheel_serves_the_dashboard_from_a_fresh_venv(tmp_path, lab):
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist), ROOT], check=True,
                   capture_output=True, timeout=300)
    (wheel,) = dist.glob("colstats_lab-*.whl")
    assert "colstats_lab/ui/dashboard.ipynb" in zipfile.ZipFile(wheel).namelist()
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
        # the notebook ran in a kernel of that venv: the dashboard's widgets, its title among them
        assert "application/vnd.jupyter.widget-view+json" in page
        assert "colstats_lab \\u00b7 default" in page, page[:2000]
