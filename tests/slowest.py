"""The slowest tests of a run, from the JUnit XML pytest keeps (`make test-all` writes tests/artifacts/junit.xml):
each test's whole time (set-up, call and tear-down), and the run's sum.

    python tests/slowest.py                          # the ten slowest of the last full lane
    python tests/slowest.py tests/artifacts/junit.xml 25
"""
from __future__ import annotations

import os
import sys
import xml.etree.ElementTree as ET

DEFAULT_REPORT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "artifacts", "junit.xml")


def durations(report: str) -> list[tuple[float, str]]:
    """(seconds, test id) of every test in the report, slowest first."""
    root = ET.parse(report).getroot()
    tests = [(float(case.get("time") or 0.0), f"{case.get('classname')}::{case.get('name')}")
             for case in root.iter("testcase")]
    return sorted(tests, reverse=True)


def main(argv: list[str]) -> int:
    report = argv[0] if argv else DEFAULT_REPORT
    count = int(argv[1]) if len(argv) > 1 else 10
    if not os.path.exists(report):
        print(f"no report at {report}: run `make test-all` (or pytest --junitxml={report}) first")
        return 1
    tests = durations(report)
    print(f"{len(tests):,} tests, {sum(t for t, _ in tests) / 60:.1f} min of test time (both workers' together)")
    for seconds, test in tests[:count]:
        print(f"{seconds:7.1f} s  {test}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
