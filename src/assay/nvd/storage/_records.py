"""How the SQLite store keeps CVE records: NVD-encoded JSON, compressed one by one
against a dictionary of what NVD records have in common.

A CVE record is a few kilobytes of JSON, mostly key names, CVSS vocabulary, reference
URL prefixes and CPE strings, so each record compresses 2.5-4.5x on its own once the
compressor is primed with that vocabulary, while staying individually readable: a page
decodes only the records it returns, a `cveId` look-up one record.

Stored form: a record that starts with `{` is plain JSON (stores written before records
were compressed); otherwise the first byte names the format and the rest is the
compressed record:

* `FORMAT_LZ4_V3` (written now): an LZ4 block against the bytes of `records-v2.zdict`
  (as a plain LZ4 dictionary), its decoded length first (4 bytes, little-endian, as
  `lz4.block` writes it). A 2000-record page decodes in about half the CPU of format
  2 (3.1-3.7 against 6.2-7.6 ms), packing takes 13-19 us a record against 23, and the
  stored records are ~1.45x format 2's (docs/decisions.md, "Records stored as LZ4
  blocks").
* `FORMAT_ZSTD_V2` (read only): a zstd frame against `records-v2.zdict`, a dictionary
  trained on the bundled real records (`tools/build_records_dictionary.py`). Packing
  takes ~23 us and unpacking ~8 us for a 3.6 KB record, against ~124 and ~23 us for
  format 1 (docs/decisions.md, "Record compression").
* `FORMAT_DEFLATE_V1` (read only): raw deflate against `DICTIONARY_V1`.

A dictionary is part of the stored format: it must never change; a better one gets a
new format byte.
"""

from __future__ import annotations

import struct
import threading
import zlib
from importlib import resources

import lz4.block
import zstandard

from assay.errors import StoreError

FORMAT_DEFLATE_V1 = b"\x01"
FORMAT_ZSTD_V2 = b"\x02"
FORMAT_LZ4_V3 = b"\x03"
_WBITS = -15  # raw deflate: no zlib header or checksum (the database checks pages)
# A damaged length prefix must not make the reader allocate gigabytes: NVD's largest
# records are a few megabytes.
MAX_RECORD_BYTES = 256 * 2**20
_LENGTH = struct.Struct("<I")  # format 3's length prefix

