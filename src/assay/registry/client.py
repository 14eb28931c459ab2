"""The OCI distribution API v2 over httpx: manifests, blobs, tags, referrers.

Every answer is bounded (`MAX_MANIFEST_BYTES`, the caller's blob limit) and checked
against its digest while it is read; a manifest asked for by digest must have that
digest. 429 and 5xx answers are retried with exponential backoff (honouring
Retry-After up to `MAX_BACKOFF` seconds); a failure is a `RegistryError` naming the URL.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from assay.errors import RegistryError
from assay.registry.reference import DIGEST, Reference

if TYPE_CHECKING:
    import httpx

    from assay.registry.auth import Challenge, Credentials

MAX_MANIFEST_BYTES: Final = 4 * 1024 * 1024
MAX_BLOB_BYTES: Final = 16 * 1024 * 1024
MAX_TOKEN_BYTES: Final = 1024 * 1024
MAX_BACKOFF: Final = 30.0
OCI_INDEX: Final = "application/vnd.oci.image.index.v1+json"
OCI_MANIFEST: Final = "application/vnd.oci.image.manifest.v1+json"
DOCKER_LIST: Final = "application/vnd.docker.distribution.manifest.list.v2+json"
DOCKER_MANIFEST: Final = "application/vnd.docker.distribution.manifest.v2+json"
MANIFEST_TYPES: Final = (OCI_INDEX, OCI_MANIFEST, DOCKER_LIST, DOCKER_MANIFEST)
INDEX_TYPES: Final = (OCI_INDEX, DOCKER_LIST)


@dataclass(frozen=True, slots=True)
class Manifest:
    digest: str
    media_type: str
    data: bytes = field(repr=False)
    document: dict[str, Any] = field(repr=False)

    @property
    def is_index(self) -> bool:
        return self.media_type in INDEX_TYPES

    @property
    def descriptors(self) -> list[dict[str, Any]]:
        """An index's manifests, or an image manifest's layers."""
        key = "manifests" if self.is_index else "layers"
        items = self.document.get(key)
        return [d for d in items if isinstance(d, dict)] if isinstance(items, list) else []


@dataclass(slots=True)
class RequestLog:
    """Each request made: (method, URL, status, seconds); for benches and reports."""

    entries: list[tuple[str, str, int, float]] = field(default_factory=list)


def sha256_digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


class RegistryClient:
    """One registry session: tokens are kept per repository scope for its life."""

    def __init__(
        self,
        *,
        timeout: float = 30.0,
        retries: int = 3,
        docker_config: Path | None = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._http = Transports(timeout, transport)
        self._basic: dict[str, str] = {}
        self._retries = retries
        self._config = docker_config
        self._tokens: dict[tuple[str, str], str] = {}
        self._credentials: dict[str, Credentials | None] = {}
        self._sleep = sleep
        self.log = RequestLog()

    def __enter__(self) -> RegistryClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # requests

    def _creds(self, registry: str) -> Credentials | None:
        from assay.registry.auth import credentials_for  # only when a registry asks

        if registry not in self._credentials:
            self._credentials[registry] = credentials_for(registry, self._config)
        return self._credentials[registry]

    def _send(
        self, method: str, url: str, ref: Reference, scope: str, **kwargs: Any
    ) -> httpx.Response:
        """One request, with auth and retries; the response is open (streamed)."""
        headers = dict(kwargs.pop("headers", {}) or {})
        authorised = False
        for attempt in range(self._retries + 1):
            self._authorization(headers, ref, scope)
            response, error = self._attempt(method, url, ref.registry, headers, **kwargs)
            if response is None:
                if attempt < self._retries:
                    self._sleep(_retry_after(None, attempt))
                    continue
                raise RegistryError(url, error)
            if response.status_code == 401 and not authorised:
                challenge = response.headers.get("www-authenticate", "")
                response.close()
                self._authorise(ref, scope, challenge, url)
                authorised = True
                continue
            if self._waited_to_retry(response, attempt):
                continue
            return response
        raise RegistryError(url, "no answer after retries")

    def _waited_to_retry(self, response: httpx.Response, attempt: int) -> bool:
        """Whether the answer is one to retry and tries remain: then closed, and waited
        for (its Retry-After, else a growing delay)."""
        if not _retryable(response.status_code) or attempt >= self._retries:
            return False
        delay = _retry_after(response.headers.get("retry-after"), attempt)
        response.close()
        self._sleep(delay)
        return True

    def _authorization(self, headers: dict[str, str], ref: Reference, scope: str) -> None:
        token = self._tokens.get((ref.registry, scope))
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        elif ref.registry in self._basic:
            headers["Authorization"] = self._basic[ref.registry]

    def _attempt(
        self, method: str, url: str, registry: str, headers: dict[str, str], **kwargs: Any
    ) -> tuple[httpx.Response | None, str]:
        """One try: the response (logged), or None and why there was none."""
        import httpx

        start = time.perf_counter()
        try:
            response = self._http.send(method, url, registry, headers, **kwargs)
        except httpx.TimeoutException:
            return None, "timed out"
        except httpx.HTTPError as failure:
            return None, f"cannot connect ({type(failure).__name__})"
        self.log.entries.append((method, url, response.status_code, time.perf_counter() - start))
        return response, ""

    def _authorise(self, ref: Reference, scope: str, header: str, url: str) -> None:
        """The bearer-token flow of Docker Hub, GHCR and Artifact Registry; or Basic."""
        from assay.registry.auth import parse_challenge

        challenge = parse_challenge(header)
        creds = self._creds(ref.registry)
        if challenge is None:
            raise RegistryError(url, "401 without a WWW-Authenticate challenge")
        if challenge.scheme == "basic":
            self._basic[ref.registry] = _basic_header(creds, url)
            return
        realm = _bearer_realm(challenge, url)
        params = {"scope": challenge.params.get("scope", scope)}
        if "service" in challenge.params:
            params["service"] = challenge.params["service"]
        answer = self._bearer_answer(realm, params, creds)
        token = answer.get("token") or answer.get("access_token")
        if not isinstance(token, str) or not token:
            raise RegistryError(realm, "expected a token in the answer")
        self._tokens[(ref.registry, scope)] = token

    def _bearer_answer(
        self, realm: str, params: dict[str, str], creds: Credentials | None
    ) -> dict[str, Any]:
        """The token service's answer: a refresh token exchanged, else a GET (with Basic)."""
        import httpx

        if creds is not None and creds.identity_token is not None:
            return self._token_request(
                "POST",
                realm,
                data={
                    "grant_type": "refresh_token",
                    "refresh_token": creds.identity_token,
                    "service": params.get("service", ""),
                    "scope": params["scope"],
                    "client_id": "assay",
                },
            )
        auth = None
        if creds is not None and creds.password is not None:
            auth = httpx.BasicAuth(creds.username or "", creds.password)
        return self._token_request("GET", realm, params=params, auth=auth)

    def _token_request(self, method: str, realm: str, **kwargs: Any) -> dict[str, Any]:
        import httpx

        try:
            client = self._http.client(realm)
            response = client.request(method, realm, **kwargs)
        except httpx.HTTPError as failure:
            raise RegistryError(realm, f"cannot get a token ({type(failure).__name__})") from None
        if response.status_code != 200:
            hint = (
                " (check the credentials: docker login)"
                if response.status_code in (401, 403)
                else ""
            )
            raise RegistryError(realm, f"token request answered {response.status_code}{hint}")
        return _token_answer(response.content, realm)

    def _read(self, response: httpx.Response, url: str, limit: int, digest: str | None) -> bytes:
        """The body, bounded, hashed while it is read; checked against `digest`."""
        return b"".join(_checked_chunks(response, url, limit, digest))

    def _fail(self, response: httpx.Response, url: str, what: str) -> RegistryError:
        status = response.status_code
        response.close()
        reason = {401: "unauthorised", 403: "forbidden", 404: "not found"}.get(status, "")
        return RegistryError(url, f"{what}: HTTP {status}{' ' + reason if reason else ''}")

    # the API

    def manifest(self, ref: Reference, reference: str | None = None) -> Manifest:
        """The manifest or index `reference` (default: the reference's digest or tag)."""
        wanted = reference or ref.reference
        url = f"{ref.base_url}/manifests/{wanted}"
        response = self._send(
            "GET", url, ref, _pull(ref), headers={"Accept": ", ".join(MANIFEST_TYPES)}
        )
        if response.status_code != 200:
            raise self._fail(response, url, "manifest")
        digest = wanted if DIGEST.match(wanted) else None
        data = self._read(response, url, MAX_MANIFEST_BYTES, digest)
        return _manifest(data, url, response.headers.get("content-type", ""))

    def find_manifest(self, ref: Reference, reference: str) -> Manifest | None:
        """The manifest `reference`, or None when the registry has none (404): one round
        trip where a HEAD and a GET would take two."""
        url = f"{ref.base_url}/manifests/{reference}"
        response = self._send(
            "GET", url, ref, _pull(ref), headers={"Accept": ", ".join(MANIFEST_TYPES)}
        )
        if response.status_code == 404:
            response.close()
            return None
        if response.status_code != 200:
            raise self._fail(response, url, "manifest")
        digest = reference if DIGEST.match(reference) else None
        data = self._read(response, url, MAX_MANIFEST_BYTES, digest)
        return _manifest(data, url, response.headers.get("content-type", ""))

    def manifest_exists(self, ref: Reference, reference: str) -> bool:
        url = f"{ref.base_url}/manifests/{reference}"
        response = self._send(
            "HEAD", url, ref, _pull(ref), headers={"Accept": ", ".join(MANIFEST_TYPES)}
        )
        response.close()
        if response.status_code == 404:
            return False
        if response.status_code != 200:
            raise self._fail(response, url, "manifest")
        return True

    def blob(self, ref: Reference, digest: str, limit: int = MAX_BLOB_BYTES) -> bytes:
        return b"".join(self.blob_chunks(ref, digest, limit))

    def referrers(
        self, ref: Reference, digest: str, artifact_type: str | None = None
    ) -> list[dict[str, Any]]:
        """The OCI 1.1 referrers of `digest`; where the registry has no referrers API,
        the tag schema's fallback (`sha256-HEX`, an index listing them)."""
        index = self._referrers_index(ref, digest, artifact_type)
        if index is None:
            return []
        found = index.descriptors
        if artifact_type is not None:
            found = [d for d in found if d.get("artifactType") == artifact_type]
        return found

    def _referrers_index(
        self, ref: Reference, digest: str, artifact_type: str | None
    ) -> Manifest | None:
        """The index listing the referrers: the API's answer, else the fallback tag's
        index (None when there is none)."""
        url = f"{ref.base_url}/referrers/{digest}"
        params = {"artifactType": artifact_type} if artifact_type else None
        response = self._send("GET", url, ref, _pull(ref), params=params)
        if response.status_code == 200:
            data = self._read(response, url, MAX_MANIFEST_BYTES, None)
            return _manifest(data, url, OCI_INDEX)
        if response.status_code in (404, 405):
            response.close()
            fallback = self.find_manifest(ref, digest.replace(":", "-"))
            return fallback if fallback is not None and fallback.is_index else None
        raise self._fail(response, url, "referrers")

    def tags(self, ref: Reference) -> list[str]:
        url = f"{ref.base_url}/tags/list"
        response = self._send("GET", url, ref, _pull(ref))
        if response.status_code != 200:
            raise self._fail(response, url, "tags")
        data = self._read(response, url, MAX_MANIFEST_BYTES, None)
        try:
            tags = json.loads(data).get("tags") or []
        except (ValueError, AttributeError):
            raise RegistryError(url, 'expected {"tags": [...]}') from None
        return [t for t in tags if isinstance(t, str)]

    # pushing (tests, `assay fetch` mirrors)

    def blob_chunks(self, ref: Reference, digest: str, limit: int) -> Iterator[bytes]:
        """The blob as it arrives, bounded by `limit` and hashed on the way: the last
        chunk is followed by a `RegistryError` when the content lacks `digest` (so a
        caller writes to a temporary file, and keeps it only when the loop ends)."""
        if not DIGEST.match(digest):
            raise RegistryError(f"{ref.base_url}/blobs/{digest}", "expected a sha256 digest")
        url = f"{ref.base_url}/blobs/{digest}"
        response = self._send("GET", url, ref, _pull(ref))
        if response.status_code != 200:
            raise self._fail(response, url, "blob")
        yield from _checked_chunks(response, url, limit, digest)

    def push_blob_file(self, ref: Reference, path: Path) -> tuple[str, int]:
        """Upload a file as a blob without holding it: hashed in a first pass, then sent
        as the body of the upload's PUT a piece at a time (`FileBody`); the digest and
        the size. A blob the repository already has is not sent again."""
        digest, size = file_digest(path)
        url = f"{ref.base_url}/blobs/{digest}"
        response = self._send("HEAD", url, ref, _push(ref))
        response.close()
        if response.status_code == 200:
            return digest, size
        url = f"{ref.base_url}/blobs/uploads/"
        location = self._upload_location(self._send("POST", url, ref, _push(ref)), ref, url)
        separator = "&" if "?" in location else "?"
        response = self._send(
            "PUT",
            f"{location}{separator}digest={digest}",
            ref,
            _push(ref),
            content=FileBody(path),
            headers={"Content-Type": "application/octet-stream", "Content-Length": str(size)},
        )
        if response.status_code != 201:
            raise self._fail(response, url, "blob upload")
        response.close()
        return digest, size

    def _upload_location(self, response: httpx.Response, ref: Reference, url: str) -> str:
        """Where an upload goes on (an accepted POST's or PATCH's Location), absolute."""
        if response.status_code not in (201, 202):
            raise self._fail(response, url, "blob upload")
        location = str(response.headers.get("location", ""))
        for _ in bounded_chunks(response, url, MAX_TOKEN_BYTES):
            pass  # (a body read to its end lets the next request reuse the connection)
        response.close()
        if location.startswith("/"):
            scheme = "http" if ref.loopback else "https"
            location = f"{scheme}://{ref.registry}{location}"
        return location

    def push_blob(self, ref: Reference, data: bytes) -> str:
        digest = sha256_digest(data)
        url = f"{ref.base_url}/blobs/uploads/"
        location = self._upload_location(self._send("POST", url, ref, _push(ref)), ref, url)
        separator = "&" if "?" in location else "?"
        upload = f"{location}{separator}digest={digest}"
        response = self._send(
            "PUT",
            upload,
            ref,
            _push(ref),
            content=data,
            headers={"Content-Type": "application/octet-stream"},
        )
        if response.status_code != 201:
            raise self._fail(response, url, "blob upload")
        response.close()
        return digest

    def push_manifest(self, ref: Reference, reference: str, data: bytes, media_type: str) -> str:
        url = f"{ref.base_url}/manifests/{reference}"
        response = self._send(
            "PUT", url, ref, _push(ref), content=data, headers={"Content-Type": media_type}
        )
        if response.status_code != 201:
            raise self._fail(response, url, "manifest upload")
        response.close()
        return sha256_digest(data)


