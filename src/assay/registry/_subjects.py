"""The subject check that npm's and PyPI's attestations share: exactly one subject."""

from __future__ import annotations

from typing import Any

from assay.results import Check


def one_subject(statement: dict[str, Any], check: str) -> tuple[Check, dict[str, Any] | None]:
    """The check `check` that the statement has exactly one subject object, and that
    subject (None when it has not)."""
    subjects: Any = statement.get("subject")
    one = isinstance(subjects, list) and len(subjects) == 1 and isinstance(subjects[0], dict)
    found = len(subjects) if isinstance(subjects, list) else None
    subject: dict[str, Any] | None = subjects[0] if one else None
    return Check(check, one, 1, found), subject