# Most frequent material last: deflate reaches the end of the dictionary most cheaply.
_FRAGMENTS = (
    # descriptions
    "In the Linux kernel, the following vulnerability has been resolved:\\n\\n",
    "allows remote attackers to execute arbitrary code via a crafted ",
    "allows remote authenticated users to ",
    "allows local users to gain privileges via ",
    "cause a denial of service (memory corruption) or possibly have unspecified other impact ",
    "cause a denial of service (application crash) via a crafted ",
    "Cross-site scripting (XSS) vulnerability in ",
    "allows remote attackers to inject arbitrary web script or HTML via the ",
    "SQL injection vulnerability in ",
    "allows remote attackers to execute arbitrary SQL commands via the ",
    "Multiple cross-site scripting (XSS) vulnerabilities in ",
    "Buffer overflow in ",
    "Directory traversal vulnerability in ",
    "Cross-Site Request Forgery (CSRF) vulnerability in ",
    "The WordPress plugin before ",
    "plugin for WordPress is vulnerable to ",
    " due to insufficient input sanitization and output escaping ",
    "This makes it possible for authenticated attackers, with ",
    "An issue was discovered in ",
    "A vulnerability was found in ",
    "A vulnerability has been found in ",
    "classified as critical",
    "classified as problematic",
    "The exploit has been disclosed to the public and may be used.",
    "It is recommended to upgrade the affected component.",
    "which could allow an attacker to ",
    "A remote attacker could ",
    "An attacker could exploit this vulnerability by ",
    "A successful exploit could allow the attacker to ",
    "Successful exploitation of this vulnerability could ",
    "Vulnerability in the ",
    " component of Oracle ",
    "Supported versions that are affected are ",
    "Easily exploitable vulnerability allows ",
    "CVSS 3.1 Base Score ",
    " (Confidentiality, Integrity and Availability impacts). CVSS Vector: (CVSS:3.1\\/AV:N\\/AC:L\\/PR:N\\/UI:N\\/S:U\\/C:H\\/I:H\\/A:H).",
    "use-after-free",
    "NULL pointer dereference",
    "out-of-bounds read",
    "out-of-bounds write",
    "heap-based buffer overflow",
    "information disclosure",
    "privilege escalation",
    "denial of service",
    "in the context of the ",
    " before ",
    " through ",
    " and earlier",
    " versions ",
    # references
    "https:\\/\\/github.com\\/",
    "\\/security\\/advisories\\/GHSA-",
    "\\/commit\\/",
    "\\/issues\\/",
    "\\/blob\\/master\\/",
    "https:\\/\\/git.kernel.org\\/stable\\/c\\/",
    "https:\\/\\/www.oracle.com\\/security-alerts\\/cpu",
    "https:\\/\\/portal.msrc.microsoft.com\\/en-US\\/security-guidance\\/advisory\\/CVE-",
    "https:\\/\\/msrc.microsoft.com\\/update-guide\\/vulnerability\\/CVE-",
    "https:\\/\\/support.apple.com\\/",
    "https:\\/\\/source.android.com\\/security\\/bulletin\\/",
    "https:\\/\\/chromereleases.googleblog.com\\/",
    "https:\\/\\/crbug.com\\/",
    "https:\\/\\/bugzilla.redhat.com\\/show_bug.cgi?id=",
    "https:\\/\\/access.redhat.com\\/errata\\/RHSA-",
    "https:\\/\\/access.redhat.com\\/security\\/cve\\/CVE-",
    "https:\\/\\/lists.debian.org\\/debian-lts-announce\\/",
    "https:\\/\\/www.debian.org\\/security\\/",
    "https:\\/\\/security.gentoo.org\\/glsa\\/",
    "https:\\/\\/security.netapp.com\\/advisory\\/ntap-",
    "https:\\/\\/usn.ubuntu.com\\/",
    "https:\\/\\/ubuntu.com\\/security\\/notices\\/USN-",
    "https:\\/\\/lists.fedoraproject.org\\/archives\\/list\\/package-announce@lists.fedoraproject.org\\/message\\/",
    "https:\\/\\/wpscan.com\\/vulnerability\\/",
    "https:\\/\\/www.wordfence.com\\/threat-intel\\/vulnerabilities\\/id\\/",
    "https:\\/\\/plugins.trac.wordpress.org\\/changeset\\/",
    "https:\\/\\/vuldb.com\\/?id.",
    "https:\\/\\/vuldb.com\\/?ctiid.",
    "https:\\/\\/huntr.dev\\/bounties\\/",
    "https:\\/\\/www.zerodayinitiative.com\\/advisories\\/ZDI-",
    "https:\\/\\/tools.cisco.com\\/security\\/center\\/content\\/CiscoSecurityAdvisory\\/cisco-sa-",
    "https:\\/\\/kb.juniper.net\\/JSA",
    "https:\\/\\/cert-portal.siemens.com\\/productcert\\/pdf\\/ssa-",
    "https:\\/\\/www.cisa.gov\\/known-exploited-vulnerabilities-catalog",
    "https:\\/\\/packetstormsecurity.com\\/files\\/",
    "http:\\/\\/packetstormsecurity.com\\/files\\/",
    "https:\\/\\/www.exploit-db.com\\/exploits\\/",
    "http:\\/\\/www.securityfocus.com\\/bid\\/",
    "http:\\/\\/www.securitytracker.com\\/id\\/",
    "http:\\/\\/secunia.com\\/advisories\\/",
    "http:\\/\\/www.openwall.com\\/lists\\/oss-security\\/",
    "http:\\/\\/www.vupen.com\\/english\\/advisories\\/",
    "https:\\/\\/exchange.xforce.ibmcloud.com\\/vulnerabilities\\/",
    "http:\\/\\/lists.opensuse.org\\/opensuse-security-announce\\/",
    "http:\\/\\/www.ubuntu.com\\/usn\\/USN-",
    "http:\\/\\/rhn.redhat.com\\/errata\\/RHSA-",
    "http:\\/\\/www.debian.org\\/security\\/",
    "http:\\/\\/www.mandriva.com\\/security\\/advisories?name=MDVSA-",
    "\"tags\":[\"Third Party Advisory\",\"VDB Entry\"]",
    "\"tags\":[\"Exploit\",\"Third Party Advisory\"]",
    "\"tags\":[\"Mailing List\",\"Third Party Advisory\"]",
    "\"tags\":[\"Issue Tracking\",\"Patch\",\"Third Party Advisory\"]",
    "\"tags\":[\"Release Notes\",\"Vendor Advisory\"]",
    "\"tags\":[\"Patch\",\"Vendor Advisory\"]",
    "\"tags\":[\"Vendor Advisory\"]",
    "\"tags\":[\"Broken Link\"]",
    "\"tags\":[\"Patch\"]",
    # CVSS v4.0
    ',"cvssMetricV40":[{"source":"',
    '","type":"Secondary","cvssData":{"version":"4.0","vectorString":"CVSS:4.0\\/AV:N\\/AC:L\\/AT:N\\/PR:N\\/UI:N\\/VC:H\\/VI:H\\/VA:H\\/SC:N\\/SI:N\\/SA:N'
    "\\/E:X\\/CR:X\\/IR:X\\/AR:X\\/MAV:X\\/MAC:X\\/MAT:X\\/MPR:X\\/MUI:X\\/MVC:X\\/MVI:X\\/MVA:X\\/MSC:X\\/MSI:X\\/MSA:X"
    '\\/S:X\\/AU:X\\/R:X\\/V:X\\/RE:X\\/U:X","baseScore":6.9,"baseSeverity":"MEDIUM",'
    '"attackVector":"NETWORK","attackComplexity":"LOW","attackRequirements":"NONE",'
    '"privilegesRequired":"NONE","userInteraction":"NONE","vulnConfidentialityImpact":"LOW",'
    '"vulnIntegrityImpact":"LOW","vulnAvailabilityImpact":"LOW","subConfidentialityImpact":"NONE",'
    '"subIntegrityImpact":"NONE","subAvailabilityImpact":"NONE","exploitMaturity":"NOT_DEFINED",'
    '"confidentialityRequirement":"NOT_DEFINED","integrityRequirement":"NOT_DEFINED",'
    '"availabilityRequirement":"NOT_DEFINED","modifiedAttackVector":"NOT_DEFINED",'
    '"modifiedAttackComplexity":"NOT_DEFINED","modifiedAttackRequirements":"NOT_DEFINED",'
    '"modifiedPrivilegesRequired":"NOT_DEFINED","modifiedUserInteraction":"NOT_DEFINED",'
    '"modifiedVulnConfidentialityImpact":"NOT_DEFINED","modifiedVulnIntegrityImpact":"NOT_DEFINED",'
    '"modifiedVulnAvailabilityImpact":"NOT_DEFINED","modifiedSubConfidentialityImpact":"NOT_DEFINED",'
    '"modifiedSubIntegrityImpact":"NOT_DEFINED","modifiedSubAvailabilityImpact":"NOT_DEFINED",'
    '"Safety":"NOT_DEFINED","Automatable":"NOT_DEFINED","Recovery":"NOT_DEFINED",'
    '"valueDensity":"NOT_DEFINED","vulnerabilityResponseEffort":"NOT_DEFINED",'
    '"providerUrgency":"NOT_DEFINED"}}]',
    # CVSS v2
    '"cvssMetricV2":[{"source":"nvd@nist.gov","type":"Primary","cvssData":{"version":"2.0",'
    '"vectorString":"AV:N\\/AC:L\\/Au:N\\/C:P\\/I:P\\/A:P","accessVector":"NETWORK",'
    '"accessComplexity":"LOW","authentication":"NONE","confidentialityImpact":"PARTIAL",'
    '"integrityImpact":"PARTIAL","availabilityImpact":"PARTIAL","baseScore":7.5},'
    '"baseSeverity":"HIGH","exploitabilityScore":10.0,"impactScore":6.4,"acInsufInfo":false,'
    '"obtainAllPrivilege":false,"obtainUserPrivilege":false,"obtainOtherPrivilege":false,'
    '"userInteractionRequired":false}]',
    '"accessComplexity":"MEDIUM","authentication":"SINGLE","confidentialityImpact":"NONE",'
    '"integrityImpact":"NONE","availabilityImpact":"COMPLETE","baseScore":4.3},"baseSeverity":"MEDIUM",'
    '"exploitabilityScore":8.6,"impactScore":2.9,"acInsufInfo":false,"userInteractionRequired":true}]',
    # CVSS v3
    '"cvssMetricV30":[{"source":"nvd@nist.gov","type":"Primary","cvssData":{"version":"3.0",'
    '"vectorString":"CVSS:3.0\\/AV:N\\/AC:L\\/PR:N\\/UI:R\\/S:C\\/C:L\\/I:L\\/A:N","attackVector":"NETWORK",'
    '"attackComplexity":"LOW","privilegesRequired":"NONE","userInteraction":"REQUIRED",'
    '"scope":"CHANGED","confidentialityImpact":"LOW","integrityImpact":"LOW",'
    '"availabilityImpact":"NONE","baseScore":6.1,"baseSeverity":"MEDIUM"},'
    '"exploitabilityScore":2.8,"impactScore":2.7}]',
    '"attackVector":"LOCAL","attackComplexity":"HIGH","privilegesRequired":"LOW","userInteraction":"NONE",'
    '"scope":"UNCHANGED","confidentialityImpact":"HIGH","integrityImpact":"HIGH","availabilityImpact":"HIGH",'
    '"baseScore":7.8,"baseSeverity":"HIGH"},"exploitabilityScore":1.8,"impactScore":5.9}]',
    '"metrics":{"cvssMetricV31":[{"source":"nvd@nist.gov","type":"Primary","cvssData":{"version":"3.1",'
    '"vectorString":"CVSS:3.1\\/AV:N\\/AC:L\\/PR:N\\/UI:N\\/S:U\\/C:H\\/I:H\\/A:H","attackVector":"NETWORK",'
    '"attackComplexity":"LOW","privilegesRequired":"NONE","userInteraction":"NONE",'
    '"scope":"UNCHANGED","confidentialityImpact":"HIGH","integrityImpact":"HIGH",'
    '"availabilityImpact":"HIGH","baseScore":9.8,"baseSeverity":"CRITICAL"},'
    '"exploitabilityScore":3.9,"impactScore":5.9}',
    ',{"source":"','","type":"Secondary","cvssData":{"version":"3.1","vectorString":"CVSS:3.1\\/',
    # weaknesses, configurations, the record's head
    '"weaknesses":[{"source":"nvd@nist.gov","type":"Primary","description":[{"lang":"en","value":"CWE-79"}]}]',
    '"description":[{"lang":"en","value":"NVD-CWE-noinfo"}]},{"source":"',
    '"cisaExploitAdd":"2022-','"cisaActionDue":"2022-',
    '"cisaRequiredAction":"Apply mitigations per vendor instructions or discontinue use of the product '
    'if mitigations are unavailable.","cisaVulnerabilityName":"',
    '"cveTags":[{"sourceIdentifier":"','","tags":["disputed"]}],',
    '{"lang":"es","value":"',
    '"configurations":[{"operator":"AND","nodes":[{"operator":"OR","negate":false,"cpeMatch":['
    '{"vulnerable":false,"criteria":"cpe:2.3:o:microsoft:windows:-:*:*:*:*:*:*:*","matchCriteriaId":"',
    '{"vulnerable":true,"criteria":"cpe:2.3:o:linux:linux_kernel:*:*:*:*:*:*:*:*",'
    '"versionStartIncluding":"5.','"versionEndExcluding":"6.1.',
    '{"vulnerable":true,"criteria":"cpe:2.3:a:','","versionStartIncluding":"','","versionEndIncluding":"',
    ':*:*:*:*:*:*:*","versionEndExcluding":"','","matchCriteriaId":"',
    '"}]}]}],"references":[{"url":"',
    '{"id":"CVE-20','","sourceIdentifier":"cve@mitre.org","published":"20','","lastModified":"20',
    '","vulnStatus":"Modified","descriptions":[{"lang":"en","value":"',
    '","vulnStatus":"Analyzed","cveTags":[],"descriptions":[{"lang":"en","value":"',
    '","source":"cve@mitre.org"},{"url":"','","source":"nvd@nist.gov","tags":["Patch","Third Party Advisory"]},{"url":"',
    '","source":"secalert@redhat.com"},{"url":"','","source":"security@android.com"},{"url":"',
    '","source":"416baaa9-dc9f-4396-8d5f-8c081fb06d67"},{"url":"',
    '","source":"security-advisories@github.com","tags":["Third Party Advisory"]},{"url":"',
    '"},{"vulnerable":true,"criteria":"cpe:2.3:a:','"},{"vulnerable":false,"criteria":"cpe:2.3:o:',
    ':*:*:*:*:*:*:*","matchCriteriaId":"',
)  # fmt: skip
DICTIONARY_V1 = "".join(_FRAGMENTS).encode()


