"""Hostile upstreams against the real `assay nvd sync`, by kind: `python -m tests.sync.sweep`.

Each input is served by a loopback `Upstream` to a subprocess running the CLI on a copy of
a store that already holds the 200 real CVEs of `tests/assets/nvd/cves-1999.json.gz`.
For each input the sweep records the exit code, whether a traceback was printed, how many
of the 200 records were lost or changed, whether a far-future record or checkpoint was
stored, whether an API key reached another port, and the process's peak RSS (VmHWM).
docs/security.md ("Sync and client") quotes its table.
"""

from __future__ import annotations

import argparse
import copy
import os
import shutil
import subprocess
import sys
import tempfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import orjson

from assay.nvd.ingest.clock import FUTURE_MARGIN
from assay.nvd.storage import open_store
from assay.nvd.sync import Checkpoint

from .harness import stored_records
from .hostile import (
    Answer,
    Request,
    Script,
    Upstream,
    endless,
    gzip_bomb,
    nvd_time,
    page,
    real_cves,
)
from .hostile import listing as served_listing

MIB = 1 << 20
KEY = "sweep-k3y-55aa"
QUICK = ["--kinds", "cves", "--by-date", "--timeout", "20", "--retries", "1", "--backoff", "0"]
MEASURED = """
import atexit, os, sys
def peak():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            open(os.environ["PEAK_FILE"], "w").write(line.split()[1])
atexit.register(peak)
from assay._cli import main
raise SystemExit(main(sys.argv[1:]))
"""


@dataclass
class Case:
    kind: str
    name: str
    script: Callable[[Upstream, Upstream], Script] | None = None
    upstream: str | None = None
    """A fixed `--upstream` (malformed URLs), instead of the served one."""
    extra: tuple[str, ...] = ()
    checkpoint: Callable[[str], Checkpoint] | None = None


@dataclass
class Outcome:
    case: Case
    code: int
    traceback: bool
    lost: int
    future_stored: bool
    key_leaked: bool
    peak_mib: float
    last_line: str


def _now() -> str:
    return nvd_time(datetime.now(UTC))


def _fixed(body: bytes, **headers: str) -> Callable[[Upstream, Upstream], Script]:
    def make(_upstream: Upstream, _other: Upstream) -> Script:
        return lambda _request: Answer(headers=headers, body=body)

    return make


def _streamed(
    make_body: Callable[[], Iterator[bytes]], **headers: str
) -> Callable[[Upstream, Upstream], Script]:
    def make(_upstream: Upstream, _other: Upstream) -> Script:
        return lambda _request: Answer(headers=headers, body=make_body())

    return make


def _records_with(
    field: str, value: str, at: tuple[int, ...] = (3, 50, 199)
) -> list[dict[str, Any]]:
    records = real_cves()
    for i in at:
        records[i][field] = value
        records[i]["lastModified"] = (
            records[i]["lastModified"] if field != "lastModified" else value
        )
    return records


def _listing(
    records: list[dict[str, Any]], timestamp: Callable[[], str] = _now
) -> Callable[[Upstream, Upstream], Script]:
    def make(_upstream: Upstream, _other: Upstream) -> Script:
        return served_listing(lambda: records, timestamp=timestamp)

    return make


def _redirect(
    status: int, where: Callable[[Upstream, Upstream, Request], str]
) -> Callable[[Upstream, Upstream], Script]:
    def make(upstream: Upstream, other: Upstream) -> Script:
        def script(request: Request) -> Answer:
            return Answer(status, {"Location": where(upstream, other, request)})

        return script

    return make


def _ignores_start(total: int) -> Callable[[Upstream, Upstream], Script]:
    records = real_cves()[:20]

    def make(_upstream: Upstream, _other: Upstream) -> Script:
        def script(request: Request) -> Answer:
            size = int(request.query.get("resultsPerPage", "1"))
            start = int(request.query.get("startIndex", "0"))
            return Answer(body=page(records[:size], start=start, total=total))

        return script

    return make


