"""GitHub's trusted root through its TUF repository (`assay trust update --online --name
github`), as `gh attestation trusted-root` obtains it.

The update starts from the TUF root gh embeds (`roots/tuf-repo.github.com-root.json`),
follows the repository's root rotations, and returns the target `trusted_root.json`
only once TUF has verified it (timestamp, snapshot, targets, the target's hashes). The
TUF metadata is kept in the user data directory between updates. Online only; offline
it fails with a clear `AttestationError`.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Final
from urllib.parse import quote

import platformdirs

from assay.errors import AttestationError
from assay.sigstore.roots import _first_line

GITHUB_TUF_URL: Final = "https://tuf-repo.github.com"
TARGET: Final = "trusted_root.json"


def bootstrap_root() -> bytes:
    return (
        resources.files("assay.sigstore")
        .joinpath("roots")
        .joinpath("tuf-repo.github.com-root.json")
        .read_bytes()
    )


def fetch_github(
    url: str = GITHUB_TUF_URL, *, bootstrap: bytes | None = None, data_dir: Path | None = None
) -> bytes:
    """The verified `trusted_root.json` target of GitHub's TUF repository at `url`."""
    import logging

    logging.getLogger("urllib3").setLevel(logging.ERROR)  # one clear error, not retry noise
    base = data_dir or Path(platformdirs.user_data_dir("assay")) / "tuf"
    directory = base / quote(url, safe="")
    try:
        from tuf.ngclient.updater import Updater

        metadata = directory / "metadata"
        targets = directory / "targets"
        metadata.mkdir(parents=True, exist_ok=True)
        targets.mkdir(parents=True, exist_ok=True)
        updater = Updater(
            metadata_dir=str(metadata),
            metadata_base_url=url,
            target_base_url=f"{url.rstrip('/')}/targets/",
            target_dir=str(targets),
            bootstrap=bootstrap if bootstrap is not None else bootstrap_root(),
        )
        updater.refresh()
        info = updater.get_targetinfo(TARGET)
        if info is None:
            raise AttestationError(url, f"the TUF repository has no target {TARGET}")
        path = updater.find_cached_target(info) or updater.download_target(info)
        return Path(path).read_bytes()
    except AttestationError:
        raise
    except Exception as error:
        text = _first_line(error)
        raise AttestationError(
            "--online",
            f"cannot refresh GitHub's trusted root from {url} ({text}); offline, use"
            " --from FILE with a line of `gh attestation trusted-root`",
        ) from None
