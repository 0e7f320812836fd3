"""Set-up checks: a missing or too-old Java is one clear line, not a JVM stack trace."""
from __future__ import annotations

import os
import stat
import subprocess
import sys


def _check_java(env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "colstats_lab.cli", "check-java"], env=env,
                          capture_output=True, text=True, timeout=60)


def test_missing_java_is_reported_in_one_line(tmp_path):
    env = {**os.environ, "JAVA_HOME": str(tmp_path / "no-such-jdk"), "PATH": "/nonexistent"}
    out = _check_java(env)
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "Java 17 or newer is needed" in lines[0] and "openjdk-17-jre-headless" in lines[0]


def test_old_java_is_reported_with_its_version(tmp_path):
    fake_home = tmp_path / "jdk8"
    (fake_home / "bin").mkdir(parents=True)
    java = fake_home / "bin" / "java"
    java.write_text('#!/bin/sh\necho \'openjdk version "1.8.0_392"\' >&2\n')
    java.chmod(java.stat().st_mode | stat.S_IEXEC)
    out = _check_java({**os.environ, "JAVA_HOME": str(fake_home)})
    assert out.returncode == 1
    assert "Java 8 found, but Spark 4 needs Java 17 or newer" in out.stderr


def test_this_machines_java_passes():
    assert _check_java(dict(os.environ)).returncode == 0