def _alternating() -> Callable[[Upstream, Upstream], Script]:
    records = real_cves()

    def make(_upstream: Upstream, _other: Upstream) -> Script:
        def script(request: Request) -> Answer:
            size = int(request.query.get("resultsPerPage", "1"))
            start = int(request.query.get("startIndex", "0"))
            half = (start // max(size, 1)) % 2
            return Answer(
                body=page(records[half * size : half * size + size], start=start, total=10**7)
            )

        return script

    return make


def _growing(step: int) -> Callable[[Upstream, Upstream], Script]:
    template = real_cves()[0]

    def make(_upstream: Upstream, _other: Upstream) -> Script:
        def script(request: Request) -> Answer:
            size = int(request.query.get("resultsPerPage", "1"))
            start = int(request.query.get("startIndex", "0"))
            fresh = []
            for n in range(size):
                record = copy.deepcopy(template)
                record["id"] = f"CVE-9000-{start + n:06d}"
                record["lastModified"] = _now()
                fresh.append(record)
            return Answer(body=page(fresh, start=start, total=start + step * size))

        return script

    return make


def _zstd_bomb(decoded_mib: int) -> bytes:
    import zstandard

    compressor = zstandard.ZstdCompressor(level=3)
    writer = compressor.compressobj()
    chunk = bytes(MIB)
    out = [writer.compress(chunk) for _ in range(decoded_mib)]
    out.append(writer.flush())
    return b"".join(out)


def _deflate_bomb(decoded_mib: int) -> bytes:
    deflate = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS)
    zeros = bytes(MIB)
    return b"".join(deflate.compress(zeros) for _ in range(decoded_mib)) + deflate.flush()


