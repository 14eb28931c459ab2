"""Version ordering and its byte encoding (spec §6.5)."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from assay.nvd.versions import compare_versions, version_key


def sign(n: int) -> int:
    return (n > 0) - (n < 0)


def key_cmp(a: str, b: str) -> int:
    ka, kb = version_key(a), version_key(b)
    return (ka > kb) - (ka < kb)


# Ascending chains; every element is strictly below the next. Versions are taken from
# the CVE records in tests/assets/nvd and from spec §2.3/§6.2.
ASCENDING = [
    # laravel (CVE-2022-40482): 8.0.0 <= 8.83.27 < 9.32.0
    ["8.0.0", "8.83.27", "9.32.0"],
    # linux_kernel (CVE-2017-7542 ends at 4.12.3; CVE-1999-0245 names 2.6.20.1)
    ["2.6", "2.6.20.1", "2.6.32", "2.6.32-rc1", "2.6.32.1", "4.12.3"],
    # espressif esp-idf (CVE-2020-13595): 4.0.0 .. 4.2 inclusive
    ["4.0.0", "4.1", "4.2", "4.2.0"],
    # samba (CVE-2022-32746)
    ["4.3.0", "4.14.13", "4.14.14", "4.15.0", "4.15.9", "4.16.0", "4.16.4"],
    # openssl-style letter suffixes
    ["1.0.0", "1.0.0a", "1.0.0b", "1.0.0z", "1.0.1"],
    # Windows build numbers and four-part versions
    ["7.2.0.4", "7.2.0.10", "10.0.17763.1", "10.0.19041.1415", "10.0.19041.10000"],
    # cisco (CVE-1999-0161): parentheses, escaped in the CPE name
    ["10.3", "10.3(3.4)", "10.3(4.2)", "10.3(12)"],
    # release candidates compare numerically inside the piece
    ["2.6.32-rc", "2.6.32-rc1", "2.6.32-rc2", "2.6.32-rc10"],
    # a piece without a leading number sorts before a numeric piece
    ["1.0.alpha", "1.0.beta", "1.0.rc1", "1.0.0"],
    # putty (CVE-2024-31497) / gitlab (CVE-2022-0090)
    ["0.68", "0.80", "0.81", "14.5.0", "14.5.3", "14.6.0", "14.6.1"],
    # missing pieces are smaller
    ["", "1", "1.2", "1.2.1"],
]


@pytest.mark.parametrize("chain", ASCENDING, ids=" < ".join)
def test_ascending_chains(chain: list[str]) -> None:
    for i, low in enumerate(chain):
        for high in chain[i + 1 :]:
            assert compare_versions(low, high) == -1, (low, high)
            assert compare_versions(high, low) == 1, (high, low)
            assert version_key(low) < version_key(high), (low, high)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("1.01", "1.1"),  # leading zeros do not count
        ("1.0.0A", "1.0.0a"),  # case-insensitive
        ("2.6.32-RC1", "2.6.32_rc1"),  # any separator
        ("1..2", "1.2"),  # empty pieces are dropped
        ("1.2.", "1.2"),
        ("+1.2", "1.2"),
        ("7.0\\(2\\)", "7.0(2)"),  # CPE escapes are removed
        ("007", "7"),
        ("0", "00"),
        ("", "-"),
        ("", "..."),
    ],
)
def test_equal(a: str, b: str) -> None:
    assert compare_versions(a, b) == 0
    assert version_key(a) == version_key(b)


def test_real_range_examples() -> None:
    # laravel 8.83.27 is inside [8.0.0, 9.32.0); 9.32.0 itself is excluded
    assert compare_versions("8.0.0", "8.83.27") <= 0 < compare_versions("9.32.0", "8.83.27")
    assert compare_versions("9.32.0", "9.32.0") == 0
    # "v8.83.27" is a piece without a leading number: below every numeric version
    assert compare_versions("v8.83.27", "8.0.0") == -1
    assert compare_versions("v8.83.27", "1") == -1


def test_huge_numbers() -> None:
    big = "9" * 300
    assert compare_versions(big, "1" + "0" * 300) == -1
    assert version_key(big) < version_key("1" + "0" * 300)
    assert version_key("9" * 254) < version_key("1" + "0" * 254)
    assert compare_versions("9" * 5000, "1" + "0" * 5000) == -1


# Realistic versions: numbers (with leading zeros), letters, mixed pieces, any separator,
# empty pieces, escapes, and a few odd characters.
_number = st.from_regex(r"0{0,2}[0-9]{1,4}", fullmatch=True)
_word = st.sampled_from(
    ["a", "b", "rc", "RC", "beta", "alpha", "p", "sp", "r", "x", "v", "pre", ""]
)
_odd = st.sampled_from(["(", ")", "\\(", "\\)", "~", " ", "\x00", "\x01", "\xff", "é", "İ", "*"])
_run = st.one_of(_number, _word, _odd)
_piece = st.lists(_run, max_size=4).map("".join)
_separator = st.sampled_from([".", "-", "_", "+", "..", "\\."])
realistic_versions = st.lists(st.tuples(_piece, _separator), max_size=6).map(
    lambda pairs: "".join(piece + sep for piece, sep in pairs)[:-1]
)
dotted_versions = st.from_regex(r"[0-9]{1,3}(\.0{0,2}[0-9]{1,3}){0,4}", fullmatch=True)
versions = st.one_of(realistic_versions, dotted_versions, st.text(max_size=12))


@settings(max_examples=400)
@given(versions, versions)
@example("1.0", "1.0a")
@example("a\x00", "a")
@example("a\x00b", "a\x00")
@example("1.a", "1a")
@example("9" * 255, "1" + "0" * 255)
@example("8.83.27", "8.83.27a")
@example("1.02", "1.2.0")
@example("1.2", "1-2")
def test_key_preserves_order(a: str, b: str) -> None:
    assert sign(compare_versions(a, b)) == key_cmp(a, b)


@given(versions, versions, versions)
def test_total_preorder(a: str, b: str, c: str) -> None:
    assert compare_versions(a, b) == -compare_versions(b, a)
    assert compare_versions(a, a) == 0
    if compare_versions(a, b) <= 0 and compare_versions(b, c) <= 0:
        assert compare_versions(a, c) <= 0


@given(realistic_versions)
def test_appending_a_piece_makes_it_larger(v: str) -> None:
    v = v.rstrip("\\")  # a trailing backslash would escape the separator appended below
    assert compare_versions(v, v + ".0") == -1
    assert compare_versions(v, v + ".a") == -1
