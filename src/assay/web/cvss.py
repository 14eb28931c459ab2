"""CVSS vector strings explained: each `AV:N` pair as the metric's and the value's names.

Pure. The names are those of the CVSS specifications (v2.0, v3.0/v3.1, v4.0); a pair the
tables do not know is shown as found rather than dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

_V2: dict[str, tuple[str, dict[str, str]]] = {
    "AV": ("Access Vector", {"L": "Local", "A": "Adjacent Network", "N": "Network"}),
    "AC": ("Access Complexity", {"H": "High", "M": "Medium", "L": "Low"}),
    "Au": ("Authentication", {"M": "Multiple", "S": "Single", "N": "None"}),
    "C": ("Confidentiality Impact", {"N": "None", "P": "Partial", "C": "Complete"}),
    "I": ("Integrity Impact", {"N": "None", "P": "Partial", "C": "Complete"}),
    "A": ("Availability Impact", {"N": "None", "P": "Partial", "C": "Complete"}),
    "E": (
        "Exploitability",
        {
            "U": "Unproven",
            "POC": "Proof-of-Concept",
            "F": "Functional",
            "H": "High",
            "ND": "Not Defined",
        },
    ),
    "RL": (
        "Remediation Level",
        {
            "OF": "Official Fix",
            "TF": "Temporary Fix",
            "W": "Workaround",
            "U": "Unavailable",
            "ND": "Not Defined",
        },
    ),
    "RC": (
        "Report Confidence",
        {"UC": "Unconfirmed", "UR": "Uncorroborated", "C": "Confirmed", "ND": "Not Defined"},
    ),
}

_NLH = {"N": "None", "L": "Low", "H": "High"}
_V3: dict[str, tuple[str, dict[str, str]]] = {
    "AV": ("Attack Vector", {"N": "Network", "A": "Adjacent", "L": "Local", "P": "Physical"}),
    "AC": ("Attack Complexity", {"L": "Low", "H": "High"}),
    "PR": ("Privileges Required", _NLH),
    "UI": ("User Interaction", {"N": "None", "R": "Required"}),
    "S": ("Scope", {"U": "Unchanged", "C": "Changed"}),
    "C": ("Confidentiality", _NLH),
    "I": ("Integrity", _NLH),
    "A": ("Availability", _NLH),
    "E": (
        "Exploit Code Maturity",
        {
            "X": "Not Defined",
            "U": "Unproven",
            "P": "Proof-of-Concept",
            "F": "Functional",
            "H": "High",
        },
    ),
    "RL": (
        "Remediation Level",
        {
            "X": "Not Defined",
            "O": "Official Fix",
            "T": "Temporary Fix",
            "W": "Workaround",
            "U": "Unavailable",
        },
    ),
    "RC": (
        "Report Confidence",
        {"X": "Not Defined", "U": "Unknown", "R": "Reasonable", "C": "Confirmed"},
    ),
}

_V4: dict[str, tuple[str, dict[str, str]]] = {
    "AV": ("Attack Vector", {"N": "Network", "A": "Adjacent", "L": "Local", "P": "Physical"}),
    "AC": ("Attack Complexity", {"L": "Low", "H": "High"}),
    "AT": ("Attack Requirements", {"N": "None", "P": "Present"}),
    "PR": ("Privileges Required", _NLH),
    "UI": ("User Interaction", {"N": "None", "P": "Passive", "A": "Active"}),
    "VC": ("Vulnerable System Confidentiality", _NLH),
    "VI": ("Vulnerable System Integrity", _NLH),
    "VA": ("Vulnerable System Availability", _NLH),
    "SC": ("Subsequent System Confidentiality", _NLH),
    "SI": ("Subsequent System Integrity", _NLH),
    "SA": ("Subsequent System Availability", _NLH),
    "E": (
        "Exploit Maturity",
        {"X": "Not Defined", "A": "Attacked", "P": "Proof-of-Concept", "U": "Unreported"},
    ),
    "S": ("Safety", {"X": "Not Defined", "N": "Negligible", "P": "Present"}),
    "AU": ("Automatable", {"X": "Not Defined", "N": "No", "Y": "Yes"}),
    "R": ("Recovery", {"X": "Not Defined", "A": "Automatic", "U": "User", "I": "Irrecoverable"}),
    "V": ("Value Density", {"X": "Not Defined", "D": "Diffuse", "C": "Concentrated"}),
    "RE": (
        "Vulnerability Response Effort",
        {"X": "Not Defined", "L": "Low", "M": "Moderate", "H": "High"},
    ),
    "U": (
        "Provider Urgency",
        {"X": "Not Defined", "Clear": "Clear", "Green": "Green", "Amber": "Amber", "Red": "Red"},
    ),
}

TABLES = {"2": _V2, "3": _V3, "4": _V4}


@dataclass(frozen=True, slots=True)
class MetricPart:
    code: str  # "AV:N"
    metric: str  # "Attack Vector"
    value: str  # "Network"


def explain_vector(vector: str) -> list[MetricPart]:
    """The parts of `vector` (with or without its `CVSS:x.y/` prefix), named."""
    parts = [part for part in vector.split("/") if part]
    major = "2"
    if parts and parts[0].upper().startswith("CVSS:"):
        major = parts[0][5:6] or "3"
        parts = parts[1:]
    table = TABLES.get(major, _V3)
    explained: list[MetricPart] = []
    for part in parts:
        name, _, value = part.partition(":")
        metric_name, values = table.get(name, (name, {}))
        explained.append(MetricPart(part, metric_name, values.get(value, value)))
    return explained
