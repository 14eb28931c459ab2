"""Snapshots in an OCI registry: `assay store push oci://REGISTRY/REPO:TAG FILE...` and
`assay store pull oci://REGISTRY/REPO:TAG`.

One tag is one OCI artifact (an image manifest with `artifactType`, OCI 1.1, and the
empty config); its layers are the files, each named by its
`org.opencontainers.image.title` annotation:

    artifactType  application/vnd.assay.store-snapshot.v1
    layers        application/vnd.assay.store-snapshot.v1.tar+zstd   a snapshot
                  application/vnd.dsse.envelope.v1+json              FILE.intoto.json
                  application/vnd.dev.sigstore.bundle.v0.3+json      FILE.sigstore.json
                  application/vnd.assay.store-snapshot.index.v1+json index.json (a series)

Pushing a snapshot pushes the signatures beside it; pushing a published folder pushes its
index and every file it lists. Pulling writes the layers under their titles into a
folder, which is then what `assay store import` (or a static web server) reads. Signatures
are checked by the import, not by the pull: a registry is only a way to carry files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import orjson

from assay import protocol
from assay.errors import InputError
from assay.registry.client import OCI_MANIFEST, RegistryClient
from assay.registry.reference import Reference, parse_reference
from assay.snapshot.format import SnapshotError
from assay.snapshot.publish import FILE_NAME, INDEX_NAME, SIGNATURE_SUFFIXES, read_index

SCHEME: Final = "oci://"
ARTIFACT_TYPE: Final = "application/vnd.assay.store-snapshot.v1"
SNAPSHOT_TYPE: Final = "application/vnd.assay.store-snapshot.v1.tar+zstd"
INDEX_TYPE: Final = "application/vnd.assay.store-snapshot.index.v1+json"
SIGNATURE_TYPES: Final = {
    SIGNATURE_SUFFIXES["dsse"]: protocol.DSSE_ENVELOPE_MEDIA_TYPE,
    SIGNATURE_SUFFIXES["sigstore"]: protocol.BUNDLE_V03_ALT,
}
EMPTY_TYPE: Final = "application/vnd.oci.empty.v1+json"
EMPTY: Final = b"{}"
TITLE: Final = "org.opencontainers.image.title"
MAX_LAYER_BYTES: Final = 8 * 1024 * 1024 * 1024
"""Largest file pulled (a full snapshot of NVD and the other sources is ~0.5 GiB)."""


def is_oci(text: str) -> bool:
    return text.startswith(SCHEME)


def oci_reference(text: str, where: str) -> Reference:
    if not is_oci(text):
        raise InputError(where, f"expected oci://REGISTRY/REPOSITORY:TAG, found {text!r:.80}")
    return parse_reference(text.removeprefix(SCHEME), where)


def media_type(name: str) -> str:
    if name == INDEX_NAME:
        return INDEX_TYPE
    for suffix, kind in SIGNATURE_TYPES.items():
        if name.endswith(suffix):
            return kind
    return SNAPSHOT_TYPE


def files_to_push(paths: list[Path]) -> list[Path]:
    """The files of each path: a snapshot and the signatures beside it, or a published
    folder's index and every file it lists."""
    found = [file for path in paths for file in _files_of(path)]
    names = [p.name for p in found]
    if len(set(names)) != len(names):
        raise InputError("FILE", "two files of the same name: an artifact's files are named")
    return found


def _files_of(path: Path) -> list[Path]:
    """A published folder's files, or a snapshot file and the signatures beside it."""
    if path.is_dir():
        return _series_files(path)
    if not path.is_file():
        raise InputError(str(path), "expected a snapshot file or a published folder")
    beside = [path.with_name(path.name + suffix) for suffix in SIGNATURE_TYPES]
    return [path, *(signature for signature in beside if signature.is_file())]


def _series_files(folder: Path) -> list[Path]:
    index = read_index(folder)
    if not index.snapshots:
        raise SnapshotError(str(folder), f"expected a published series ({INDEX_NAME})")
    names = [INDEX_NAME]
    for entry in index.snapshots:
        names.extend((entry.name, *entry.signatures.values()))
    return [folder / name for name in names]


@dataclass(frozen=True, slots=True)
class Pushed:
    reference: str
    digest: str
    files: tuple[str, ...]


def push(client: RegistryClient, ref: Reference, paths: list[Path]) -> Pushed:
    """Push the files as one artifact tagged `ref`."""
    layers: list[dict[str, Any]] = []
    for path in files_to_push(paths):
        digest, size = client.push_blob_file(ref, path)
        layers.append(
            {
                "mediaType": media_type(path.name),
                "digest": digest,
                "size": size,
                "annotations": {TITLE: path.name},
            }
        )
    config = {"mediaType": EMPTY_TYPE, "digest": client.push_blob(ref, EMPTY), "size": 2}
    manifest = {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "artifactType": ARTIFACT_TYPE,
        "config": config,
        "layers": layers,
    }
    data = orjson.dumps(manifest)
    digest = client.push_manifest(ref, ref.reference, data, OCI_MANIFEST)
    return Pushed(str(ref), digest, tuple(layer["annotations"][TITLE] for layer in layers))


def pull(client: RegistryClient, ref: Reference, folder: Path) -> list[Path]:
    """Write the artifact's files into `folder`, in the artifact's order."""
    manifest = client.manifest(ref)
    where = f"{SCHEME}{ref}"
    if manifest.is_index or manifest.document.get("artifactType") != ARTIFACT_TYPE:
        raise SnapshotError(where, f"expected an artifact of type {ARTIFACT_TYPE}")
    written: list[Path] = []
    for number, layer in enumerate(manifest.descriptors):
        name, size = _layer_file(layer, f"{where}: layers[{number}]")
        _download(client, ref, str(layer.get("digest")), size, folder / f".{name}.part")
        os.replace(folder / f".{name}.part", folder / name)
        written.append(folder / name)
    return written


def _layer_file(layer: dict[str, Any], where: str) -> tuple[str, int]:
    """A layer's file name and size, refused unless both are usable."""
    name = (layer.get("annotations") or {}).get(TITLE)
    size = layer.get("size")
    if not isinstance(name, str) or not FILE_NAME.fullmatch(name):
        raise SnapshotError(where, f"expected a file name as {TITLE}")
    if not isinstance(size, int) or not 0 <= size <= MAX_LAYER_BYTES:
        raise SnapshotError(where, "expected a size within limits")
    return name, size


def _download(client: RegistryClient, ref: Reference, digest: str, size: int, part: Path) -> None:
    """The blob into `part`, removed again when it breaks off."""
    try:
        with part.open("wb") as out:
            for chunk in client.blob_chunks(ref, digest, limit=size):
                out.write(chunk)
    except BaseException:
        part.unlink(missing_ok=True)  # (the digest did not match, or the answer broke off)
        raise
