"""Fixtures of the VEX tests: signing keys made once per session."""

from __future__ import annotations

import pytest
from tests.audit.test_verify_cli import build  # noqa: F401 - a signed build, for verify tests

from assay.keys import PrivateKey, generate_private_key


@pytest.fixture(scope="session")
def vendor_key() -> PrivateKey:
    return generate_private_key("ecdsa-p256")


@pytest.fixture(scope="session")
def other_key() -> PrivateKey:
    return generate_private_key("ecdsa-p256")
