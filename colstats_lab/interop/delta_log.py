"""Delta's log, read where deltalake does not say enough: the deletion vector of each data file at a version, and
the table's domain metadata (liquid clustering's columns), replayed from the newest checkpoint (classic,
multi-part, or v2 with its sidecars; `_last_checkpoint` names which where two v2 checkpoints share a version) and the
commits after it. Log compaction files (`x.y.compacted.json`) are an optimization the protocol lets a reader skip:
the commits they stand for stay until a checkpoint covers them, and are read instead."""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import InvalidArgument
from ..storage import join, storage_for
from ..tables.deletion_vectors import DeletionVector

_CLASSIC = re.compile(r"^(\d{20})\.checkpoint\.parquet$")
_MULTI_PART = re.compile(r"^(\d{20})\.checkpoint\.(\d{10})\.(\d{10})\.parquet$")
_V2 = re.compile(r"^(\d{20})\.checkpoint\.[0-9a-fA-F-]{36}\.(parquet|json)$")
_COMMIT = re.compile(r"^(\d{20})\.json$")


@dataclass
class LogState:
    """What the lab takes from a replay of the log: each data file's deletion vector, by the path its add action
    gives (relative, or absolute), and each metadata domain's configuration (`delta.clustering`: its columns)."""

    vectors: dict[str, DeletionVector]
    domains: dict[str, str]
    # the version that gave a data file its vector, where a replayed commit did (not one a checkpoint holds), and the
    # operation each of those commits names (DELETE, UPDATE, MERGE): what made a partition's statistics stale
    vector_versions: dict[str, int] = field(default_factory=dict)
    operations: dict[int, str] = field(default_factory=dict)

    def clustering_columns(self) -> list[str]:
        """Liquid clustering's columns, by the names the log keeps (physical ones under column mapping); a nested
        one as its dotted path."""
        text = self.domains.get("delta.clustering")
        return [".".join(path) for path in json.loads(text).get("clusteringColumns", [])] if text else []


def log_state(table_root: str, version: int) -> LogState:
    """The log at `version`: the newest checkpoint at or before it, then the commits after it, each commit's removes
    before its adds (the protocol's reconciliation by path and vector); a domain's newest action wins."""
    log_dir = join(table_root, "_delta_log")
    storage = storage_for(log_dir)
    names = storage.child_names(log_dir)
    checkpoint, parts = _checkpoint(names, version, _last_checkpoint(storage, log_dir, names))
    live: dict[str, dict | None] = {}
    domains: dict[str, str] = {}
    if checkpoint is not None:
        adds, checkpoint_domains = _checkpoint_actions(storage, log_dir, parts)
        for add in adds:
            live[add["path"]] = add.get("deletionVector")
        for domain in checkpoint_domains:
            _domain(domains, domain)
    first = 0 if checkpoint is None else checkpoint + 1
    present = {int(m.group(1)) for n in names if (m := _COMMIT.match(n))}
    missing = [v for v in range(first, version + 1) if v not in present]
    if missing:
        raise InvalidArgument(f"the Delta log of {table_root} lacks commit {missing[0]} and no checkpoint covers it")
    vector_versions: dict[str, int] = {}
    operations: dict[int, str] = {}
    for number in range(first, version + 1):
        adds, removes, operation = [], [], None
        for action in _json_actions(storage, join(log_dir, f"{number:020d}.json")):
            if "add" in action:
                adds.append(action["add"])
            elif "remove" in action:
                removes.append(action["remove"])
            elif "domainMetadata" in action:
                _domain(domains, action["domainMetadata"])
            elif "commitInfo" in action:
                operation = _operation_name(action["commitInfo"].get("operation"))
        for remove in removes:
            live.pop(remove["path"], None)
            vector_versions.pop(remove["path"], None)
        for add in adds:
            live[add["path"]] = add.get("deletionVector")
            if add.get("deletionVector"):
                vector_versions[add["path"]] = number
                if operation:
                    operations[number] = str(operation)
    return LogState({path: DeletionVector.of(descriptor, path) for path, descriptor in live.items() if descriptor},
                    domains, vector_versions, {v: op for v, op in operations.items() if v in vector_versions.values()})


