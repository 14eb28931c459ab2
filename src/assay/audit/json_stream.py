"""The JSON contract of a scan, written a piece at a time.

    for chunk in json_chunks(result, verdict):
        out.write(chunk)

The bytes are exactly `orjson.dumps({**result.to_dict(), "verdict": verdict.to_dict()},
option=orjson.OPT_INDENT_2) + b"\\n"` (tests hold it to that), but the document is never
whole in memory: a scan of 10,000 components with 333,000 findings is 154 MB of JSON,
and the dictionaries behind it would be twice that. Components go out one at a time,
and what findings of one record share (id, severity, CVSS, KEV, CWEs) is encoded once.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

import orjson

from assay.audit.model import ComponentResult, ScanResult, Vulnerability
from assay.audit.rules import Verdict

__all__ = ["json_chunks"]

_INDENT: Final = orjson.OPT_INDENT_2
_COMPONENT_LEVEL: Final = 2
_FINDING_LEVEL: Final = 4
_FINDING_CLOSING: Final = b"\n" + b"  " * _FINDING_LEVEL + b"}"
_INSIDE: Final = b",\n" + b"  " * (_FINDING_LEVEL + 1)


def _dumps(value: Any, level: int) -> bytes:
    """`value` indented as it would be `level` deep in the document."""
    data = orjson.dumps(value, option=_INDENT)
    return data.replace(b"\n", b"\n" + b"  " * level) if level else data


class _Findings:
    """Findings encoded as `Vulnerability.to_dict()` would be, `_FINDING_LEVEL` deep: the
    record's part (id, severity, CVSS, KEV, CWEs) once per record, the rest per finding."""

    def __init__(self) -> None:
        self._heads: dict[tuple[object, ...], bytes] = {}
        self._tails: dict[tuple[object, ...], bytes] = {}

    def encoded(self, v: Vulnerability) -> bytes:
        if v.vex is not None:  # rare: a finding with a VEX statement is encoded whole
            return _dumps(v.to_dict(), _FINDING_LEVEL)
        return self._head(v) + self._tail(v) + _extra(v)

    def _head(self, v: Vulnerability) -> bytes:
        """The record's part, up to (not including) the finding's closing brace."""
        cvss = v.cvss
        key = (v.id, v.severity, v.kev, v.cwes) + (
            () if cvss is None else (cvss.version, cvss.base_score, cvss.vector)
        )
        head = self._heads.get(key)
        if head is None:
            whole = _dumps(
                {
                    "id": v.id,
                    "severity": v.severity,
                    "cvss": None if cvss is None else cvss.to_dict(),
                    "kev": v.kev,
                    "cwes": list(v.cwes),
                },
                _FINDING_LEVEL,
            )
            head = self._heads[key] = whole[: -len(_FINDING_CLOSING)]
        return head

    def _tail(self, v: Vulnerability) -> bytes:
        """The hit's part: its criteria, fix and condition."""
        hit = (v.match_criteria_id, v.fixed_in, v.conditional)
        tail = self._tails.get(hit)
        if tail is None:
            tail = self._tails[hit] = b"".join(
                (
                    _INSIDE,
                    b'"matchCriteriaId": ',
                    orjson.dumps(v.match_criteria_id),
                    _INSIDE,
                    b'"fixedIn": ',
                    orjson.dumps(v.fixed_in),
                    _INSIDE,
                    b'"conditional": ',
                    b"true" if v.conditional else b"false",
                )
            )
        return tail


def _extra(v: Vulnerability) -> bytes:
    """The finding's own part (KEV details, EPSS, aliases, sources), closed."""
    level = _FINDING_LEVEL + 1
    return b"".join(
        (
            _INSIDE,
            b'"kevDetail": ',
            _dumps(None if v.kev_detail is None else v.kev_detail.to_dict(), level),
            _INSIDE,
            b'"epss": ',
            _dumps(None if v.epss is None else v.epss.to_dict(), level),
            _INSIDE,
            b'"aliases": ',
            _dumps(list(v.aliases), level),
            _INSIDE,
            b'"sources": ',
            _dumps([source.to_dict() for source in v.sources], level),
            _FINDING_CLOSING,
        )
    )


_COMPONENT_CLOSING: Final = b"\n" + b"  " * _COMPONENT_LEVEL + b"}"
_FINDINGS_KEY: Final = b",\n" + b"  " * (_COMPONENT_LEVEL + 1) + b'"vulnerabilities": '
_FINDINGS_OPEN: Final = b"[\n" + b"  " * _FINDING_LEVEL
_FINDINGS_BETWEEN: Final = b",\n" + b"  " * _FINDING_LEVEL
_FINDINGS_CLOSE: Final = b"\n" + b"  " * (_FINDING_LEVEL - 1) + b"]"


def _component(component: ComponentResult, findings: _Findings) -> bytes:
    head = _dumps(component.to_dict(vulnerabilities=False), _COMPONENT_LEVEL)
    vulnerabilities = component.vulnerabilities
    return b"".join(
        (
            head[: -len(_COMPONENT_CLOSING)],
            _FINDINGS_KEY,
            _FINDINGS_OPEN if vulnerabilities else b"[]",
            _FINDINGS_BETWEEN.join(map(findings.encoded, vulnerabilities)),
            _FINDINGS_CLOSE if vulnerabilities else b"",
            _COMPONENT_CLOSING,
        )
    )


def json_chunks(result: ScanResult, verdict: Verdict) -> Iterator[bytes]:
    """The scan's JSON document with its verdict (see the module docstring)."""
    findings = _Findings()
    yield b'{\n  "components": '
    inside = b"\n" + b"  " * _COMPONENT_LEVEL
    first = True
    for component in result.components:
        yield (b"[" if first else b",") + inside + _component(component, findings)
        first = False
    yield b"[]" if first else b"\n  ]"
    rest = {
        "unidentified": [u.to_dict() for u in result.unidentified],
        "store": result.store.to_dict(),
        "inputs": [i.to_dict() for i in result.inputs],
        "verdict": verdict.to_dict(),
    }
    for key, value in rest.items():
        yield b",\n  " + orjson.dumps(key) + b": " + _dumps(value, 1)
    yield b"\n}\n"