def cases() -> list[Case]:
    far = "9999-12-31T23:59:59.999"
    soon = lambda: nvd_time(datetime.now(UTC) + 3 * FUTURE_MARGIN)  # noqa: E731
    found: list[Case] = []
    # -- timestamps
    for field in ("lastModified", "published"):
        for value in (far, "2100-01-01T00:00:00.000", "9999-12-31", "2100-01-01T00:00:00.0000000Z"):
            found.append(
                Case(
                    "future timestamps",
                    f"{field}={value} in 3 records",
                    _listing(_records_with(field, value)),
                )
            )
    for stamp in (far, "2100-01-01T00:00:00.000", "soon", "", "9999-99-99T99:99:99"):
        found.append(
            Case(
                "future timestamps",
                f"answer timestamp {stamp!r}",
                _listing(real_cves(), lambda s=stamp: s),
            )
        )
    found.append(Case("future timestamps", "answer timestamp now+3h", _listing(real_cves(), soon)))
    for when in (datetime(9999, 12, 31, tzinfo=UTC), datetime.now(UTC) + timedelta(days=400)):
        found.append(
            Case(
                "future timestamps",
                f"stored checkpoint since {when.date()}",
                _listing(real_cves()),
                checkpoint=lambda base, w=when: Checkpoint(
                    upstream=base, phase="incremental", since=w
                ),
            )
        )
        found.append(
            Case(
                "future timestamps",
                f"stored window ending {when.date()}",
                _listing(real_cves()),
                checkpoint=lambda base, w=when: Checkpoint(
                    upstream=base,
                    phase="incremental",
                    since=datetime.now(UTC) - timedelta(days=1),
                    window=(datetime.now(UTC) - timedelta(days=1), w),
                ),
            )
        )
    found.append(
        Case(
            "future timestamps",
            "--since 9999-01-01",
            _listing(real_cves()),
            extra=("--since", "9999-01-01"),
        )
    )
    # -- sizes
    json = {"Content-Type": "application/json"}
    found.append(
        Case(
            "oversized answers",
            "gzip bomb, 1 MiB -> 1 GiB",
            _fixed(gzip_bomb(1024), **{"Content-Encoding": "gzip"}),
        )
    )
    found.append(
        Case(
            "oversized answers",
            "gzip bomb, 4 MiB -> 4 GiB",
            _fixed(gzip_bomb(4096), **{"Content-Encoding": "gzip"}),
        )
    )
    found.append(
        Case(
            "oversized answers",
            "zstd bomb -> 1 GiB",
            _fixed(_zstd_bomb(1024), **{"Content-Encoding": "zstd"}),
        )
    )
    found.append(
        Case(
            "oversized answers",
            "deflate bomb -> 1 GiB",
            _fixed(_deflate_bomb(1024), **{"Content-Encoding": "deflate"}),
        )
    )
    found.append(
        Case(
            "oversized answers",
            "3 GiB body, no length",
            _streamed(lambda: endless(b" " * MIB, 3072 * MIB), **json),
        )
    )
    found.append(
        Case(
            "oversized answers",
            "3 GiB body, Content-Length",
            _streamed(
                lambda: endless(b" " * MIB, 3072 * MIB),
                **json,
                **{"Content-Length": str(3072 * MIB)},
            ),
        )
    )
    found.append(
        Case(
            "oversized answers",
            "gzip cut short",
            _fixed(gzip_bomb(4)[:2000], **{"Content-Encoding": "gzip"}),
        )
    )
    found.append(
        Case(
            "oversized answers",
            "gzip garbage",
            _fixed(b"\x1f\x8b" + os.urandom(4000), **{"Content-Encoding": "gzip"}),
        )
    )
    found.append(
        Case(
            "oversized answers", "unknown coding (br)", _fixed(b"abc", **{"Content-Encoding": "br"})
        )
    )
    # -- redirects
    for status in (301, 302, 303, 307, 308):
        found.append(
            Case(
                "redirects",
                f"{status} to another port",
                _redirect(
                    status, lambda up, other, r: f"{other.root}{r.path}?{urlencode(r.query)}"
                ),
                extra=("--api-key", KEY),
            )
        )
    found.append(
        Case(
            "redirects",
            "302 to localhost (other host name)",
            _redirect(
                302, lambda up, other, r: f"http://localhost:{up.port}{r.path}?{urlencode(r.query)}"
            ),
            extra=("--api-key", KEY),
        )
    )
    found.append(
        Case(
            "redirects",
            "302 to https on the same port",
            _redirect(302, lambda up, other, r: f"https://127.0.0.1:{up.port}{r.path}"),
            extra=("--api-key", KEY),
        )
    )
    found.append(
        Case(
            "redirects",
            "302 loop",
            _redirect(302, lambda up, other, r: r.path),
            extra=("--api-key", KEY),
        )
    )
    found.append(
        Case(
            "redirects",
            "302 to a malformed URL",
            _redirect(302, lambda up, other, r: "http://[::1"),
            extra=("--api-key", KEY),
        )
    )
    # -- endless listings
    for total in (200, 10**9):
        found.append(
            Case(
                "endless listings",
                f"ignores startIndex, totalResults {total}",
                _ignores_start(total),
                extra=("--page-size", "20"),
            )
        )
    found.append(
        Case(
            "endless listings",
            "two pages alternating, totalResults 10^7",
            _alternating(),
            extra=("--page-size", "20"),
        )
    )
    for step in (2, 100):
        found.append(
            Case(
                "endless listings",
                f"totalResults grows {step} pages a page",
                _growing(step),
                extra=("--page-size", "20"),
            )
        )
    # -- URLs
    for url in (
        "http://[::1",
        "http://127.0.0.1:99999/rest/json",
        "http://127.0.0.1:abc/rest/json",
        "http://",
        "http://a b/rest/json",
        "http://127.0.0.1:0/rest/json",
        "http://127.0.0.1:1/rest/json#top",
        f"http://127.0.0.1:1/rest/json?apiKey={KEY}",
        f"http://reader:{KEY}@127.0.0.1:1/rest/json",
        f"http://reader:{KEY}?x@127.0.0.1:1/rest/json",
        "ftp://127.0.0.1/rest/json",
        "",
    ):
        found.append(Case("malformed --upstream", repr(url), upstream=url))
    return found