def _operation_name(named) -> str | None:
    """A commit's operation as a writer names it ("DELETE", "MERGE"), where it is a name: it goes into the reasons
    the views show, so anything else a log holds there is left out."""
    return named if isinstance(named, str) and _OPERATION.fullmatch(named) else None


_OPERATION = re.compile(r"[A-Za-z][A-Za-z0-9 _]{0,59}")


def _domain(domains: dict[str, str], action: dict) -> None:
    if action.get("removed"):
        domains.pop(action["domain"], None)
    else:
        domains[action["domain"]] = action.get("configuration") or ""


def _last_checkpoint(storage, log_dir: str, names: list[str]) -> dict:
    """`_last_checkpoint`'s hint ({} where it is absent or unreadable: a hint, the listing decides)."""
    if "_last_checkpoint" not in names:
        return {}
    try:
        hint = json.loads(storage.read_bytes(join(log_dir, "_last_checkpoint")).decode())
    except (ValueError, OSError):
        return {}
    return hint if isinstance(hint, dict) else {}


def _checkpoint(names: list[str], version: int, hint: dict) -> tuple[int | None, list[str]]:
    """The newest complete checkpoint at or before `version`, and its files: of two v2 checkpoints of one version
    (two writers may each write one), the one `_last_checkpoint` names."""
    named = str((hint.get("v2Checkpoint") or {}).get("path") or "").rsplit("/", 1)[-1]
    found: dict[int, list[str]] = {}
    multi: dict[tuple[int, int], list[str]] = {}
    for name in sorted(names, key=lambda n: n != named):
        if m := _CLASSIC.match(name) or _V2.match(name):
            found.setdefault(int(m.group(1)), [name])
        elif m := _MULTI_PART.match(name):
            multi.setdefault((int(m.group(1)), int(m.group(3))), []).append(name)
    for (at, total), parts in multi.items():
        if len(parts) == total:
            found.setdefault(at, sorted(parts))
    usable = [at for at in found if at <= version]
    if not usable:
        return None, []
    at = max(usable)
    return at, found[at]


def _checkpoint_actions(storage, log_dir: str, parts: list[str]) -> tuple[list[dict], list[dict]]:
    """The add actions (path and vector) and domain metadata actions of a checkpoint's files and sidecars."""
    adds: list[dict] = []
    domains: list[dict] = []
    sidecars: list[str] = []
    for name in parts:
        if name.endswith(".json"):
            for action in _json_actions(storage, join(log_dir, name)):
                if "add" in action:
                    adds.append(action["add"])
                elif "sidecar" in action:
                    sidecars.append(action["sidecar"]["path"])
                elif "domainMetadata" in action:
                    domains.append(action["domainMetadata"])
            continue
        table = _actions(storage, join(log_dir, name))
        adds += _adds_of(table)
        if "sidecar" in table.column_names:
            sidecars += [s["path"] for s in table.column("sidecar").to_pylist() if s]
        if "domainMetadata" in table.column_names:
            domains += [d for d in table.column("domainMetadata").to_pylist() if d]
    for sidecar in sidecars:
        adds += _adds_of(_actions(storage, join(log_dir, "_sidecars", unquote(sidecar.rsplit("/", 1)[-1]))))
    return adds, domains


def _json_actions(storage, location: str) -> Iterator[dict]:
    """The actions of a JSON commit or checkpoint, a line each."""
    for line in storage.read_bytes(location).decode().splitlines():
        if line.strip():
            yield json.loads(line)


def _actions(storage, location: str) -> pa.Table:
    with storage.open_input(location) as handle:
        file = pq.ParquetFile(handle)
        wanted = [name for name in ("add", "sidecar", "domainMetadata") if name in file.schema_arrow.names]
        return file.read(columns=wanted)


def _adds_of(table: pa.Table) -> list[dict]:
    if "add" not in table.column_names:
        return []
    return [{"path": a["path"], "deletionVector": a.get("deletionVector")}
            for a in table.column("add").to_pylist() if a]