class Transports:
    """HTTP clients made when first needed, and redirects followed hop by hop.

    A TLS client (the default trust store, loaded once per process) serves https:// URLs
    only; a plain one serves loopback http:// URLs only and never speaks TLS. Neither
    follows redirects by itself: `send` does, choosing the client for each hop (so a
    loopback registry cannot send a request to an unverified https:// host), and sends
    `Authorization` only to the registry's own host (a blob redirected to storage never
    carries the registry's token).
    """

    MAX_REDIRECTS: Final = 5

    def __init__(self, timeout: float, transport: httpx.BaseTransport | None = None) -> None:
        self._timeout = timeout
        self._transport = transport
        self._tls: httpx.Client | None = None
        self._plain: httpx.Client | None = None

    def client(self, url: str) -> httpx.Client:
        import httpx

        if url.startswith("https://"):
            if self._tls is None:
                self._tls = httpx.Client(
                    timeout=self._timeout,
                    transport=self._transport,
                    verify=default_tls_context(),
                    follow_redirects=False,
                    trust_env=False,
                )
            return self._tls
        if _loopback_url(url):
            if self._plain is None:
                self._plain = httpx.Client(
                    timeout=self._timeout,
                    transport=self._transport,
                    verify=_no_trust(),  # only http:// URLs go through it; TLS would fail
                    follow_redirects=False,
                    trust_env=False,
                )
            return self._plain
        raise RegistryError(url, "expected an https:// URL (plain HTTP only on loopback)")

    def send(
        self, method: str, url: str, host: str, headers: dict[str, str], **kwargs: Any
    ) -> httpx.Response:
        from urllib.parse import urljoin, urlsplit

        for _ in range(self.MAX_REDIRECTS + 1):
            sent = dict(headers)
            if urlsplit(url).netloc != host:
                sent.pop("Authorization", None)
            client = self.client(url)
            request = client.build_request(method, url, headers=sent, **kwargs)
            response = client.send(request, stream=True)
            location = response.headers.get("location")
            if response.status_code not in (301, 302, 303, 307, 308) or not location:
                return response
            response.close()
            url = urljoin(url, location)
            if _becomes_get(response.status_code, method):
                method, kwargs = "GET", {}
        raise RegistryError(url, f"more than {self.MAX_REDIRECTS} redirects")

    def close(self) -> None:
        for client in (self._tls, self._plain):
            if client is not None:
                client.close()