_RECORDS_V2_ZDICT = (resources.files("assay.data") / "records-v2.zdict").read_bytes()
DICTIONARY_V2 = zstandard.ZstdCompressionDict(
    _RECORDS_V2_ZDICT, dict_type=zstandard.DICT_TYPE_FULLDICT
)
# Format 3's dictionary: the same file's bytes, which LZ4 reads as text it may refer back
# to (its entropy tables at the start are a few hundred bytes LZ4 rarely matches).
DICTIONARY_V3 = _RECORDS_V2_ZDICT

_lz4_decompress = lz4.block.decompress

# zstandard's decompressor objects are not thread-safe: one per thread (the server
# reads from a thread pool). `lz4.block` keeps no state between calls.
_local = threading.local()


def _decompressor() -> zstandard.ZstdDecompressor:
    decompressor: zstandard.ZstdDecompressor | None = getattr(_local, "decompressor", None)
    if decompressor is None:
        decompressor = zstandard.ZstdDecompressor(dict_data=DICTIONARY_V2)
        _local.decompressor = decompressor
    return decompressor


def pack(record: bytes) -> bytes:
    """The stored form of an NVD-encoded record (format 3)."""
    packed: bytes = lz4.block.compress(record, dict=DICTIONARY_V3)
    return FORMAT_LZ4_V3 + packed


