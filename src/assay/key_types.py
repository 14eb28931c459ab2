"""The key types assay can generate, apart from the key code so that the command line
lists them without loading cryptography. `assay.keys` re-exports `KeyType`."""

from __future__ import annotations

import enum


class KeyType(enum.StrEnum):
    """Key types that `assay keys generate` can create."""

    ED25519 = "ed25519"
    ECDSA_P256 = "ecdsa-p256"
    ECDSA_P384 = "ecdsa-p384"
    ECDSA_P521 = "ecdsa-p521"
    RSA_3072 = "rsa-3072"
