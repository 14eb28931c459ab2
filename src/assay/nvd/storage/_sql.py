"""Query translation: a validated query becomes SQL text plus parameters, per dialect.

Pure (no database import), so every translation can be unit-tested. Values only ever
travel as bound parameters; the SQL text is assembled from fixed fragments.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from assay.nvd.cpe import Cpe
from assay.nvd.cve_query import CveQuery, VersionBound
from assay.nvd.params import Window
from assay.nvd.versions import version_key

# CPE component columns of the criteria table, in CPE order.
COMPONENT_COLUMNS = (
    "part", "vendor", "product", "version", "cpe_update", "edition",
    "cpe_language", "sw_edition", "target_sw", "target_hw", "other",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Dialect:
    """What differs between backends: placeholders and full-text search."""

    name: str
    placeholder: str

    def keyword_condition(
        self, builder: SqlBuilder, words: Sequence[str], exact: bool, target: TextSearch
    ) -> str:
        """`target`'s rows whose text has `words` (each a prefix of a word, or the whole
        phrase when `exact`): FTS5 in SQLite, a `tsquery` in PostgreSQL."""
        if self.name == "sqlite" or target.vector_table is not None:
            return f"{target.alias}.id IN ({self.keyword_ids(builder, words, exact, target)})"
        expression = tsquery_expression(words, exact)
        if expression is None:
            return "1 = 0"  # as in FTS5, a word that yields no token matches nothing
        return f"{target.alias}.search_vector @@ CAST({builder.param(expression)} AS tsquery)"

    def keyword_ids(
        self, builder: SqlBuilder, words: Sequence[str], exact: bool, target: TextSearch
    ) -> str:
        """A SELECT of the row ids `keyword_condition` selects, read from the text table
        alone (its FTS5 table, or its `vector_table`)."""
        if self.name == "sqlite":
            return (
                f"SELECT rowid FROM {target.fts_table} WHERE "
                f"{target.fts_table} MATCH {builder.param(fts5_expression(words, exact))}"
            )
        assert target.vector_table is not None
        condition = tsquery_condition(builder, words, exact, target.lexeme_table)
        if condition is None:
            return "SELECT 0 WHERE 1 = 0"  # as in FTS5: a word of no token matches nothing
        return f"SELECT id FROM {target.vector_table} WHERE {condition}"


@dataclass(frozen=True, slots=True)
class TextSearch:
    """Where a keyword search looks: the rows `alias`, indexed by the FTS5 table
    `fts_table` (rowid = the row's id) in SQLite; in PostgreSQL, by the `search_vector`
    of `vector_table` (id = the row's id) when there is one, else by their own."""

    alias: str
    fts_table: str
    vector_table: str | None = None
    lexeme_table: str | None = None
    """In PostgreSQL, a table of every lexeme of `vector_table` (`lexeme` column): a
    prefix is searched as the lexemes it stands for (`tsquery_condition`)."""


CVE_TEXT = TextSearch("c", "cve_text", vector_table="cve_text", lexeme_table="cve_lexeme")


def keyword_search(
    builder: SqlBuilder, words: Sequence[str], exact: bool, target: TextSearch
) -> str:
    """The condition of a keyword search; words of punctuation alone are left out, and
    a search of nothing else matches nothing."""
    searchable = _searchable(words)
    if not searchable:
        return "1 = 0"  # punctuation alone is no word of any description, title or link
    return builder.dialect.keyword_condition(builder, searchable, exact, target)


def keyword_ids(builder: SqlBuilder, words: Sequence[str], exact: bool, target: TextSearch) -> str:
    """`keyword_search` as a SELECT of the matching row ids, from the text table alone."""
    searchable = _searchable(words)
    if not searchable:
        return "SELECT 0 WHERE 1 = 0"
    return builder.dialect.keyword_ids(builder, searchable, exact, target)


def _searchable(words: Sequence[str]) -> list[str]:
    return [word for word in words if any(ch.isalnum() for ch in word)]


def window_condition(column: str, window: Window, builder: SqlBuilder) -> str:
    """`column` within the window, both ends included."""
    return f"{column} BETWEEN {builder.param(window.start)} AND {builder.param(window.end)}"


SQLITE = Dialect("sqlite", "?")
POSTGRES = Dialect("postgres", "%s")


@dataclass(slots=True)
class SqlBuilder:
    dialect: Dialect
    params: list[object] = field(default_factory=list)

    def param(self, value: object) -> str:
        self.params.append(value)
        return self.dialect.placeholder

    def params_in(self, values: Sequence[object]) -> str:
        return "(" + ", ".join(self.param(value) for value in values) + ")"


def fts5_expression(words: Sequence[str], exact: bool) -> str:
    """Each word a prefix of some word of the text (AND), or the whole phrase exactly.

    Quoting hands each word to FTS5's own tokenizer, so `cross-site` becomes the
    phrase `cross site`, exactly as the indexed text was split.
    """
    quoted = ['"' + word.replace('"', '""') + '"' for word in words]
    if exact:
        return '"' + " ".join(words).replace('"', '""') + '"'
    return " AND ".join(f"{q}*" for q in quoted)


def tsquery_expression(words: Sequence[str], exact: bool) -> str | None:
    """PostgreSQL's equivalent of `fts5_expression`: a `tsquery` literal over the lexemes
    `search_tokens` gives, or None when some word (or the phrase) yields no token.

    The lexemes are quoted, so PostgreSQL takes them as they are: its own parser (which
    keeps `1.2.3`, `example.com` or `cross-site` whole) never sees them. A word of several
    tokens is a phrase whose last token is a prefix, as `"cross-site"*` is in FTS5.
    """
    if exact:
        lexemes = _lexemes(" ".join(words))
        return None if lexemes is None else " <-> ".join(lexemes)
    tokens = _word_tokens(words)
    return None if tokens is None else _prefix_query(tokens)


def _word_tokens(words: Sequence[str]) -> list[list[str]] | None:
    """Each word's tokens, or None when some word has none, or one too long to be a
    lexeme."""
    found = [search_tokens(word) for word in words]
    if not all(tokens and all(_fits_lexeme(t) for t in tokens) for tokens in found):
        return None
    return found


def _prefix_query(word_tokens: Sequence[Sequence[str]]) -> str:
    """Every word, its last token a prefix (a word of several tokens is a phrase)."""
    groups: list[str] = []
    for tokens in word_tokens:
        lexemes = [_quoted_lexeme(token) for token in tokens]
        lexemes[-1] += ":*"
        groups.append("(" + " <-> ".join(lexemes) + ")")
    return " & ".join(groups)


# A prefix standing for more lexemes than this is left to the index's own prefix match:
# so many entries cost more to combine than the prefix's posting lists cost to read.
MAX_PREFIX_LEXEMES = 64

# Above every character a token can hold (U+10FFFF is a noncharacter, a separator to the
# tokenizer): `prefix <= lexeme < prefix + this` is every lexeme that starts with prefix.
_PAST_PREFIX = "\U0010ffff"

# The lexeme, empty as no token is, that a lexeme table holds when it lists every lexeme
# of its vectors (as a SQL literal): `_postgres_bulk` takes it away while a load defers
# the list to its end.
LEXEMES_COMPLETE = "''"

# A lexeme quoted for a `tsquery`, in SQL (as `_quoted_lexeme` quotes it in Python).
_QUOTED_LEXEME_SQL = r"'''' || replace(replace(lexeme, '\', '\\'), '''', '''''') || ''''"


def tsquery_condition(
    builder: SqlBuilder, words: Sequence[str], exact: bool, lexeme_table: str | None
) -> str | None:
    """A SQL condition on `search_vector` that holds where `tsquery_expression`'s query
    matches, or None when there is no query.

    With `lexeme_table`, each prefix (`word:*`) of a search of words is read by the index
    as the lexemes that start with it, read in the same statement (one snapshot): a GIN
    index then reads an exact term as it reads a word, skipping through its posting list
    by the rarest term of the query, where a prefix term is read whole into a bitmap
    (`microsoft:* & windows:*`: 8.0 ms; as their lexemes, 1.2 ms). A prefix that stands
    for no lexeme, or for more than `MAX_PREFIX_LEXEMES`, stays a prefix term.

    A word of several tokens (`cross-site`) is a phrase, which the index cannot check:
    its tokens are looked up as words (`cross & (site | sites ...)`), and the phrase
    with its prefix terms is checked on each candidate's vector by `ts_match_vq`, a
    function the planner does not hand to the index. As lexemes inside the phrase, each
    would be one more look-up per candidate ("cross-site scripting": 485 ms); as prefix
    terms in the index's query, the index reads every `site*` posting list (19.5 ms of
    its 82; with the lexemes, 9.9 ms of 74).
    """
    if exact or lexeme_table is None:
        expression = tsquery_expression(words, exact)
        if expression is None:
            return None
        return f"search_vector @@ CAST({builder.param(expression)} AS tsquery)"
    tokens = _word_tokens(words)
    if tokens is None:
        return None
    pieces: list[str] = []
    for found in tokens:
        for number, token in enumerate(found):
            # Placeholders are numbered by position: each piece is made in its turn.
            pieces.append(builder.param("(" if not pieces else " & ("))
            if number == len(found) - 1:  # a word's last token is a prefix
                quoted = _quoted_lexeme(token) + ":*"
                pieces.append(_prefix_lexemes(builder, lexeme_table, token, quoted))
            else:
                pieces.append(builder.param(_quoted_lexeme(token)))
            pieces.append(builder.param(")"))
    condition = "search_vector @@ CAST(" + " || ".join(pieces) + " AS tsquery)"
    if any(len(found) > 1 for found in tokens):
        phrase = builder.param(_prefix_query(tokens))
        condition += f" AND ts_match_vq(search_vector, CAST({phrase} AS tsquery))"
    return condition


def _prefix_lexemes(builder: SqlBuilder, table: str, prefix: str, as_prefix: str) -> str:
    """SQL of the text `(lexeme | lexeme ...)` of the lexemes that start with `prefix`,
    or `as_prefix` (the prefix term) when there are none or too many, or when the table
    does not list every lexeme (`LEXEMES_COMPLETE`)."""
    return (
        f"(SELECT CASE WHEN count(*) BETWEEN 1 AND {MAX_PREFIX_LEXEMES} "
        f"AND EXISTS (SELECT 1 FROM {table} WHERE lexeme = {LEXEMES_COMPLETE}) "
        f"THEN '(' || string_agg({_QUOTED_LEXEME_SQL}, ' | ') || ')' "
        f"ELSE {builder.param(as_prefix)} END FROM {table} "
        f"WHERE lexeme >= {builder.param(prefix)} "
        f"AND lexeme < {builder.param(prefix + _PAST_PREFIX)})"
    )


def _lexemes(text: str) -> list[str] | None:
    """The quoted lexemes of `text`'s tokens, or None when it has none, or one too long
    to be a lexeme."""
    tokens = search_tokens(text)
    if not tokens or not all(_fits_lexeme(token) for token in tokens):
        return None
    return [_quoted_lexeme(token) for token in tokens]


# PostgreSQL's limit for one lexeme, in bytes.
MAX_LEXEME_BYTES = 2046


def tsvector_literal(text: str) -> str:
    """The `tsvector` of `text` in PostgreSQL's input syntax: every `search_tokens`
    token with its 1-based position, so phrase and prefix queries see exactly the tokens
    and adjacency FTS5 sees.

    PostgreSQL's input merges the repeats of a lexeme, keeps its first 256 positions and
    reads positions past 16383 as 16383 (as `to_tsvector` does: phrases that far into a
    text cannot match there); a token too long to be a lexeme is left out (its position
    still counts). Other than ASCII text (`_ascii_tokens`), the literal is assembled by
    SQLite in the statement that tokenizes, so indexing a text is one call.
    """
    if text.isascii():
        return _ascii_vector(_ascii_tokens(text))
    return _TOKENIZER.vector(text)


def _ascii_vector(tokens: list[str]) -> str:
    if not tokens:
        return ""
    if len(tokens) > len(_QUOTED_POSITIONS) or max(map(len, tokens)) > MAX_LEXEME_BYTES:
        return " ".join(
            f"'{token}':{position}"
            for position, token in enumerate(tokens, 1)
            if len(token) <= MAX_LEXEME_BYTES
        )
    # Each `'token':position`, joined in C: no Python step per token.
    return "'" + " '".join(map(str.__add__, tokens, _QUOTED_POSITIONS))


# The ends of a quoted lexeme with its position: `':1`, `':2`, ... (a text of more tokens
# than this takes the longer way).
_QUOTED_POSITIONS = tuple(f"':{position}" for position in range(1, 4097))


def search_tokens(text: str) -> list[str]:
    """The tokens SQLite's FTS5 `unicode61 remove_diacritics 2` tokenizer makes of `text`
    (case-folded, diacritics removed), in order.

    The PostgreSQL backend indexes and queries these exact tokens, so that both backends
    agree on what a word is. They come from SQLite's own tokenizer, run on an in-memory
    `fts3tokenize` table (the unicode61 tokenizer FTS3 and FTS5 share): no database file
    is involved, and no Python reimplementation can drift from it. ASCII text alone,
    where the tokenizer's rules are three, is split in Python (`_ascii_tokens`).
    """
    if text.isascii():
        return _ascii_tokens(text)
    return _TOKENIZER.tokens(text)


# In ASCII, unicode61 has three rules: a token is a run of letters and digits (every
# other character separates), letters fold to lower case, and there are no diacritics to
# remove. Applied here (every separator made a space, every capital its small letter, in
# one `bytes.translate`), a description's vector takes a fifth of the time of a call into
# the tokenizer, which was a sixth of a PostgreSQL import's time, where every CVE's text
# is indexed. `tests/nvd/test_ascii_tokens.py` holds them to SQLite's tokenizer.
_ASCII_FOLD = bytes(
    code + 32 if 0x41 <= code <= 0x5A else code if chr(code).isalnum() and code < 128 else 0x20
    for code in range(256)
)


def _ascii_tokens(text: str) -> list[str]:
    return text.encode("ascii").translate(_ASCII_FOLD).decode("ascii").split()


# Each token quoted as a lexeme (backslashes and quotes doubled), then `:position`.
_VECTOR_SQL = (
    "SELECT group_concat(quote(replace(token, '\\', '\\\\')) || ':' || (position + 1), ' ') "
    f"FROM tokens WHERE input = ? AND length(CAST(token AS BLOB)) <= {MAX_LEXEME_BYTES}"
)


class _SqliteTokenizer:
    def __init__(self) -> None:
        self._connection: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def _tokenizer(self) -> sqlite3.Connection:
        if self._connection is None:
            connection = sqlite3.connect(":memory:", check_same_thread=False)
            connection.execute(
                "CREATE VIRTUAL TABLE tokens USING fts3tokenize('unicode61', 'remove_diacritics=2')"
            )
            self._connection = connection
        return self._connection

    def tokens(self, text: str) -> list[str]:
        with self._lock:
            rows = self._tokenizer().execute(
                "SELECT token FROM tokens WHERE input = ? ORDER BY position", (text,)
            )
            return [str(row[0]) for row in rows]

    def vector(self, text: str) -> str:
        with self._lock:
            row = self._tokenizer().execute(_VECTOR_SQL, (text,)).fetchone()
        return "" if row is None or row[0] is None else str(row[0])


_TOKENIZER = _SqliteTokenizer()


def _fits_lexeme(token: str) -> bool:
    return len(token) * 4 <= MAX_LEXEME_BYTES or len(token.encode()) <= MAX_LEXEME_BYTES


def _quoted_lexeme(token: str) -> str:
    return "'" + token.replace("\\", "\\\\").replace("'", "''") + "'"


WRITTEN_TABLES = ("cve", "cve_change", "cpe", "cpe_match", "source")
"""Tables whose rows carry the data generation of their last write, in `<table>_written`
(row = the table's id): the change cursor (`sinceGeneration`) reads it."""


def written_since(alias: str, table: str, generation: int | None, builder: SqlBuilder) -> list[str]:
    """The condition "last written after `generation`" over `<table> <alias>` (none when
    `generation` is None). Rows never written since the cursor existed count as older."""
    if generation is None:
        return []
    assert table in WRITTEN_TABLES
    return [
        f"{alias}.id IN (SELECT w.row FROM {table}_written w "
        f"WHERE w.generation > {builder.param(generation)})"
    ]


def cve_where(query: CveQuery, builder: SqlBuilder) -> str:
    """The WHERE clause (over `cve c`) of a CVE query; `1 = 1` when unfiltered.

    Placeholders are positional: the conditions are built strictly left to right."""
    conditions: list[str] = written_since("c", "cve", query.since_generation, builder)
    conditions += _cve_column_conditions(query, builder)
    conditions += [_facet_condition(kind, value, builder) for kind, value in _facets(query)]
    if query.cvss_metrics is not None:
        conditions.append(_cvss_metrics_condition(*query.cvss_metrics, builder))
    if query.keywords:
        conditions.append(keyword_search(builder, query.keywords, query.keyword_exact, CVE_TEXT))
    if query.cpe_name is not None:
        conditions.append(cpe_name_filter(query.cpe_name, query.is_vulnerable, builder))
    elif query.virtual_match is not None:
        conditions.append(
            f"c.id IN ({virtual_match_cves(query.virtual_match, query.version_start, query.version_end, builder)})"
        )
    return all_of(conditions)


def _cve_column_conditions(query: CveQuery, builder: SqlBuilder) -> list[str]:
    """The conditions on the columns of `cve` itself."""
    conditions: list[str] = []
    if query.cve_id is not None:
        conditions.append(f"c.cve_id = {builder.param(query.cve_id)}")
    if query.cve_ids is not None:
        conditions.append(f"c.cve_id IN {builder.params_in(query.cve_ids)}")
    for flag, condition in (
        (query.no_rejected, "c.rejected = 0"),
        (query.has_kev, "c.kev_added IS NOT NULL"),
    ):
        if flag:
            conditions.append(condition)
    for column, window in (
        ("c.published", query.pub_window),
        ("c.last_modified", query.last_mod_window),
        ("c.kev_added", query.kev_window),
    ):
        if window is not None:
            conditions.append(window_condition(column, window, builder))
    return conditions


def _facets(query: CveQuery) -> list[tuple[str, str]]:
    """The (kind, value) rows of `cve_facet` a CVE must have to be selected."""
    severity = query.cvss_severity
    asked: tuple[tuple[str, str | None], ...] = (
        ("tag", query.cve_tag),
        ("cwe", query.cwe_id),
        ("source", query.source_identifier),
        (f"sev{severity[0]}", severity[1]) if severity is not None else ("", None),
        ("certAlert", "1" if query.has_cert_alerts else None),
        ("certNote", "1" if query.has_cert_notes else None),
        ("oval", "1" if query.has_oval else None),
    )
    return [(kind, value) for kind, value in asked if value is not None]


def _facet_condition(kind: str, value: str, builder: SqlBuilder) -> str:
    p = builder.param
    return f"c.id IN (SELECT cve FROM cve_facet WHERE kind = {p(kind)} AND value = {p(value)})"


def _cvss_metrics_condition(version: str, pairs: Sequence[str], builder: SqlBuilder) -> str:
    """Every pair in one vector (one metric entry), not spread over several: the
    distinct vectors holding them all (a few thousand to search), then their CVEs."""
    p = builder.param
    text = f"c.id IN (SELECT cve FROM cve_facet WHERE kind = {p('vec' + version)} AND value IN "
    text += f"(SELECT v.vector FROM cvss_vector v WHERE v.kind = {p('vec' + version)}"
    for pair in pairs:
        pattern = p("%/" + _like_escaped(pair) + "/%")
        text += f" AND '/' || v.vector || '/' LIKE {pattern} ESCAPE '!'"
    return text + "))"


def all_of(conditions: Sequence[str]) -> str:
    """The conditions joined by AND; `1 = 1` when there are none."""
    return " AND ".join(conditions) if conditions else "1 = 1"


def cve_ids_select(query: CveQuery, builder: SqlBuilder) -> str:
    """A SELECT of the ids of the CVEs `query` selects (its filter; paging and order do
    not apply, and an id may come more than once). A filter that is a `cpeName`, a
    `virtualMatchString` or a keyword search alone runs as its own subquery, without
    reading `cve` (3x faster per look-up in a scan); any other is `cve_where` over
    `cve`."""
    if query.keywords and replace(query, keywords=(), keyword_exact=False).is_unfiltered:
        return keyword_ids(builder, query.keywords, query.keyword_exact, CVE_TEXT)
    alone = replace(
        query,
        cpe_name=None,
        is_vulnerable=False,
        virtual_match=None,
        version_start=None,
        version_end=None,
    ).is_unfiltered
    if alone and query.cpe_name is not None:
        return cpe_name_cves(query.cpe_name, query.is_vulnerable, builder)
    if alone and query.virtual_match is not None:
        return virtual_match_cves(
            query.virtual_match, query.version_start, query.version_end, builder
        )
    return f"SELECT c.id FROM cve c WHERE {cve_where(query, builder)}"


def component_equalities(
    components: Sequence[str], builder: SqlBuilder, prefix: str = "", *, with_version: bool = True
) -> list[str]:
    """Each component other than `*` equal in its column (`prefix` names the table:
    `"p."`); the version left out unless `with_version`."""
    return [
        f"{prefix}{column} = {builder.param(value)}"
        for column, value in zip(COMPONENT_COLUMNS, components, strict=True)
        if value != "*" and (with_version or column != "version")
    ]


def _like_escaped(text: str) -> str:
    return text.replace("!", "!!").replace("%", "!%").replace("_", "!_")


# A criteria's uses: `criteria` holds each distinct criteria once, `cve_criteria` links
# it to the CVEs whose configurations use it (with `vulnerable` as that CVE says).
CRITERIA_USES = "criteria JOIN cve_criteria ON cve_criteria.criteria = criteria.id"


def cpe_name_filter(name: Cpe, vulnerable_only: bool, builder: SqlBuilder) -> str:
    """CVEs a CPE name hits, as NVD decides it: through a criteria's dictionary expansion
    (its stored match-criteria record's `matches`, rows of `cpe_match_name`) where that
    record is stored, otherwise computed from the criteria and its version bounds
    (`cpe_name_condition`). An expansion name hits when it matches `name` as an unbounded
    criteria would. See docs/nvd-compatibility.md, "cpeName and match criteria"."""
    return f"c.id IN ({cpe_name_cves(name, vulnerable_only, builder)})"


def cpe_name_cves(name: Cpe, vulnerable_only: bool, builder: SqlBuilder) -> str:
    """The subquery of `cpe_name_filter`: the ids of the CVEs the name hits (an id may
    come more than once)."""
    computed = cpe_name_condition(name, vulnerable_only, builder)
    expanded = [
        f"n.{column} IN ({builder.param(value)}, '*')"
        for column, value in zip(COMPONENT_COLUMNS, name.components, strict=True)
        if value != "*"
    ]
    if vulnerable_only:
        expanded.append("l.vulnerable = 1")
    # Criteria whose match string the CPE match feed expands are found by its names
    # (below). A criterion without a match string id matches no `cpe_match` row either
    # way: SQLite skips the subquery for it when told so first (without, its searches
    # took 60 % longer); PostgreSQL makes a NOT EXISTS outside an OR an anti-join checked
    # after the cheaper conditions (8-15 % off the statement) rather than a subquery run
    # for every criterion of the product.
    unexpanded = (
        "NOT EXISTS (SELECT 1 FROM cpe_match m "
        "WHERE m.match_criteria_id = criteria.match_criteria_id)"
    )
    if builder.dialect.name == "sqlite":
        unexpanded = f"(criteria.match_criteria_id IS NULL OR {unexpanded})"
    return (
        f"SELECT cve FROM {CRITERIA_USES} WHERE {computed} AND {unexpanded} "
        "UNION ALL SELECT l.cve FROM cpe_match_name n JOIN cpe_match m ON m.id = n.match "
        "JOIN criteria k ON k.match_criteria_id = m.match_criteria_id "
        "JOIN cve_criteria l ON l.criteria = k.id WHERE " + all_of(expanded)
    )


def cpe_name_condition(name: Cpe, vulnerable_only: bool, builder: SqlBuilder) -> str:
    """Criteria rows a concrete CPE name falls under (version ranges included)."""
    p = builder.param
    parts: list[str] = []
    components = name.components
    for index, column in enumerate(COMPONENT_COLUMNS):
        value = components[index]
        if index == 3:
            parts.append(_name_version_condition(value, builder))
        elif value != "*":
            parts.append(f"{column} IN ({p(value)}, '*')")
    if vulnerable_only:
        parts.append("vulnerable = 1")
    return " AND ".join(parts)


def _name_version_condition(version: str, builder: SqlBuilder) -> str:
    p = builder.param
    if version in ("*", "-"):
        # A name without a concrete version cannot be placed in a range: it matches
        # criteria for any version (documented in docs/nvd-compatibility.md).
        return "1 = 1" if version == "*" else "version IN ('-', '*')"
    key = version_key(version)
    # `version IN (v, '*')` first, so the (product, version) index seeks both straight
    # away: a product's literal criteria for other versions are never read.
    return (
        f"version IN ({p(version)}, '*') AND (version <> '*'"
        f" OR (start_key IS NULL OR start_key < {p(key)} OR start_inclusive = 1 AND start_key = {p(key)})"
        f" AND (end_key IS NULL OR end_key > {p(key)} OR end_inclusive = 1 AND end_key = {p(key)}))"
    )


def virtual_match_cves(
    match: Cpe,
    start: VersionBound | None,
    end: VersionBound | None,
    builder: SqlBuilder,
) -> str:
    """The ids of the CVEs with a criteria `virtual_match_condition` accepts (an id may
    come more than once)."""
    return f"SELECT cve FROM {CRITERIA_USES} WHERE " + virtual_match_condition(
        match, start, end, builder
    )


def virtual_match_condition(
    match: Cpe,
    start: VersionBound | None,
    end: VersionBound | None,
    builder: SqlBuilder,
) -> str:
    """Criteria rows whose own components equal every non-`*` component of `match`
    (a criteria `*` does not satisfy a requested value), and whose version overlaps the
    requested one: a literal version in `match` is the range [v, v]; versionStart and
    versionEnd bound it; a criteria's literal version is a one-point range, its `*` the
    range its bounds give (unbounded without them), and `-` overlaps nothing."""
    parts = component_equalities(match.components, builder, with_version=False)
    requested = match.version
    if requested == "-":
        parts.append("version = '-'")
        return " AND ".join(parts)
    if requested != "*":
        start = end = VersionBound(requested, True)
    if start is None and end is None:
        return all_of(parts)
    # Placeholders are positional: build the text strictly left to right.
    literal = _literal_version_overlap(start, end, builder)
    ranged = _ranged_version_overlap(start, end, builder)
    parts.append(f"(({literal}) OR ({ranged}))")
    return " AND ".join(parts)


def _literal_version_overlap(
    start: VersionBound | None, end: VersionBound | None, builder: SqlBuilder
) -> str:
    """A criteria of a literal version (a one-point range) within [start, end]."""
    literal: list[str] = ["version_key IS NOT NULL"]
    for bound, above in ((start, ">"), (end, "<")):
        if bound is not None:
            key = version_key(bound.version)
            text = f"(version_key {above} {builder.param(key)}"
            if bound.inclusive:
                text += f" OR version_key = {builder.param(key)}"
            literal.append(text + ")")
    return " AND ".join(literal)


def _ranged_version_overlap(
    start: VersionBound | None, end: VersionBound | None, builder: SqlBuilder
) -> str:
    """A criteria of version `*` whose own range (its bounds, unbounded without them)
    overlaps [start, end]: its end is not below `start`, its start not above `end`."""
    ranged: list[str] = ["version = '*'"]
    for bound, side, beyond in ((start, "end", ">"), (end, "start", "<")):
        if bound is not None:
            p = builder.param
            key = version_key(bound.version)
            touching = f" AND {side}_inclusive = 1" if bound.inclusive else " AND 1 = 0"
            ranged.append(
                f"({side}_key IS NULL OR {side}_key {beyond} {p(key)}"
                f" OR {side}_key = {p(key)}{touching})"
            )
    return " AND ".join(ranged)