class DamagedRecord(StoreError):
    """A stored record cannot be read back: the store is damaged, not the request."""


def unpack(stored: bytes) -> bytes:
    """The NVD-encoded record from its stored form (plain JSON passes through);
    `DamagedRecord` when it cannot be read back."""
    head = stored[:1]
    if head == FORMAT_LZ4_V3:  # (first: a page calls this 2,000 times)
        if len(stored) < 5 or _LENGTH.unpack_from(stored, 1)[0] > MAX_RECORD_BYTES:
            raise DamagedRecord("damaged stored record: no plausible length")
        try:  # (lz4 checks that the block decodes to exactly the length it names)
            record: bytes = _lz4_decompress(memoryview(stored)[1:], dict=DICTIONARY_V3)
        except lz4.block.LZ4BlockError as error:
            raise DamagedRecord(f"damaged stored record: {error}") from None
        return record
    if head == FORMAT_ZSTD_V2:
        return _unpack_zstd(stored)
    if head == b"{":
        return stored
    if head == FORMAT_DEFLATE_V1:
        return _unpack_deflate(stored)
    raise DamagedRecord(f"damaged stored record: unknown format {head!r}")


def _unpack_zstd(stored: bytes) -> bytes:
    try:
        return _decompressor().decompress(memoryview(stored)[1:])
    except zstandard.ZstdError as error:
        raise DamagedRecord(f"damaged stored record: {error}") from None


def _unpack_deflate(stored: bytes) -> bytes:
    decompressor = zlib.decompressobj(_WBITS, DICTIONARY_V1)
    try:
        record = decompressor.decompress(memoryview(stored)[1:])
    except zlib.error as error:
        raise DamagedRecord(f"damaged stored record: {error}") from None
    if not decompressor.eof:  # `decompress` gave everything there is; no `flush` needed
        raise DamagedRecord("damaged stored record: truncated")
    return record
