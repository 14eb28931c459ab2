"""The store's OSV records as files that other tools read (docs/client.md).

    export(store, Path("out"), layout="bucket")     # out/PyPI/all.zip, modified_id.csv, ID.json
    export(store, Path("out"), layout="renovate")   # out/pypi.nedb (a record per line)

`bucket` is osv.dev's bucket layout, per ecosystem: `all.zip` (a `ID.json` member per
record), `modified_id.csv` (`modified,id`, newest first) and one `ID.json` per record:
what osv-scanner's offline mode reads, and what `assay osv sync --upstream` reads from
any static server. `renovate` is `@renovatebot/osv-offline`'s layout. Files are written
beside their final name and renamed into place, so a reader never sees half a file.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

from assay.errors import InputError
from assay.osv.record import stored_record, timestamp_key

if TYPE_CHECKING:
    from assay.nvd.storage.interface import Store

__all__ = ["LAYOUTS", "export"]

LAYOUTS: Final = ("bucket", "renovate")
Layout = Literal["bucket", "renovate"]


def _safe(name: str, what: str) -> str:
    if not name or name in (".", "..") or "/" in name or "\\" in name or "\x00" in name:
        raise InputError(what, f"cannot be a file name: {name!r}")
    return name


def export(
    store: Store,
    folder: Path,
    *,
    ecosystems: Sequence[str] | None = None,
    layout: Layout = "bucket",
) -> dict[str, int]:
    """Write the records of `ecosystems` (default: every one the store holds); the
    number of records written per ecosystem."""
    if layout not in LAYOUTS:
        raise InputError("layout", f"expected one of {', '.join(LAYOUTS)}, found {layout!r}")
    names = list(ecosystems) if ecosystems else store.osv_ecosystems()
    folder.mkdir(parents=True, exist_ok=True)
    written: dict[str, int] = {}
    for ecosystem in names:
        _safe(ecosystem, "ecosystem")
        records = store.iter_osv(ecosystem)
        if layout == "renovate":
            written[ecosystem] = _nedb(records, folder / f"{ecosystem.lower()}.nedb")
        else:
            written[ecosystem] = _bucket(records, folder / ecosystem)
    return written


def _nedb(records: Iterator[bytes], path: Path) -> int:
    count = 0
    partial = path.with_name(path.name + ".partial")
    with partial.open("wb") as out:
        for raw in records:
            out.write(raw.replace(b"\n", b"") + b"\n")
            count += 1
    os.replace(partial, path)
    return count


def _bucket(records: Iterator[bytes], folder: Path) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    index: list[tuple[str, str, str]] = []
    partial = folder / "all.zip.partial"
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for raw in records:
            record = stored_record(raw)
            name = _safe(record.id, "record id") + ".json"
            archive.writestr(name, raw)
            single = folder / (name + ".partial")
            single.write_bytes(raw)
            os.replace(single, folder / name)
            index.append((timestamp_key(record.modified), record.modified, record.id))
    os.replace(partial, folder / "all.zip")
    index.sort(reverse=True)
    listing = folder / "modified_id.csv.partial"
    listing.write_text("".join(f"{modified},{osv_id}\n" for _, modified, osv_id in index))
    os.replace(listing, folder / "modified_id.csv")
    return len(index)
