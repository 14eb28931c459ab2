"""GitHub's artifact attestations API, as `gh attestation verify` reads it.

    GET {api}/repos/OWNER/REPO/attestations/sha256:HEX   (or /orgs/OWNER/attestations/...)

Pages are followed (`Link: <...>; rel="next"`) until `limit` attestations; each entry
holds its bundle inline or, as GitHub serves it now, a `bundle_url` whose body is the
bundle compressed with raw Snappy. The API token (`GH_TOKEN`, `GITHUB_TOKEN`) is sent to
the API only, never to the storage host of `bundle_url`.
"""

from __future__ import annotations

import os
from typing import Any, Final
from urllib.parse import quote, urlsplit

from assay.errors import AttestationError, RegistryError
from assay.registry.api import MAX_DOCUMENT_BYTES, ApiClient
from assay.sigstore import load_json

DEFAULT_API: Final = "https://api.github.com"
MAX_LIMIT: Final = 1000


def api_url(hostname: str = "github.com", environ: dict[str, str] | None = None) -> str:
    """The REST API of `hostname`: `GITHUB_API_URL` when set (as in Actions), else
    api.github.com, `api.HOST` for GHE.com tenants, `https://HOST/api/v3` for Server."""
    env = os.environ if environ is None else environ
    if env.get("GITHUB_API_URL"):
        return env["GITHUB_API_URL"].rstrip("/")
    if hostname == "github.com":
        return DEFAULT_API
    if hostname.endswith(".ghe.com"):
        return f"https://api.{hostname}"
    return f"https://{hostname}/api/v3"


def token(environ: dict[str, str] | None = None) -> str | None:
    env = os.environ if environ is None else environ
    return env.get("GH_TOKEN") or env.get("GITHUB_TOKEN") or None


def attestations_url(
    base: str,
    digest: tuple[str, str],
    *,
    owner: str,
    repo: str | None,
    per_page: int,
    predicate_type: str | None = None,
) -> str:
    subject = f"{digest[0]}:{digest[1]}"
    scope = f"repos/{repo}" if repo else f"orgs/{quote(owner, safe='')}"
    url = f"{base.rstrip('/')}/{scope}/attestations/{subject}?per_page={per_page}"
    if predicate_type:
        url += f"&predicate_type={quote(predicate_type, safe='')}"
    return url


def fetch_bundles(
    api: ApiClient,
    base: str,
    digest: tuple[str, str],
    *,
    owner: str,
    repo: str | None,
    limit: int = 30,
    predicate_type: str | None = None,
    api_token: str | None = None,
) -> list[tuple[str, dict[str, Any]]]:
    """(label, bundle) of each attestation the API holds for `digest`, at most `limit`."""
    if not 1 <= limit <= MAX_LIMIT:
        raise AttestationError("limit", f"expected 1 to {MAX_LIMIT}, got {limit}")
    url = attestations_url(
        base,
        digest,
        owner=owner,
        repo=repo,
        per_page=min(limit, 100),
        predicate_type=predicate_type,
    )
    api_host = urlsplit(base).netloc
    headers = _api_headers(api_token)
    found: list[tuple[str, dict[str, Any]]] = []
    while url and len(found) < limit:
        if urlsplit(url).netloc != api_host:
            raise RegistryError(url, f"expected the next page on {api_host}")
        body, url_next = api.get(url, headers=headers)
        entries = _page_entries(body, url)[: limit - len(found)]
        for number, entry in enumerate(entries):
            label = f"{url} $.attestations[{number}]"
            found.append((label, _bundle(api, entry, label)))
        url = url_next
    return found


def _api_headers(api_token: str | None) -> dict[str, str]:
    headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}
    if api_token:
        headers["Authorization"] = f"Bearer {api_token}"
    return headers


def _page_entries(body: bytes, url: str) -> list[Any]:
    document = load_json(body, url)
    entries = document.get("attestations") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        raise RegistryError(url, 'expected {"attestations": [...]}')
    return entries


def _bundle(api: ApiClient, entry: Any, label: str) -> dict[str, Any]:
    if not isinstance(entry, dict):
        raise RegistryError(label, "expected an attestation object")
    bundle = entry.get("bundle")
    if isinstance(bundle, dict):
        return bundle
    link = entry.get("bundle_url")
    if not isinstance(link, str):
        raise RegistryError(label, "expected a bundle or a bundle_url")
    compressed, _ = api.get(link)  # no token: the storage host is not GitHub's API
    document = load_json(snappy_decompress(compressed, MAX_DOCUMENT_BYTES, link), link)
    if not isinstance(document, dict):
        raise RegistryError(link, "expected a Sigstore bundle (a JSON object)")
    return document


def _snappy_length(data: bytes, limit: int, where: str) -> tuple[int, int]:
    """The stated length (a varint) and where the elements start."""
    length, position, shift = 0, 0, 0
    while True:
        if position >= len(data) or shift > 28:
            raise RegistryError(where, "expected Snappy data (a varint length)")
        byte = data[position]
        position += 1
        length |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            break
    if length > limit:
        raise RegistryError(where, f"expected at most {limit} bytes once decompressed")
    return length, position


def _snappy_literal(data: bytes, tag: int, position: int, where: str) -> tuple[bytes, int]:
    size = tag >> 2
    if size >= 60:
        extra = size - 59
        size = int.from_bytes(data[position : position + extra], "little")
        position += extra
    size += 1
    if position + size > len(data):
        raise RegistryError(where, "Snappy literal runs past the data")
    return data[position : position + size], position + size


def _snappy_copy(data: bytes, tag: int, position: int) -> tuple[int, int, int]:
    """A copy element's size and offset, and where the next element starts."""
    if tag & 3 == 1:
        offset = ((tag >> 5) << 8) | data[position] if position < len(data) else 0
        return 4 + ((tag >> 2) & 7), offset, position + 1
    width = 2 if tag & 3 == 2 else 4
    offset = int.from_bytes(data[position : position + width], "little")
    return (tag >> 2) + 1, offset, position + width


def snappy_decompress(data: bytes, limit: int, where: str) -> bytes:
    """Raw Snappy (the block format: a varint length, then literals and copies)."""
    length, position = _snappy_length(data, limit, where)
    out = bytearray()
    while position < len(data):
        tag = data[position]
        if tag & 3 == 0:
            literal, position = _snappy_literal(data, tag, position + 1, where)
            out += literal
        else:
            size, offset, position = _snappy_copy(data, tag, position + 1)
            if offset == 0 or offset > len(out):
                raise RegistryError(where, "Snappy copy refers before the start")
            for _ in range(size):  # may overlap its own output
                out.append(out[-offset])
        if len(out) > length:
            raise RegistryError(where, "Snappy data longer than its stated length")
    if len(out) != length:
        raise RegistryError(where, f"Snappy data of {len(out)} bytes, stated {length}")
    return bytes(out)
