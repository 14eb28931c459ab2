"""ASCII text is tokenized in Python (`_sql._ascii_tokens`), everything else by SQLite's
unicode61 tokenizer: for ASCII text the two give the same tokens and the same `tsvector`
literal, so PostgreSQL indexes exactly the words SQLite's FTS5 does."""

from __future__ import annotations

import gzip

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from assay._cli.nvd import bundled_files
from assay.nvd.cve_record import cve_facts
from assay.nvd.storage._sql import (
    _QUOTED_POSITIONS,
    _TOKENIZER,
    MAX_LEXEME_BYTES,
    search_tokens,
    tsvector_literal,
)

ASCII = st.characters(max_codepoint=127)
# Words, separators of every kind and capitals, so that runs and boundaries are common.
WORDISH = st.lists(
    st.one_of(
        st.text(st.sampled_from("aZ09xQ"), min_size=1, max_size=6),
        st.text(ASCII, min_size=1, max_size=3),
    ),
    max_size=40,
).map("".join)


def _agree(text: str) -> None:
    assert text.isascii()
    assert search_tokens(text) == _TOKENIZER.tokens(text)
    assert tsvector_literal(text) == _TOKENIZER.vector(text)


@given(st.one_of(st.text(ASCII, max_size=200), WORDISH))
@settings(max_examples=400, deadline=None)
def test_ascii_text_is_split_as_sqlite_splits_it(text: str) -> None:
    _agree(text)


def test_every_ascii_character_is_a_token_character_or_a_separator_as_in_sqlite() -> None:
    for code in range(128):
        _agree(f"ab{chr(code)}cd {chr(code)} x{chr(code)}")


def test_a_token_too_long_for_a_lexeme_is_left_out_but_keeps_its_position() -> None:
    long = "a" * (MAX_LEXEME_BYTES + 1)
    text = f"first {long} third {'b' * MAX_LEXEME_BYTES}"
    _agree(text)
    assert tsvector_literal(text) == f"'first':1 'third':3 '{'b' * MAX_LEXEME_BYTES}':4"


def test_a_text_of_more_tokens_than_the_positions_at_hand() -> None:
    text = " ".join(f"w{n % 97}" for n in range(len(_QUOTED_POSITIONS) + 50))
    _agree(text)


def test_the_bundled_descriptions_are_indexed_as_sqlite_would() -> None:
    (cves,) = [path for path in bundled_files() if path.name == "nvd-cves.jsonl.gz"]
    texts = []
    with gzip.open(cves) as lines:
        for line in lines:
            texts.append(cve_facts(orjson.loads(line)).search_text)
    ascii_texts = [text for text in texts if text.isascii()]
    assert len(ascii_texts) > 100
    for text in ascii_texts:
        _agree(text)