def run(
    case: Case, seed: Path, work: Path, expected: dict[str, bytes], source: str | None
) -> Outcome:
    store_file = work / "store.db"
    shutil.copy(seed, store_file)
    store_url = f"sqlite:///{store_file}"
    other_requests: list[Request] = []

    def record(request: Request) -> Answer:
        other_requests.append(request)
        return Answer(body=b"{}")

    with Upstream(record) as other, Upstream(lambda _r: Answer(404)) as upstream:
        if case.script is not None:
            upstream.script = case.script(upstream, other)
        base = case.upstream if case.upstream is not None else upstream.base_url
        if case.checkpoint is not None:
            opened = open_store(store_url)
            opened.set_meta("sync.cves", case.checkpoint(base).to_json())
            opened.close()
        peak = work / "peak"
        peak.unlink(missing_ok=True)
        command = [sys.executable, "-c", MEASURED, "nvd", "sync", "--store", store_url]
        result = subprocess.run(
            [*command, "--upstream", base, *QUICK, *case.extra],
            check=False,
            capture_output=True,
            text=True,
            timeout=600,
            env={
                **os.environ,
                "COLUMNS": "400",
                "PEAK_FILE": str(peak),
                **({"PYTHONPATH": source} if source else {}),
            },
        )
    opened = open_store(store_url)
    try:
        after = stored_records(opened, "cves")
        checkpoint = opened.get_meta("sync.cves")
    finally:
        opened.close()
    latest = nvd_time(datetime.now(UTC) + FUTURE_MARGIN)
    lost = sum(1 for key, record in expected.items() if after.get(key) != record)
    future = any(orjson.loads(record)["lastModified"] > latest for record in after.values())
    if checkpoint is not None:
        state = Checkpoint.from_json(checkpoint, "sync.cves")
        ends = [state.since, *(state.window or ())]
        future = future or max(ends) > datetime.now(UTC) + FUTURE_MARGIN
    output = result.stdout + result.stderr
    leaked = any(r.headers.get("apikey") for r in other_requests) or KEY in output
    lines = [line for line in result.stderr.strip().splitlines() if line.strip()]
    return Outcome(
        case,
        result.returncode,
        "Traceback" in output,
        lost,
        future,
        leaked,
        int(peak.read_text()) / 1024 if peak.exists() else 0.0,
        lines[-1][:160] if lines else "",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kind", action="append", help="only the cases of this kind")
    parser.add_argument(
        "--assay-src", help="run the CLI from this src/ folder (an earlier version, to compare)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        seed = work / "seed.db"
        feed = work / "cves.json"
        feed.write_bytes(page(real_cves(), start=0, total=200))
        subprocess.run(
            [
                sys.executable,
                "-m",
                "assay",
                "nvd",
                "import",
                str(feed),
                "--store",
                f"sqlite:///{seed}",
            ],
            check=True,
            capture_output=True,
        )
        opened = open_store(f"sqlite:///{seed}")
        expected = stored_records(opened, "cves")
        opened.close()
        outcomes = [
            run(case, seed, work, expected, args.assay_src)
            for case in cases()
            if args.kind is None or case.kind in args.kind
        ]
    print(
        "| kind | input | exit | traceback | records lost | future kept | key elsewhere | peak RSS MiB |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for o in outcomes:
        print(
            f"| {o.case.kind} | {o.case.name} | {o.code} | {'yes' if o.traceback else 'no'} | {o.lost} | "
            f"{'yes' if o.future_stored else 'no'} | {'yes' if o.key_leaked else 'no'} | {o.peak_mib:.0f} |"
        )
    by_kind: dict[str, list[Outcome]] = {}
    for o in outcomes:
        by_kind.setdefault(o.case.kind, []).append(o)
    print()
    for kind, items in by_kind.items():
        print(
            f"{kind}: {len(items)} inputs, {sum(o.traceback for o in items)} tracebacks, "
            f"{sum(o.lost for o in items)} records lost, {sum(o.future_stored for o in items)} "
            f"future kept, {sum(o.key_leaked for o in items)} keys elsewhere, peak RSS "
            f"{max(o.peak_mib for o in items):.0f} MiB, exits {sorted({o.code for o in items})}"
        )
    if os.environ.get("SWEEP_VERBOSE"):
        for o in outcomes:
            print(o.case.name, "->", o.last_line)


if __name__ == "__main__":
    main()
