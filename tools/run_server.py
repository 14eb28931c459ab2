"""`make run`'s server: start `assay serve`, and print the hints once it answers.

Usage: python tools/run_server.py HOST PORT -- ASSAY SERVE ARGUMENTS...
The hints come only after `/healthz` answers, so a server that cannot start (a port in
use is a one-line error, exit 2) shows its error and nothing that suggests it runs.
Ctrl-C stops the server cleanly; the exit code is the server's.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import urllib.request

HINTS = """
assay is serving the bundled NVD sample on {base}. Open {base} in a browser, or try:
  curl -s '{base}rest/json/cves/2.0?cveId=CVE-2024-23113'
  curl -s '{base}rest/json/cves/2.0?cpeName=cpe:2.3:o:fortinet:fortios:7.0.5&isVulnerable'
  curl -s '{base}rest/json/cves/2.0?keywordSearch=buffer%20overflow&resultsPerPage=2'
  curl -s '{base}rest/json/cpes/2.0?cpeMatchString=cpe:2.3:a:microsoft:access'
  curl -s '{base}rest/json/cpematch/2.0?matchCriteriaId=A2572D17-1DE6-457B-99CC-64AFD54487EA'
  curl -s '{base}rest/json/cvehistory/2.0?cveId=CVE-2019-1010218&eventName=CVE+Modified'
  curl -si '{base}rest/json/cves/2.0?cveId=bogus'    (404 with a message header)
  {base}docs describes the API; {base}readyz says the store's generation.
Ctrl-C stops the server.
"""


def main(argv: list[str]) -> int:
    host, port, separator, *command = argv
    assert separator == "--", "usage: run_server.py HOST PORT -- COMMAND..."
    shown = f"[{host}]" if ":" in host else host
    base = f"http://{shown}:{port}/"
    server = subprocess.Popen(command)
    try:
        deadline = time.monotonic() + 120
        while server.poll() is None and time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{base}healthz", timeout=1) as answer:  # noqa: S310
                    if answer.status == 200:
                        print(HINTS.format(base=base), flush=True)
                        break
            except OSError:
                time.sleep(0.2)
        return server.wait()
    except KeyboardInterrupt:
        server.send_signal(signal.SIGINT)
        try:
            return server.wait(timeout=15)
        except KeyboardInterrupt:
            server.kill()
            return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