def _becomes_get(status: int, method: str) -> bool:
    """Whether a redirect is followed with a GET (and no body): a 303, or a 301 or 302 of
    a method other than GET and HEAD, as browsers and httpx do."""
    return status == 303 or (status in (301, 302) and method not in ("GET", "HEAD"))


FILE_PIECE_BYTES: Final = 1024 * 1024


class FileBody:
    """A file as a request body, read a piece at a time each time it is sent (so a
    retried request sends it whole again)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __iter__(self) -> Iterator[bytes]:
        with self.path.open("rb") as data:
            while piece := data.read(FILE_PIECE_BYTES):
                yield piece


def file_digest(path: Path) -> tuple[str, int]:
    """The sha256 digest and the size of a file, read a piece at a time."""
    hasher, size = hashlib.sha256(), 0
    for piece in FileBody(path):
        hasher.update(piece)
        size += len(piece)
    return "sha256:" + hasher.hexdigest(), size


def _no_trust() -> Any:
    """A verifying TLS context that trusts no certificate (cheap: nothing to load)."""
    import ssl

    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


@functools.cache
def default_tls_context() -> Any:
    """The default trust store as an SSL context, loaded once per process (loading it
    takes tens of milliseconds: a loopback verification does not pay it)."""
    import httpx

    return httpx.create_ssl_context()


def _pull(ref: Reference) -> str:
    return f"repository:{ref.repository}:pull"


def _push(ref: Reference) -> str:
    return f"repository:{ref.repository}:pull,push"


def _token_answer(content: bytes, realm: str) -> dict[str, Any]:
    if len(content) > MAX_TOKEN_BYTES:
        raise RegistryError(realm, "the token answer is too large")
    try:
        answer = json.loads(content)
    except ValueError:
        raise RegistryError(realm, "expected a JSON token answer") from None
    if not isinstance(answer, dict):
        raise RegistryError(realm, "expected a JSON object")
    return answer


def bounded_chunks(response: Any, url: str, limit: int) -> Iterator[bytes]:
    """The body's chunks, refused once more than `limit` bytes have come."""
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > limit:
            raise RegistryError(url, f"expected at most {limit} bytes, the answer is larger")
        yield chunk


