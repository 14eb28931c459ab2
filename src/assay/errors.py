"""The one error root of assay.

    AssayError                    anything assay raises on purpose
    ├── InputError                data or arguments that are not what they must be
    │   ├── QueryError            an HTTP query parameter (names the parameter)
    │   ├── IngestError           a record or file being imported (names file and position)
    │   └── AttestationError      an attestation, envelope or bundle (names the JSON path)
    ├── StoreError                the storage backend failed or is unusable
    ├── ClientError               talking to an NVD-compatible service failed
    ├── RegistryError             a registry or attestation service failed (names the URL)
    └── VerificationError         a signature, policy or summary did not verify

Every message says where, what was expected and what was found, so that a user can
fix the input without reading a traceback.
"""

from __future__ import annotations


class AssayError(Exception):
    """Root of every error assay raises on purpose."""

    def diagnostics(self) -> str:
        """A human-readable explanation, suitable for a terminal."""
        return str(self)


class InputError(AssayError):
    """Input is malformed: `where` names the place, the message says expected and found."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}" if where else message)
        self.where = where
        self.reason = message


class QueryError(InputError):
    """A query parameter is invalid; `parameter` is its canonical wire name."""

    def __init__(self, parameter: str, message: str) -> None:
        super().__init__(parameter, message)
        self.parameter = parameter


class IngestError(InputError):
    """A file or record being imported is malformed."""

    def __init__(self, source: str, position: str, message: str) -> None:
        where = f"{source} at {position}" if position else source
        super().__init__(where, message)
        self.source = source
        self.position = position


class AttestationError(InputError):
    """An attestation document cannot be read or is structurally unusable."""


class StoreError(AssayError):
    """The store could not be opened, migrated or queried."""


class StoreBusy(StoreError):
    """Another process holds the store's named lock (a sync already writing it)."""


class WritesUnavailable(StoreError):
    """A write was refused because the store's primary does not answer, while its read
    replicas still serve reads (`assay serve --read-store`). `reason` is safe to show a
    client: it names no host."""

    reason = "The primary store is unavailable: reads are served from replicas, writes are refused"


class ClientError(AssayError):
    """A request to an NVD-compatible service failed."""


class RegistryError(AssayError):
    """A registry or attestation service could not be reached or answered wrongly."""

    def __init__(self, url: str, message: str) -> None:
        super().__init__(f"{url}: {message}")
        self.url = url
        self.reason = message


class VerificationError(AssayError):
    """Evidence did not verify: a signature, a policy check or a summary attestation."""
