"""A client for OCI registries (distribution API v2) and the attestations they hold.

    from assay.registry import RegistryClient, parse_reference, image_attestations

    reference = parse_reference("ghcr.io/acme/widget@sha256:...")
    with RegistryClient() as client:
        found = image_attestations(client, reference)   # cosign .att, referrers, bundles

Anonymous and bearer-token access (the WWW-Authenticate challenge of Docker Hub, GHCR
and Artifact Registry), credentials from `~/.docker/config.json` and credential helpers,
plain HTTP only for loopback registries. Every manifest and blob is checked against its
digest while it is read, and bounded in size. Importing this package imports no HTTP
library; the client does when it is made.
"""

from assay.registry.reference import Reference, parse_reference

__all__ = ["Reference", "parse_reference"]
