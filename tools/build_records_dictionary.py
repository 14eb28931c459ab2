"""Train the compression dictionary of the SQLite store's record format 2.

    .venv/bin/python tools/build_records_dictionary.py

Trains a 32 KiB zstd dictionary on the bundled real CVE records
(`src/assay/data/nvd-cves.jsonl.gz`, NVD-encoded as the store keeps them) and writes
`src/assay/data/records-v2.zdict`. Run once: the dictionary is part of the stored format
(`assay.nvd.storage._records`), so the committed file must never change; a better
dictionary gets a new format byte and a new file. Format 3 (LZ4 blocks) uses the same
file's bytes as its dictionary.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import orjson
import zstandard

from assay.nvd.cve_record import cve_facts

DATA = Path(__file__).resolve().parent.parent / "src" / "assay" / "data"
SIZE = 32 * 1024


def main() -> None:
    with gzip.open(DATA / "nvd-cves.jsonl.gz") as lines:
        samples = [cve_facts(orjson.loads(line)).record for line in lines if line.strip()]
    dictionary = zstandard.train_dictionary(SIZE, list[bytes | bytearray | memoryview](samples), level=3)
    (DATA / "records-v2.zdict").write_bytes(dictionary.as_bytes())
    print(f"trained on {len(samples)} records: {len(dictionary.as_bytes())} bytes")


if __name__ == "__main__":
    main()
