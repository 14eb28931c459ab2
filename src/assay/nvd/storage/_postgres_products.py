"""The PostgreSQL store's CPE products, match criteria and change history (a mixin).

The same rules and answers as `_sqlite_products.py`, over the same queries
(`_sql_products.py`): every write is one transaction, an older record never replaces a
newer one, a change bumps the data generation, and a page is a slice of the ordered id
list of its result set (cached when large). Orders are `COLLATE "C"` columns, so they
sort as SQLite sorts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from assay.nvd.change_record import ChangeFacts
from assay.nvd.cpe_query import CpeQuery
from assay.nvd.cpe_record import CpeFacts
from assay.nvd.cpematch_query import CpeMatchQuery
from assay.nvd.cpematch_record import MatchFacts
from assay.nvd.cve_record import make_criteria
from assay.nvd.history_query import HistoryQuery
from assay.nvd.source_query import SourceQuery
from assay.nvd.source_record import SourceFacts
from assay.nvd.storage._postgres_rows import (
    CHANGE_COLUMNS,
    CPE_COLUMNS,
    MATCH_COLUMNS,
    MATCH_NAME_COLUMNS,
    SOURCE_COLUMNS,
    SOURCE_IDENTIFIER_COLUMNS,
    Connection,
    F,
    Paged,
    bound,
    copy_rows,
    insert_rows,
    text,
    texts,
    update_rows,
)
from assay.nvd.storage._sql import POSTGRES, SqlBuilder, tsvector_literal
from assay.nvd.storage._sql_products import (
    CHANGE_ORDER,
    CPE_ORDER,
    CRITERIA_CVE_SQL,
    CVE_CRITERIA_SQL,
    MATCH_ORDER,
    SOURCE_ORDER,
    STORED_MATCH_SQL,
    CriteriaSource,
    change_where,
    cpe_where,
    cpematch_where,
    source_where,
)
from assay.nvd.storage.interface import Page, UpsertCounts

_COMPONENT_COUNT = 11


class ProductStoreMixin:
    """CPE, match-criteria and change-history storage for `PostgresStore`."""

    if TYPE_CHECKING:

        def _using(self, action: str) -> AbstractContextManager[Connection]: ...

        def _upsert(
            self,
            what: str,
            table: tuple[str, str, str],
            batch: Sequence[F],
            *,
            key: Callable[[F], str],
            order: Callable[[F], str],
            insert: Callable[[Connection, list[F]], None],
            replace: Callable[[Connection, list[tuple[int, F]]], None],
            meta: Mapping[str, str] | None,
        ) -> UpsertCounts: ...

        def _page(
            self,
            connection: Connection,
            table: str,
            ids_sql: str,
            params: Sequence[object],
            query: Paged,
            *,
            cacheable: bool,
        ) -> Page: ...

    # -- products --------------------------------------------------------------------

    def upsert_cpes(
        self, batch: Sequence[CpeFacts], *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts:
        def values(facts: CpeFacts) -> tuple[object, ...]:
            return (
                facts.cpe_name_id,
                facts.created,
                facts.last_modified,
                int(facts.deprecated),
                *texts(facts.components),
                facts.version_key,
                tsvector_literal(facts.search_text),
                facts.record,
            )

        def insert(connection: Connection, added: list[CpeFacts]) -> None:
            insert_rows(connection, "cpe", CPE_COLUMNS, [values(f) for f in added])

        def replace(connection: Connection, replaced: list[tuple[int, CpeFacts]]) -> None:
            update_rows(connection, "cpe", CPE_COLUMNS, [(i, *values(f)) for i, f in replaced])

        return self._upsert(
            "CPE products",
            ("cpe", "cpe_name_id", "last_modified"),
            batch,
            key=lambda facts: facts.cpe_name_id,
            order=lambda facts: facts.last_modified,
            insert=insert,
            replace=replace,
            meta=meta,
        )

    def search_cpes(self, query: CpeQuery) -> Page:
        with self._using("searching CPE products") as connection:
            source = None
            if query.match_criteria_id is not None:
                source = self._criteria_source(connection, query.match_criteria_id)
            builder = SqlBuilder(POSTGRES)
            where = cpe_where(query, builder, source)
            return self._page(
                connection,
                "cpe",
                f"SELECT p.id FROM cpe p WHERE {where} ORDER BY {CPE_ORDER}",
                bound(builder.params),
                query,
                cacheable=query.cpe_name_id is None,
            )

    def _criteria_source(self, connection: Connection, criteria_id: str) -> CriteriaSource:
        key = text(criteria_id)
        row = connection.execute(STORED_MATCH_SQL.format(p="%s"), (key,)).fetchone()
        if row is not None:
            return CriteriaSource(stored_match=int(row[0]))
        row = connection.execute(CVE_CRITERIA_SQL.format(p="%s"), (key,)).fetchone()
        if row is None:
            return CriteriaSource()
        components = tuple(str(value) for value in row[:_COMPONENT_COUNT])
        start_key, start_inclusive, end_key, end_inclusive = row[_COMPONENT_COUNT:]
        return CriteriaSource(
            criteria=make_criteria(
                vulnerable=True,
                components=components,
                version_key=None,
                start_key=None if start_key is None else bytes(start_key),
                start_inclusive=bool(start_inclusive),
                end_key=None if end_key is None else bytes(end_key),
                end_inclusive=bool(end_inclusive),
                match_criteria_id=criteria_id,
            )
        )

    # -- match criteria --------------------------------------------------------------

    def upsert_match_strings(
        self, batch: Sequence[MatchFacts], *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts:
        def values(facts: MatchFacts) -> tuple[object, ...]:
            c = facts.criteria
            return (
                facts.match_criteria_id,
                facts.created,
                facts.last_modified,
                facts.cpe_last_modified,
                text(facts.status),
                *texts(c.components),
                c.version_key,
                c.start_key,
                int(c.start_inclusive),
                c.end_key,
                int(c.end_inclusive),
                facts.record,
            )

        def names(written: Iterable[tuple[int, MatchFacts]]) -> Iterator[tuple[object, ...]]:
            for row_id, facts in written:
                for name in facts.names:
                    yield (row_id, name.cpe_name_id, *texts(name.components))

        def insert(connection: Connection, added: list[MatchFacts]) -> None:
            ids = insert_rows(connection, "cpe_match", MATCH_COLUMNS, [values(f) for f in added])
            written = [(ids[f.match_criteria_id], f) for f in added]
            copy_rows(connection, "cpe_match_name", MATCH_NAME_COLUMNS, names(written))

        def replace(connection: Connection, replaced: list[tuple[int, MatchFacts]]) -> None:
            rows = [(row_id, *values(facts)) for row_id, facts in replaced]
            update_rows(connection, "cpe_match", MATCH_COLUMNS, rows)
            connection.execute(
                "DELETE FROM cpe_match_name WHERE match = ANY(%s::bigint[])",
                ([row_id for row_id, _ in replaced],),
            )
            copy_rows(connection, "cpe_match_name", MATCH_NAME_COLUMNS, names(replaced))

        return self._upsert(
            "match criteria",
            ("cpe_match", "match_criteria_id", "last_modified"),
            batch,
            key=lambda facts: facts.match_criteria_id,
            order=lambda facts: facts.last_modified,
            insert=insert,
            replace=replace,
            meta=meta,
        )

    def search_match_strings(self, query: CpeMatchQuery) -> Page:
        builder = SqlBuilder(POSTGRES)
        where = cpematch_where(query, builder)
        with self._using("searching match criteria") as connection:
            return self._page(
                connection,
                "cpe_match",
                f"SELECT m.id FROM cpe_match m WHERE {where} ORDER BY {MATCH_ORDER}",
                bound(builder.params),
                query,
                cacheable=query.match_criteria_id is None and query.cve_id is None,
            )

    def cve_naming_criteria(self, match_criteria_id: str) -> str | None:
        with self._using("searching match criteria") as connection:
            row = connection.execute(
                CRITERIA_CVE_SQL.format(p="%s"), (match_criteria_id.upper(),)
            ).fetchone()
        return None if row is None else str(row[0])

    # -- change history --------------------------------------------------------------

    def upsert_changes(
        self, batch: Sequence[ChangeFacts], *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts:
        def values(facts: ChangeFacts) -> tuple[object, ...]:
            return (
                facts.cve_change_id,
                facts.cve_id,
                text(facts.event_key),
                facts.created,
                facts.record,
            )

        def insert(connection: Connection, added: list[ChangeFacts]) -> None:
            insert_rows(connection, "cve_change", CHANGE_COLUMNS, [values(f) for f in added])

        def replace(connection: Connection, replaced: list[tuple[int, ChangeFacts]]) -> None:
            rows = [(row_id, *values(facts)) for row_id, facts in replaced]
            update_rows(connection, "cve_change", CHANGE_COLUMNS, rows)

        return self._upsert(
            "CVE changes",
            ("cve_change", "cve_change_id", "created"),
            batch,
            key=lambda facts: facts.cve_change_id,
            order=lambda facts: facts.created,
            insert=insert,
            replace=replace,
            meta=meta,
        )

    def search_changes(self, query: HistoryQuery) -> Page:
        builder = SqlBuilder(POSTGRES)
        where = change_where(query, builder)
        with self._using("searching CVE changes") as connection:
            return self._page(
                connection,
                "cve_change",
                f"SELECT h.id FROM cve_change h WHERE {where} ORDER BY {CHANGE_ORDER}",
                bound(builder.params),
                query,
                cacheable=query.cve_id is None,
            )

    # -- sources (CVE assigners) -----------------------------------------------------

    def upsert_sources(
        self, batch: Sequence[SourceFacts], *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts:
        def values(facts: SourceFacts) -> tuple[object, ...]:
            return (text(facts.source_key), facts.created, facts.last_modified, facts.record)

        def identifiers(written: Iterable[tuple[int, SourceFacts]]) -> Iterator[tuple[object, ...]]:
            for row_id, facts in written:
                for identifier in facts.identifiers:
                    yield (row_id, text(identifier))

        def insert(connection: Connection, added: list[SourceFacts]) -> None:
            ids = insert_rows(connection, "source", SOURCE_COLUMNS, [values(f) for f in added])
            written = [(ids[text(f.source_key)], f) for f in added]
            copy_rows(
                connection, "source_identifier", SOURCE_IDENTIFIER_COLUMNS, identifiers(written)
            )

        def replace(connection: Connection, replaced: list[tuple[int, SourceFacts]]) -> None:
            rows = [(row_id, *values(facts)) for row_id, facts in replaced]
            update_rows(connection, "source", SOURCE_COLUMNS, rows)
            connection.execute(
                "DELETE FROM source_identifier WHERE source = ANY(%s::bigint[])",
                ([row_id for row_id, _ in replaced],),
            )
            copy_rows(
                connection, "source_identifier", SOURCE_IDENTIFIER_COLUMNS, identifiers(replaced)
            )

        return self._upsert(
            "sources",
            ("source", "source_key", "last_modified"),
            batch,
            key=lambda facts: text(facts.source_key),
            order=lambda facts: facts.last_modified,
            insert=insert,
            replace=replace,
            meta=meta,
        )

    def search_sources(self, query: SourceQuery) -> Page:
        builder = SqlBuilder(POSTGRES)
        where = source_where(query, builder)
        with self._using("searching sources") as connection:
            return self._page(
                connection,
                "source",
                f"SELECT s.id FROM source s WHERE {where} ORDER BY {SOURCE_ORDER}",
                bound(builder.params),
                query,
                cacheable=False,  # a few hundred rows: the whole list is cheap
            )
