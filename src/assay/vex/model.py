"""VEX statements as typed values, whatever format they were read from.

Pure. A `VexDocument` (OpenVEX, CycloneDX VEX or CSAF `csaf_vex`) holds `VexStatement`s:
a vulnerability (id and aliases), the products it is about (purl, CPE or CycloneDX
`bom-ref`), a status in OpenVEX's words and what OpenVEX asks beside it (justification,
impact statement, action statement). Each reader maps its format's words onto
`VexStatus` with the tables below; nothing else in assay knows a format's own words.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final, Literal

from assay.errors import InputError

__all__ = [
    "CSAF_STATUS",
    "CYCLONEDX_STATUS",
    "OPENVEX_JUSTIFICATIONS",
    "SUPPRESSING",
    "Assessment",
    "ProductId",
    "Signature",
    "VexDocument",
    "VexError",
    "VexStatement",
    "VexStatus",
]


class VexError(InputError):
    """A VEX document cannot be used: `where` names the document and the JSON path."""


class VexStatus(enum.StrEnum):
    """OpenVEX's four statuses: every format's statuses are said in these words."""

    NOT_AFFECTED = "not_affected"
    AFFECTED = "affected"
    FIXED = "fixed"
    UNDER_INVESTIGATION = "under_investigation"


SUPPRESSING: Final = frozenset({VexStatus.NOT_AFFECTED, VexStatus.FIXED})
"""Statuses under which a finding stays in the output but fails no rule."""

CYCLONEDX_STATUS: Final = {
    "resolved": VexStatus.FIXED,
    "resolved_with_pedigree": VexStatus.FIXED,
    "exploitable": VexStatus.AFFECTED,
    "in_triage": VexStatus.UNDER_INVESTIGATION,
    "false_positive": VexStatus.NOT_AFFECTED,
    "not_affected": VexStatus.NOT_AFFECTED,
}
"""CycloneDX `analysis.state` in OpenVEX's words (`resolved_with_pedigree` is a
resolution, as `resolved`)."""

CSAF_STATUS: Final = {
    "known_not_affected": VexStatus.NOT_AFFECTED,
    "known_affected": VexStatus.AFFECTED,
    "fixed": VexStatus.FIXED,
    "first_fixed": VexStatus.FIXED,
    "under_investigation": VexStatus.UNDER_INVESTIGATION,
}
"""CSAF `product_status` groups in OpenVEX's words (the `csaf_vex` profile's groups;
`first_fixed` is a fix too)."""

OPENVEX_JUSTIFICATIONS: Final = (
    "component_not_present",
    "vulnerable_code_not_present",
    "vulnerable_code_not_in_execute_path",
    "vulnerable_code_cannot_be_controlled_by_adversary",
    "inline_mitigations_already_exist",
)

ProductKind = Literal["purl", "cpe", "ref"]


@dataclass(frozen=True, slots=True)
class ProductId:
    """One way a statement names a product: a purl, a CPE name or a `bom-ref`."""

    kind: ProductKind
    value: str


@dataclass(frozen=True, slots=True)
class Signature:
    """Who signed a document, as verified (`None` on a document: it was unsigned)."""

    signer: str
    """The trusted signer's name (a policy signer, or the key file or identity given)."""
    method: Literal["key", "sigstore"]
    detail: str = ""
    """The key's fingerprint or the certificate's identity and issuer."""


@dataclass(frozen=True, slots=True)
class VexStatement:
    """One statement: a vulnerability's status for some products."""

    vulnerability: str
    aliases: tuple[str, ...]
    products: tuple[ProductId, ...]
    status: VexStatus
    justification: str | None = None
    impact: str | None = None
    action_statement: str | None = None
    timestamp: datetime | None = None
    """When it was made (its own time, else its document's); `None` if neither says."""
    document: str = ""
    """The document's id (OpenVEX `@id`, CSAF `tracking.id`, CycloneDX `serialNumber`),
    else its file name."""
    author: str | None = None
    where: str = ""
    """The file and JSON path of the statement, for messages."""
    order: int = 0
    """Position among all statements read (ties of time go to the later one)."""

    @property
    def ids(self) -> tuple[str, ...]:
        return (self.vulnerability, *self.aliases)


@dataclass(frozen=True, slots=True)
class VexDocument:
    """A VEX document as read, with its statements and how its signature checked."""

    source: str
    """The file name."""
    format: str
    """`openvex`, `cyclonedx` or `csaf`."""
    spec_version: str
    id: str
    author: str | None
    timestamp: datetime | None
    statements: tuple[VexStatement, ...]
    sha256: str
    """Of the file's bytes: how a summary names the document."""
    signature: Signature | None = None
    notes: tuple[str, ...] = ()
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    """The document as parsed (the signed payload for a signed one)."""

    @property
    def signed(self) -> bool:
        return self.signature is not None


@dataclass(frozen=True, slots=True)
class Assessment:
    """What VEX says of one finding: the statement that won, in a finding's words."""

    status: VexStatus
    justification: str | None
    impact: str | None
    action_statement: str | None
    document: str
    author: str | None
    timestamp: str | None
    signed: bool = False
    source: str = ""
    """The file the statement came from."""

    @classmethod
    def of(cls, statement: VexStatement, document: VexDocument) -> Assessment:
        return cls(
            statement.status,
            statement.justification,
            statement.impact,
            statement.action_statement,
            statement.document,
            statement.author,
            None if statement.timestamp is None else format_time(statement.timestamp),
            document.signed,
            document.source,
        )

    @property
    def suppresses(self) -> bool:
        """`not_affected` and `fixed` findings fail no rule."""
        return self.status in SUPPRESSING

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": str(self.status),
            "justification": self.justification,
            "impact": self.impact,
            "actionStatement": self.action_statement,
            "document": self.document,
            "author": self.author,
            "timestamp": self.timestamp,
        }


def format_time(moment: datetime) -> str:
    """RFC 3339 in UTC with a `Z` (seconds, or microseconds when there are some)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    text = moment.astimezone(UTC).isoformat()
    return text.replace("+00:00", "Z")


def _six_fraction_digits(text: str) -> str:
    """The time with exactly 6 fraction digits when it has a fraction (Python reads at
    most 6), its offset kept."""
    head, dot, rest = text.partition(".")
    if not dot:
        return text
    digits = len(rest) - len(rest.lstrip("0123456789"))
    return head + "." + rest[:digits][:6].ljust(6, "0") + rest[digits:]


def parse_time(value: object, where: str) -> datetime | None:
    """An RFC 3339 time (fractions of any length), or `VexError` naming `where`."""
    if value in (None, ""):
        return None
    if not isinstance(value, str):
        raise VexError(where, f"expected an RFC 3339 time, found {value!r}")
    text = value.strip().replace("z", "Z")
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(_six_fraction_digits(text))
    except ValueError:
        raise VexError(where, f"expected an RFC 3339 time, found {value!r}") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
