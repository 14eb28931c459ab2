"""What a store indexes of an OSV record, to find it again (pure).

    keys = index_keys(record)
    keys.packages   # (ecosystem, normalized name): by package (`/v1/query`, `assay scan`)
    keys.aliases    # every alias: a CVE id finds its OSV records
    keys.commits    # commits GIT ranges name as affected (`/v1/query` by commit)

A package with a release-qualified ecosystem (`Debian:12`) is indexed under it and under
its ecosystem (`Debian`), as osv.dev answers a query for either.
"""

from __future__ import annotations

from dataclasses import dataclass

from assay.osv.names import normalized_name
from assay.osv.record import OsvRecord
from assay.osv.versions import base_ecosystem

__all__ = ["IndexKeys", "index_keys"]


@dataclass(frozen=True, slots=True)
class IndexKeys:
    packages: tuple[tuple[str, str], ...]
    aliases: tuple[str, ...]
    commits: tuple[str, ...]


def index_keys(record: OsvRecord) -> IndexKeys:
    packages: dict[tuple[str, str], None] = {}
    commits: dict[str, None] = {}
    for entry in record.affected:
        if entry.package is not None:
            ecosystem, name = entry.package.ecosystem, entry.package.name
            packages[(ecosystem, normalized_name(ecosystem, name))] = None
            base = base_ecosystem(ecosystem)
            if base != ecosystem:
                packages[(base, normalized_name(base, name))] = None
        for entry_range in entry.ranges:
            if entry_range.type != "GIT":
                continue
            for event in entry_range.events:
                if event.kind in ("introduced", "last_affected") and event.value != "0":
                    commits[event.value.lower()] = None
    aliases = dict.fromkeys(alias for alias in record.aliases if alias != record.id)
    return IndexKeys(tuple(packages), tuple(aliases), tuple(commits))