def _basic_header(creds: Credentials | None, url: str) -> str:
    if creds is None or creds.password is None:
        raise RegistryError(url, "401: the registry wants credentials (docker login)")
    pair = f"{creds.username or ''}:{creds.password}".encode()
    return "Basic " + base64.b64encode(pair).decode()


def _bearer_realm(challenge: Challenge, url: str) -> str:
    """The token service a Bearer challenge names (HTTPS, or a loopback host's)."""
    if challenge.scheme != "bearer" or "realm" not in challenge.params:
        raise RegistryError(url, f"401 with an unusable challenge ({challenge.scheme})")
    realm = challenge.params["realm"]
    if not _secure_url(realm):
        raise RegistryError(url, f"refusing a token realm that is not HTTPS: {realm}")
    return realm


def _secure_url(url: str) -> bool:
    """HTTPS, or plain HTTP to a loopback host (a local registry or test server)."""
    return url.startswith("https://") or _loopback_url(url)


def _loopback_url(url: str) -> bool:
    from urllib.parse import urlsplit

    from assay.registry.reference import is_loopback

    parts = urlsplit(url)
    return parts.scheme == "http" and is_loopback(parts.netloc)


def _retryable(status: int) -> bool:
    """Whether an HTTP status is worth another try (rate limited, or a server error)."""
    return status == 429 or status >= 500


