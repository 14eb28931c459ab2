"""DSSE (Dead Simple Signing Envelope): sign and verify over exact bytes.

    envelope = dsse.Envelope.from_json(data)
    verified = dsse.verify(envelope, [public_key], threshold=1,
                           payload_type=dsse.INTOTO_PAYLOAD_TYPE)
    statement = json.loads(verified.payload)   # only verified bytes are parsed

`verify` returns the payload bytes and the keys that signed them; it never parses the
payload. A signature's `keyid` is a hint only: every trusted key is tried.
"""

from assay.dsse._envelope import (
    INTOTO_PAYLOAD_TYPE,
    MAX_DEPTH,
    MAX_ENVELOPE_BYTES,
    MAX_SIGNATURES,
    Envelope,
    Signature,
    b64decode,
    pae,
    read_envelopes,
)
from assay.dsse._report import KeyName, SignatureReport, SigningReport, signature_report
from assay.dsse._verify import (
    SignatureCheck,
    Signer,
    VerifiedPayload,
    Verifier,
    check_signatures,
    key_fingerprint,
    sign,
    verify,
)

__all__ = [
    "INTOTO_PAYLOAD_TYPE",
    "MAX_DEPTH",
    "MAX_ENVELOPE_BYTES",
    "MAX_SIGNATURES",
    "Envelope",
    "KeyName",
    "Signature",
    "SignatureCheck",
    "SignatureReport",
    "Signer",
    "SigningReport",
    "VerifiedPayload",
    "Verifier",
    "b64decode",
    "check_signatures",
    "key_fingerprint",
    "pae",
    "read_envelopes",
    "sign",
    "signature_report",
    "verify",
]
