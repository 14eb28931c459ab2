"""Find a legacy envelope's Rekor entry online, as slsa-verifier does, and verify it.

slsa-verifier searches Rekor with the envelope and its certificate as a proposed
`intoto/0.0.1` entry (`POST /api/v1/log/entries/retrieve`); exactly one entry must come
back. assay does the same, then checks the answer offline: the entry must log this
envelope (payload hash and certificate), its inclusion proof and signed checkpoint and
its signed entry timestamp must verify with a Rekor key of a trusted root. The entry's
integrated time is then the verified signing time for the certificate chain.

Only `assay verify-artifact --rekor-url URL` uses this; nothing else goes online.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Final

from assay.errors import VerificationError
from assay.sigstore import validity
from assay.sigstore.legacy import envelope_parts
from assay.sigstore.roots import Root
from assay.urls import redact_url

MAX_RESPONSE_BYTES: Final = 4 * 1024 * 1024
SEARCH_PATH: Final = "/api/v1/log/entries/retrieve"


def proposed_entry(document: dict[str, Any], where: str) -> dict[str, Any]:
    """The search query slsa-verifier sends: the envelope and its certificate."""
    _, _, _, pem = envelope_parts(document, where)
    return {
        "apiVersion": "0.0.1",
        "kind": "intoto",
        "spec": {
            "content": {"envelope": json.dumps(document, separators=(",", ":"))},
            "publicKey": base64.b64encode(pem).decode(),
        },
    }


class RekorClient:
    """A Rekor v1 API at `url`, answers verified against `roots`."""

    def __init__(self, url: str, roots: Sequence[Root], *, timeout: float = 10.0) -> None:
        self.url = url.rstrip("/")
        self.roots = list(roots)
        self.timeout = timeout

    def lookup(self, document: dict[str, Any], where: str) -> tuple[datetime, int]:
        """(integrated time, log index) of the one entry that logs this envelope."""
        answer = self._search(proposed_entry(document, where), where)
        _, entry = _single_entry(answer, where)
        _, payload, _, pem = envelope_parts(document, where)
        _check_body(entry, payload, pem, where)
        _verify_entry(entry, self.roots, where)
        return datetime.fromtimestamp(int(entry["integratedTime"]), tz=UTC), int(entry["logIndex"])

    def _search(self, proposed: dict[str, Any], where: str) -> Any:
        import httpx

        try:
            with (
                httpx.Client(timeout=self.timeout) as client,
                client.stream(
                    "POST", self.url + SEARCH_PATH, json={"entries": [proposed]}
                ) as response,
            ):
                body = b""
                for chunk in response.iter_bytes():
                    body += chunk
                    if len(body) > MAX_RESPONSE_BYTES:
                        raise VerificationError(f"{where}: the Rekor answer is too large")
                status = response.status_code
        except httpx.HTTPError as error:
            raise VerificationError(
                f"{where}: Rekor search at {redact_url(self.url)} failed: {error}"
            ) from None
        if status != 200:
            raise VerificationError(
                f"{where}: Rekor search at {redact_url(self.url)} answered HTTP {status}"
            )
        try:
            return json.loads(body)
        except ValueError:
            raise VerificationError(f"{where}: the Rekor answer is not JSON") from None


def _single_entry(answer: Any, where: str) -> tuple[str, dict[str, Any]]:
    if not isinstance(answer, list) or len(answer) != 1 or not isinstance(answer[0], dict):
        raise VerificationError(
            f"{where}: expected one matching Rekor entry, found none or several"
        )
    entries = list(answer[0].items())
    if len(entries) != 1 or not isinstance(entries[0][1], dict):
        raise VerificationError(f"{where}: expected one matching Rekor entry")
    return entries[0][0], entries[0][1]


def _check_body(entry: dict[str, Any], payload: bytes, pem: bytes, where: str) -> None:
    try:
        body = json.loads(base64.b64decode(entry["body"]))
        spec = body["spec"]
        logged_hash = spec["content"]["payloadHash"]
        logged_key = base64.b64decode(spec["publicKey"])
    except (KeyError, TypeError, ValueError):
        raise VerificationError(f"{where}: the Rekor entry is not an intoto entry") from None
    if body.get("kind") != "intoto":
        raise VerificationError(f"{where}: the Rekor entry is a {body.get('kind')!r} entry")
    if logged_hash != {"algorithm": "sha256", "value": hashlib.sha256(payload).hexdigest()}:
        raise VerificationError(f"{where}: the Rekor entry logs another payload")
    if logged_key.strip() != pem.strip():
        raise VerificationError(f"{where}: the Rekor entry logs another certificate")


def _verify_entry(entry: dict[str, Any], roots: Sequence[Root], where: str) -> None:
    from sigstore._internal.trust import KeyringPurpose
    from sigstore.models import TransparencyLogEntry
    from sigstore_models.rekor import v1

    try:
        proof = entry["verification"]["inclusionProof"]
        inner = v1.TransparencyLogEntry.from_json(
            json.dumps(
                {
                    "logIndex": str(entry["logIndex"]),
                    "logId": {"keyId": base64.b64encode(bytes.fromhex(entry["logID"])).decode()},
                    "kindVersion": {"kind": "intoto", "version": "0.0.1"},
                    "integratedTime": str(entry["integratedTime"]),
                    "inclusionPromise": {
                        "signedEntryTimestamp": entry["verification"]["signedEntryTimestamp"]
                    },
                    "inclusionProof": {
                        "logIndex": str(proof["logIndex"]),
                        "rootHash": base64.b64encode(bytes.fromhex(proof["rootHash"])).decode(),
                        "treeSize": str(proof["treeSize"]),
                        "hashes": [
                            base64.b64encode(bytes.fromhex(h)).decode() for h in proof["hashes"]
                        ],
                        "checkpoint": {"envelope": proof["checkpoint"]},
                    },
                    "canonicalizedBody": entry["body"],
                }
            )
        )
        log_entry = TransparencyLogEntry(inner)
    except Exception as error:
        raise VerificationError(f"{where}: malformed Rekor entry: {str(error)[:200]}") from None
    errors = []
    for root in roots:
        try:
            trusted = root.load()
            validity.check_log_entry(trusted._inner, inner)  # the key at the integrated time
            log_entry._verify(trusted.rekor_keyring(KeyringPurpose.VERIFY))
            return
        except Exception as error:
            errors.append(
                f"{root.name}: {str(error).splitlines()[0][:200] if str(error) else type(error).__name__}"
            )
    raise VerificationError(f"{where}: the Rekor entry did not verify ({'; '.join(errors)})")