def _retry_after(header: str | None, attempt: int) -> float:
    seconds = float(header.strip()) if header and header.strip().isdigit() else 0.5 * 2.0**attempt
    return min(MAX_BACKOFF, seconds)


def _manifest(data: bytes, url: str, content_type: str) -> Manifest:
    from assay.sigstore import load_json

    try:
        document = load_json(data, url)
    except Exception as failure:
        raise RegistryError(url, f"expected a JSON manifest ({failure})") from None
    if not isinstance(document, dict):
        raise RegistryError(url, "expected a JSON object (a manifest)")
    media_type = document.get("mediaType") or content_type.split(";", maxsplit=1)[0].strip()
    if media_type not in MANIFEST_TYPES:
        raise RegistryError(url, f"expected a manifest or index, found media type {media_type!r}")
    return Manifest(sha256_digest(data), str(media_type), data, document)


def iter_layers(manifest: Manifest) -> Iterator[dict[str, Any]]:
    yield from manifest.descriptors


def _checked_chunks(
    response: httpx.Response, url: str, limit: int, digest: str | None
) -> Iterator[bytes]:
    """The body as it arrives, bounded by `limit` and hashed on the way; after the last
    chunk, a `RegistryError` when the content lacks `digest` (None: not checked)."""
    hasher = hashlib.sha256()
    try:
        for chunk in bounded_chunks(response, url, limit):
            hasher.update(chunk)
            yield chunk
    except RegistryError:
        raise
    except Exception as failure:
        raise RegistryError(url, f"the answer broke off ({type(failure).__name__})") from None
    finally:
        response.close()
    if digest is not None and "sha256:" + hasher.hexdigest() != digest:
        raise RegistryError(url, f"the content does not have the digest {digest}")
