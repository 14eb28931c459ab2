"""What a store indexes of an OSV record, to find it again (pure).

    keys = index_keys(record)
    keys.packages   # (ecosystem, normalized name): by package (`/v1/query`, `assay scan`)
    keys.aliases    # every alias: a CVE id finds its OSV records
    keys.commits    # commits GIT ranges name as affected (`/v1/query` by commit)

A package with a release-qualified ecosystem (`Debian:12`) is indexed under it and under
its ecosystem (`Debian`), as osv.dev answers a query for either.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from assay.osv.names import normalized_name
from assay.osv.record import Affected, OsvRecord, Package
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
            packages.update(dict.fromkeys(_package_keys(entry.package)))
        commits.update(dict.fromkeys(_commits(entry)))
    aliases = dict.fromkeys(alias for alias in record.aliases if alias != record.id)
    return IndexKeys(tuple(packages), tuple(aliases), tuple(commits))


def _package_keys(package: Package) -> list[tuple[str, str]]:
    """The package under its ecosystem, and under the base ecosystem (`Debian` for
    `Debian:12`) when that differs."""
    ecosystem, name = package.ecosystem, package.name
    keys = [(ecosystem, normalized_name(ecosystem, name))]
    base = base_ecosystem(ecosystem)
    if base != ecosystem:
        keys.append((base, normalized_name(base, name)))
    return keys


def _commits(entry: Affected) -> Iterator[str]:
    """The commits the entry's GIT ranges name as affected (lower case)."""
    for entry_range in entry.ranges:
        if entry_range.type != "GIT":
            continue
        for event in entry_range.events:
            if event.kind in ("introduced", "last_affected") and event.value != "0":
                yield event.value.lower()
