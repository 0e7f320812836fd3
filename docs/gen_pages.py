"""The site's pages made from the code at build time (mkdocs-gen-files runs this): the settings page from the
one table of settings, the command line from its argparse parser, the notebooks (with the outputs of the last
test run's nbval execution where it left them in tests/artifacts/notebooks/), and the gallery of the browser
tests' screenshots. Nothing here is written into docs/: the pages exist in the build only."""
from __future__ import annotations

import argparse
import glob
import inspect
import json
import os

import mkdocs_gen_files

from colstats_lab.cli import build_parser
from colstats_lab.settings import SETTINGS
from colstats_lab.workbench.magics import ColstatsMagics

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARTIFACTS = os.path.join(ROOT, "tests", "artifacts")
KEPT = os.path.join(ROOT, "docs", "assets", "gallery")
# the browser tests' screenshots, in the order a user meets them, with what each shows
SCREENSHOTS = [
    ("dashboard_landing.png", "The dashboard's landing: every table, the stalest first"),
    ("dashboard_statistics.png", "A table's Statistics tab"),
    ("dashboard_freshness.png", "Freshness: partitions by columns, the reason on hover"),
    ("dashboard_pruning.png", "Pruning: what a WHERE reads, level by level"),
    ("dashboard_drift.png", "Drift: a column's figures across partitions"),
    ("dashboard_metadata.png", "Drill's metadata levels"),
    ("dashboard_transactions.png", "Transactions: the ValidWriteIdList and the writers"),
    ("dashboard_profile.png", "The Profile tab"),
    ("dashboard_engines.png", "Engines: what Hive, Spark and the lab hold for one table"),
    ("dashboard_s3_table.png", "A table on an S3 store, fresh by ETag"),
    ("dashboard.png", "A table page after analyzing stale partitions"),
    ("profile_200_columns.png", "A profile of 200 columns"),
    ("report.png", "The standalone HTML report"),
    ("jupyterlab.png", "The views in JupyterLab"),
]


def _cell(value) -> str:
    text = "" if value is None else repr(value) if not isinstance(value, str) else value
    return text.replace("|", "\\|")


def settings_page() -> str:
    lines = ["# Settings", "",
             "Every setting `lab.set(name, value)` (or `SET name = value`) takes, with its default. "
             "`lab.settings()` lists the same table with each one's value in the lab now; "
             "`lab.reset(name)` (or `RESET`) puts one back. A `spark.*` name is Spark's own setting, "
             "passed to the lab's Spark session. This page is generated from `colstats_lab.settings.SETTINGS`, "
             "the table the lab itself takes its defaults and checks from.", "",
             ""]
    headings = {"Hive": "Hive's settings", "Drill": "Drill's metastore settings", "colstats_lab": "The lab's own"}
    for origin, heading in headings.items():
        lines += [f"## {heading}", "", "| setting | what it does | read by |", "|---|---|---|"]
        for s in (s for s in SETTINGS if s.origin == origin):
            summary = s.summary[:1].upper() + s.summary[1:]
            lines.append(f"| `{s.name}`<br>default `{_cell(s.default)}` | {_cell(summary)}. Takes {_cell(s.takes)}; "
                         f"held by {s.held}. | {_cell(s.reads)} |")
        lines.append("")
    return "\n".join(lines) + "\n"


def _subcommands(parser: argparse.ArgumentParser):
    for action in parser._actions:  # argparse keeps its subcommands only here
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                yield name, helps.get(name, ""), sub


def cli_page() -> str:
    parser = build_parser()
    lines = ["# Command line", "", " ".join(parser.description.split("\n\n")[0].split()), "",
             "Every command takes `--home`, `--metastore` and `--attach`, before or after its name. "
             "Exit codes: 0 done, 1 statistics not accurate or a table not analyzed (each named), "
             "2 bad input (the problem named in one line). Generated from the program's own parser.", "",
             "```text", parser.format_help().rstrip(), "```", ""]
    for name, summary, sub in _subcommands(parser):
        lines += [f"## {name}", "", f"{summary[0].upper() + summary[1:]}." if summary else "", "",
                  "```text", sub.format_help().rstrip(), "```", ""]
        for inner, inner_summary, inner_sub in _subcommands(sub):
            lines += [f"### {name} {inner}", "", inner_summary + ".", "",
                      "```text", inner_sub.format_help().rstrip(), "```", ""]
    return "\n".join(lines)


