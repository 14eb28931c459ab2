"""Screenshots of every page for docs/web.md: `python tools/screenshots.py [OUT_DIR] [--only NAME...]`.

Loads the bundled NVD sample into a fresh SQLite store, starts `assay serve` on a free
port, and photographs each page with Debian's chromium through Playwright (desktop and
phone widths). `/verify` and `/scan` are photographed with their answer to a real
attestation and a real lock file of tests/assets, posted through the forms. Writes PNG
files into OUT_DIR (default docs/screenshots); `--only` names the pictures to make.
"""

from __future__ import annotations

import argparse
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ASSETS = ROOT / "tests" / "assets"
CHROMIUM = "/usr/bin/chromium"
PAGES = (
    ("home", "/"),
    ("search", "/?q=windows&resultsPerPage=5"),
    ("cve", "/cve/CVE-2024-23113"),
    ("cve-configurations", "/cve/CVE-2023-0001#conf"),
    ("cve-sources", "/cve/CVE-2025-24016#sources"),
    ("criteria", "/criteria/A2572D17-1DE6-457B-99CC-64AFD54487EA"),
    ("product", "/cpe/cpe:2.3:o:fortinet:fortios:7.0.5:*:*:*:*:*:*:*"),
    ("products", "/cpe?q=microsoft&resultsPerPage=10"),
    ("docs", "/docs"),
    ("not-found", "/cve/CVE-2099-0001"),
    ("verify", "/verify"),
    ("scan", "/scan"),
)
PHONE = ("home", "cve", "verify", "scan")


def _verify(page: Any) -> None:
    provenance = ASSETS / "verify/slsa-verifier/cli/gcb_container/v0.2/gcloud-container-github.json"
    page.get_by_label("Attestation files").set_input_files(str(provenance))
    page.get_by_label("A shipped policy").select_option("gcb")
    page.get_by_label("Artifact digests").fill(
        "sha256:1a033b002f89ed2b8ea733162497fb70f1a4049a7f8602d6a33682b4ad9921fd"
    )
    page.get_by_role("button", name="Verify", exact=True).click()


def _scan(page: Any) -> None:
    page.get_by_label("SBOM or lock files").set_input_files(
        str(ASSETS / "lockfiles/fastapi-mvc/uv.lock")
    )
    page.get_by_label("Package URLs, one per line").fill("pkg:pypi/tensorflow@2.9.0")
    page.get_by_role("button", name="Scan", exact=True).click()


ACTIONS: dict[str, Callable[[Any], None]] = {"verify": _verify, "scan": _scan}


def _load_cve5(store: str, folder: Path) -> None:
    """The CVE 5 records, KEV and EPSS samples of tests/assets/cve5, and the NVD records
    beside them (CVE-2025-24016: awaiting NVD's analysis; in KEV; scored by EPSS)."""
    import json

    assets = Path(__file__).resolve().parent.parent / "tests" / "assets" / "cve5"
    lines = folder / "nvd.jsonl"
    lines.write_text(
        "".join(
            json.dumps(json.loads(p.read_bytes())) + "\n"
            for p in sorted((assets / "nvd").glob("CVE-*.json"))
        )
    )
    assay = [sys.executable, "-m", "assay"]
    for args in (
        ["nvd", "import", str(lines)],
        ["cve", "import", str(assets)],
        ["kev", "import", str(assets / "kev" / "known_exploited_vulnerabilities.json")],
        ["epss", "import", str(assets / "epss" / "epss_scores-sample.csv")],
    ):
        subprocess.run([*assay, *args, "--store", store], check=True, capture_output=True)


def main(argv: list[str]) -> int:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", nargs="?", default="docs/screenshots")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="e.g. verify scan-phone")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        store = f"sqlite:///{folder}/store.db"
        subprocess.run(
            [sys.executable, "-m", "assay", "nvd", "import", "--store", store, "--bundled"],
            check=True,
            capture_output=True,
        )
        _load_cve5(store, Path(folder))
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        server = subprocess.Popen(
            [sys.executable, "-m", "assay", "serve", "--store", store, "--port", str(port)],
            stderr=subprocess.DEVNULL,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            for _ in range(300):
                try:
                    urllib.request.urlopen(f"{base}/healthz", timeout=1)  # noqa: S310
                    break
                except OSError:
                    time.sleep(0.2)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=CHROMIUM, args=["--no-sandbox"]
                )
                for width, height, suffix, names in (
                    (1280, 900, "", [name for name, _ in PAGES]),
                    (390, 844, "-phone", list(PHONE)),
                ):
                    context = browser.new_context(viewport={"width": width, "height": height})
                    page = context.new_page()
                    for name, path in PAGES:
                        if name not in names:
                            continue
                        if args.only and f"{name}{suffix}" not in args.only:
                            continue
                        page.goto(base + path)
                        if name in ACTIONS:
                            ACTIONS[name](page)
                            page.wait_for_load_state()
                        target = out / f"{name}{suffix}.png"
                        page.screenshot(path=str(target), full_page=False)
                        print(target)
                    context.close()
                browser.close()
        finally:
            server.send_signal(signal.SIGINT)
            server.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
