"""Trusted roots (Fulcio CAs, Rekor and CT log keys, timestamp authorities).

assay ships two `trusted_root.json` files (roots/SOURCES.md says where they come from):
Sigstore's public-good instance and the root GitHub's CLI uses. `assay trust update`
keeps a newer copy in the user data directory, which is used instead of the shipped
one of the same name. `--trusted-root FILE` adds a root, or with `replace=True` makes
the given files the only roots. Nothing here touches the network.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Final

import platformdirs

from assay.errors import AttestationError
from assay.sigstore import _json

if TYPE_CHECKING:
    from sigstore.models import TrustedRoot

SHIPPED: Final = ("public-good", "github")
TRUSTED_ROOT_MEDIA_TYPE: Final = "application/vnd.dev.sigstore.trustedroot+json;version=0.1"
MAX_ROOT_BYTES: Final = 4 * 1024 * 1024
REPEATED_FIELDS: Final = ("tlogs", "ctlogs", "certificateAuthorities", "timestampAuthorities")


@dataclass(frozen=True, slots=True)
class Root:
    """One trusted root: where it came from and its bytes."""

    name: str
    origin: str
    """`shipped`, `updated` (the user data directory) or the file it was read from."""
    data: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    def load(self) -> TrustedRoot:
        from pydantic import ValidationError
        from sigstore.models import TrustedRoot
        from sigstore_models.trustroot import v1

        try:
            document = _json.loads(self.data, self.origin)
            if isinstance(document, dict):
                # Protobuf JSON leaves an empty repeated field out (GitHub's root has no
                # logs); the models require each list.
                for key in REPEATED_FIELDS:
                    document.setdefault(key, [])
            return TrustedRoot(v1.TrustedRoot.model_validate_json(json.dumps(document)))
        except AttestationError:
            raise
        except ValidationError as error:
            where, expected = _json.schema_error(error, self.origin, "a Sigstore trusted root")
            raise AttestationError(where, expected) from None
        except Exception as error:  # base64 or key errors from sigstore
            raise AttestationError(
                self.origin, f"expected a Sigstore trusted root: {_short(error)}"
            ) from None


def _short(error: Exception) -> str:
    return str(error).splitlines()[0][:200] if str(error) else type(error).__name__


def user_roots_dir() -> Path:
    return Path(platformdirs.user_data_dir("assay")) / "trusted-roots"


def check_root(data: bytes, where: str) -> None:
    """Refuse what is not a trusted root before it is stored or used."""
    if len(data) > MAX_ROOT_BYTES:
        raise AttestationError(where, f"expected at most {MAX_ROOT_BYTES} bytes, got {len(data)}")
    document = _json.loads(data, where)
    if not isinstance(document, dict):
        raise AttestationError(f"{where}: $", "expected a JSON object (a trusted root)")
    media_type = document.get("mediaType")
    if media_type != TRUSTED_ROOT_MEDIA_TYPE:
        raise AttestationError(
            f"{where}: $.mediaType", f"expected {TRUSTED_ROOT_MEDIA_TYPE!r}, found {media_type!r}"
        )
    Root(where, where, data).load()


def shipped_root(name: str) -> Root:
    data = resources.files("assay.sigstore").joinpath("roots").joinpath(f"{name}.json").read_bytes()
    return Root(name, "shipped", data)


def default_roots(user_dir: Path | None = None) -> list[Root]:
    """The shipped roots, each replaced by its updated copy when there is one."""
    directory = user_dir if user_dir is not None else user_roots_dir()
    result = []
    for name in SHIPPED:
        updated = directory / f"{name}.json"
        if updated.is_file():
            result.append(Root(name, str(updated), _read(updated)))
        else:
            result.append(shipped_root(name))
    return result


def _read(path: Path) -> bytes:
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_ROOT_BYTES + 1)
    except OSError as error:
        raise AttestationError(str(path), f"cannot read: {error.strerror}") from None
    if len(data) > MAX_ROOT_BYTES:
        raise AttestationError(str(path), f"expected at most {MAX_ROOT_BYTES} bytes")
    return data


def read_root(path: str | Path) -> Root:
    data = _read(Path(path))
    check_root(data, str(path))
    return Root(Path(path).name, str(path), data)


def select_roots(extra: list[str] | tuple[str, ...] = (), *, replace: bool = False) -> list[Root]:
    """The roots to verify with: the defaults plus `extra`, or `extra` alone with `replace`."""
    given = [read_root(path) for path in extra]
    if replace and given:
        return given
    return [*given, *default_roots()]


def update_root(source: Path, name: str = "public-good", user_dir: Path | None = None) -> Path:
    """Store a checked copy of `source` as the updated root `name`; returns its path."""
    if name not in SHIPPED:
        raise AttestationError("--name", f"expected one of {', '.join(SHIPPED)}, got {name!r}")
    data = _read(source)
    check_root(data, str(source))
    directory = user_dir if user_dir is not None else user_roots_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        target = directory / f"{name}.json"
        partial = target.with_suffix(".json.partial")
        partial.write_bytes(data)
        partial.replace(target)
    except OSError as error:
        raise AttestationError(str(directory), f"cannot write: {error.strerror}") from None
    return target


def _first_line(error: BaseException) -> str:
    """An error's first line (at most 200 characters), or its type's name when it says
    nothing."""
    text = str(error)
    return text.splitlines()[0][:200] if text else type(error).__name__


def fetch_public_good() -> bytes:
    """Sigstore's current public-good trusted root through its TUF repository (online).

    Fails with a clear `AttestationError` when the network is unreachable; nothing
    else of assay ever needs this.
    """
    import logging

    logging.getLogger("urllib3").setLevel(logging.ERROR)  # one clear error, not retry noise
    try:
        from sigstore.models import ClientTrustConfig

        config = ClientTrustConfig.production(offline=False)
        inner = config.trusted_root._inner
        return bytes(inner.to_json().encode("utf-8"))
    except Exception as error:
        text = _first_line(error)
        raise AttestationError(
            "--online",
            f"cannot refresh from Sigstore's TUF repository ({text}); "
            "offline, use --from FILE with a trusted_root.json",
        ) from None