def magics_page() -> str:
    lines = ["# Magics", "",
             "`%load_ext colstats_lab` registers these on the last `Lab` created (or one on `$COLSTATS_HOME`). "
             "Each magic's value is its view, which is the cell's output when the magic ends the cell; its "
             "`.result` is what it shows. A `ColstatsError` shows as one line, without a traceback. "
             "Generated from the magics' own docstrings and argument parsers.", ""]
    for kind, prefix in (("cell", "%%"), ("line", "%")):
        for name, method in ColstatsMagics.magics[kind].items():
            function = getattr(ColstatsMagics, method)
            parser = getattr(function, "parser", None)  # IPython's magic_arguments: its docstring is the description
            summary = parser.description if parser is not None else function.__doc__
            lines += [f"## `{prefix}{name}`", "", inspect.cleandoc(summary or ""), ""]
            if parser is not None:
                parser.description = None  # shown above as prose; the block holds the usage and options
                lines += ["```text", parser.format_help().rstrip(), "```", ""]
                parser.description = summary
    lines += ["## Defaults", "", "Settable with `%config ColstatsMagics.<name> = value`, or "
              "`c.ColstatsMagics.<name>` in `ipython_config.py`.", "", "| name | default | what it sets |",
              "|---|---|---|"]
    for name, trait in sorted(ColstatsMagics.class_traits(config=True).items()):
        lines.append(f"| `{name}` | `{_cell(trait.default_value)}` | {_cell(trait.help)} |")
    return "\n".join(lines) + "\n"


def notebook(path: str) -> tuple[str, bool]:
    """The notebook as the last test run executed it, else as committed (without outputs)."""
    ran = os.path.join(ARTIFACTS, "notebooks", os.path.basename(path))
    if os.path.exists(ran) and os.path.getmtime(ran) >= os.path.getmtime(path):
        with open(ran) as f:
            return f.read(), True
    with open(path) as f:
        return f.read(), False


def with_banner(text: str, ran: bool) -> str:
    nb = json.loads(text)
    note = ("*The outputs below are those of this notebook's run in the test suite (nbval, a real kernel "
            "and Spark). Interactive views show in a live kernel; the [gallery](../gallery.md) has pictures.*"
            if ran else "*This build had no test run of the notebook: run it with `make lab` to see its outputs.*")
    nb["cells"].insert(1, {"cell_type": "markdown", "metadata": {}, "source": [note]})
    return json.dumps(nb)


def gallery_page(shots: list[tuple[str, str]], fresh: bool) -> str:
    when = ("in the last test run before this build" if fresh else
            "kept with the docs (docs/assets/gallery; `make test-all` before `make docs` shows the current ones)")
    lines = ["# Gallery", "",
             f"Screenshots the browser tests took of the dashboard and the views in headless Chromium at 1,400 px, "
             f"{when}.", ""]
    if not shots:
        lines.append("This build had no screenshots: `make test-all` takes them.")
    for name, caption in shots:
        lines += [f"## {caption}", "", f"![{caption}](images/{name})", ""]
    return "\n".join(lines)


def main() -> None:
    with mkdocs_gen_files.open("reference/settings.md", "w") as f:
        f.write(settings_page())
    with mkdocs_gen_files.open("reference/cli.md", "w") as f:
        f.write(cli_page())
    with mkdocs_gen_files.open("reference/magics.md", "w") as f:
        f.write(magics_page())
    for path in sorted(glob.glob(os.path.join(ROOT, "notebooks", "*.ipynb"))):
        text, ran = notebook(path)
        with mkdocs_gen_files.open(f"notebooks/{os.path.basename(path)}", "w") as f:
            f.write(with_banner(text, ran))
    # each screenshot from the last test run where it left one, else the copy kept in docs/assets/gallery (a plain
    # `make docs` then still shows the pictures the guides point to)
    shots, fresh = [], 0
    for name, caption in SCREENSHOTS:
        source = next((path for path in (os.path.join(ARTIFACTS, name), os.path.join(KEPT, name))
                       if os.path.exists(path)), None)
        if source is None:
            continue
        fresh += source.startswith(ARTIFACTS)
        shots.append((name, caption))
        with open(source, "rb") as src, mkdocs_gen_files.open(f"images/{name}", "wb") as dst:
            dst.write(src.read())
    with mkdocs_gen_files.open("gallery.md", "w") as f:
        f.write(gallery_page(shots, fresh == len(shots)))


main()
