from __future__ import annotations

import assay.dsse
import assay.policy
import assay.verify


def test_public_names_exist() -> None:
    for module in (assay.dsse, assay.policy, assay.verify):
        missing = [name for name in module.__all__ if not hasattr(module, name)]
        assert missing == [], module.__name__
