"""A `cpeName` search leaves out the criteria the CPE match feed expands, in the form
each database plans best (`_sql.cpe_name_cves`): PostgreSQL checks it as an anti-join
after the cheaper conditions, not as a subquery run for every criterion of the product;
SQLite's form tests the missing id first. Both answer the same."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import orjson
import pytest
from tests.conftest import backends

from assay.nvd.cve_query import parse_cve_query
from assay.nvd.storage._postgres_rows import bound
from assay.nvd.storage._sql import POSTGRES, SQLITE, SqlBuilder, cve_ids_select
from assay.nvd.storage.postgres import PostgresStore
from assay.nvd.storage.sqlite import SqliteStore

pytestmark = pytest.mark.skipif("postgres" not in backends(), reason="PostgreSQL only")

# Versions inside ranges of the bundled CVEs (CVE-2016-1585's AppArmor, CVE-2022-0011's
# PAN-OS) and a literal version (CVE-1999-0019's NCR MP-RAS).
NAMES = (
    "cpe:2.3:a:canonical:apparmor:3.0.5:*:*:*:*:*:*:*",
    "cpe:2.3:o:paloaltonetworks:pan-os:9.1.3:*:*:*:*:*:*:*",
    "cpe:2.3:a:ncr:mp-ras:3.0:*:*:*:*:*:*:*",
)


def _plan_nodes(plan: dict[str, object]) -> Iterator[dict[str, object]]:
    yield plan
    for child in plan.get("Plans", []):  # type: ignore[attr-defined]
        yield from _plan_nodes(child)


@pytest.mark.parametrize("name", NAMES)
def test_postgresql_leaves_expanded_criteria_out_by_an_anti_join(
    bundled_stores: tuple[SqliteStore, PostgresStore], name: str
) -> None:
    sqlite, postgres = bundled_stores
    query = parse_cve_query([("cpeName", name)])
    builder = SqlBuilder(POSTGRES)
    select = cve_ids_select(replace(query.filter_key, no_rejected=False), builder)
    with postgres._using("testing") as connection:
        (plan,) = connection.execute(
            "EXPLAIN (FORMAT JSON) " + select, bound(builder.params)
        ).fetchone()  # type: ignore[misc]
        found = {int(row[0]) for row in connection.execute(select, bound(builder.params))}
    nodes = list(_plan_nodes(orjson.loads(orjson.dumps(plan))[0]["Plan"]))
    assert any(node.get("Join Type") == "Anti" for node in nodes)
    assert not any(node.get("Subplan Name") for node in nodes)
    assert "IS NULL OR NOT EXISTS" not in select
    assert "IS NULL OR NOT EXISTS" in cve_ids_select(query.filter_key, SqlBuilder(SQLITE))
    answers = [store.search_cves(query) for store in (sqlite, postgres)]
    assert answers[0].total == answers[1].total == len(found)
    assert answers[0].records == answers[1].records


def test_the_bundled_names_hit_cves(bundled_stores: tuple[SqliteStore, PostgresStore]) -> None:
    totals = [bundled_stores[1].search_cves(parse_cve_query([("cpeName", n)])).total for n in NAMES]
    assert all(total > 0 for total in totals), totals
