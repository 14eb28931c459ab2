"""securesystemslib verifies what assay signs with its defaults: assay writes the key id
`SSlibKey.from_crypto` computes (before, it wrote its own SPKI id and securesystemslib
verified 0 of 4 key types unless told that id). Signatures naming the older ids verify still."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from securesystemslib.dsse import Envelope as SslibEnvelope
from securesystemslib.signer import SSlibKey

from assay import dsse
from assay.key_types import KeyType
from assay.keys import generate_private_key, key_id

PAYLOAD_TYPE = "application/vnd.in-toto+json"


@pytest.mark.parametrize("kind", list(KeyType))
def test_securesystemslib_verifies_assay_signatures_with_its_default_key_ids(
    kind: KeyType,
) -> None:
    private = generate_private_key(kind)
    envelope = dsse.sign(b'{"_type": "x"}', PAYLOAD_TYPE, [private])
    theirs = SslibEnvelope.from_dict(json.loads(envelope.to_json()))
    public = SSlibKey.from_crypto(private.key.public_key())
    assert envelope.signatures[0].keyid == public.keyid
    verified = theirs.verify([public], threshold=1)
    assert set(verified) == {public.keyid}


@pytest.mark.parametrize("kind", [KeyType.ED25519, KeyType.ECDSA_P256])
def test_a_signature_naming_the_older_ids_still_verifies(kind: KeyType) -> None:
    private = generate_private_key(kind)
    public = private.public_key()
    for old_id in (key_id(private.key.public_key()), public.intoto_keyid):
        envelope = dsse.sign(b"{}", PAYLOAD_TYPE, [private])
        renamed = dsse.Envelope(
            envelope.payload,
            envelope.payload_type,
            (dsse.Signature(envelope.signatures[0].sig, old_id),),
        )
        assert old_id in public.keyids
        assert dsse.verify(renamed, [public]).signed_by == (public,)


def test_keys_show_prints_every_id(tmp_path: Path) -> None:
    prefix = tmp_path / "k"
    made = subprocess.run(
        [sys.executable, "-m", "assay", "keys", "generate", "--type", "ecdsa-p256",
         "--out", str(prefix), "--json"],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    generated = json.loads(made.stdout)
    for name in ("k.pub", "k.key"):
        shown = subprocess.run(
            [sys.executable, "-m", "assay", "keys", "show", str(tmp_path / name), "--json"],
            capture_output=True, text=True, check=True, timeout=60,
        )  # fmt: skip
        ids = json.loads(shown.stdout)
        assert ids["type"] == "ecdsa-p256"
        assert {k: ids[k] for k in ("keyid", "intotoKeyid", "fingerprint")} == {
            k: generated[k] for k in ("keyid", "intotoKeyid", "fingerprint")
        }
    assert len({generated["keyid"], generated["intotoKeyid"], generated["fingerprint"]}) == 3
