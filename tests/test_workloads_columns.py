"""The column-parsing core: whitespace, comments, field counts, line numbers across blocks, number syntax."""

from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pytest

from workloads import columns
from workloads.columns import ints, reals, scan


def blocks(text: str, fields: int = 3, width: int | None = None, block_bytes: int | None = None):
    found = scan(io.BytesIO(text.encode()), fields=fields, width=width, block_bytes=block_bytes)
    rows, lines, short = [], [], []
    for block in found.blocks:
        rows += [list(r.values()) for r in block.table.to_pylist()]
        lines += block.lines.tolist()
        short += list(zip(block.short_lines.tolist(), block.short_counts.tolist(), strict=True))
    return rows, lines, short, found.header


def test_whitespace_runs_tabs_crlf_and_blank_lines():
    text = "  1\t\t2   3  \r\n\n   \n4 5 6\r\n"
    rows, lines, short, _ = blocks(text)
    assert rows == [["1", "2", "3"], ["4", "5", "6"]]
    assert lines == [1, 4]
    assert short == []


def test_header_is_the_comments_before_the_first_data_line():
    text = "; Version: 2.2\n  ;  MaxProcs: 4  \n\n1 2 3\n; after the data: not header\n4 5 6\n"
    _, lines, _, header = blocks(text)
    assert header == ["; Version: 2.2", ";  MaxProcs: 4"]
    assert lines == [4, 6]


def test_short_lines_are_reported_not_rows_and_long_ones_cut():
    text = "1 2 3\n1 2\n1 2 3 4 5\n7 8 9\n"
    rows, lines, short, _ = blocks(text)
    assert rows == [["1", "2", "3"], ["1", "2", "3"], ["7", "8", "9"]]
    assert lines == [1, 3, 4]
    assert short == [(2, 2)]


def test_width_keeps_extra_fields_and_pads_missing_ones():
    text = "1 2 3 a b\n4 5 6\n7 8 9 c d e\n"
    rows, _, _, _ = blocks(text, fields=3, width=5)
    assert rows == [["1", "2", "3", "a", "b"], ["4", "5", "6", "", ""], ["7", "8", "9", "c", "d"]]
    # every line wider than kept: the uniform fast path keeps the first fields
    rows, _, _, _ = blocks("1 2 3 4\n5 6 7 8\n", fields=2, width=3)
    assert rows == [["1", "2", "3"], ["5", "6", "7"]]


@pytest.mark.parametrize("block_bytes", [7, 16, 64, 1 << 20])
def test_line_numbers_survive_block_boundaries(block_bytes):
    lines = ["; head", "; more"] + [f"{i} {i * 10} {i * 100}" for i in range(1, 40)]
    lines[10] = "; a comment in the middle"
    lines[20] = ""
    rows, numbers, _, header = blocks("\n".join(lines), block_bytes=block_bytes)
    expected = [n for n, text in enumerate(lines, 1) if text and not text.startswith(";")]
    assert numbers == expected
    assert [r[0] for r in rows] == [lines[n - 1].split()[0] for n in expected]
    assert header == ["; head", "; more"]


def test_no_trailing_newline_and_empty_input():
    _, lines, _, _ = blocks("1 2 3\n4 5 6")
    assert lines == [1, 2]
    assert blocks("")[0] == []
    assert blocks("; only a header\n")[3] == ["; only a header"]


@pytest.mark.parametrize(
    ("text", "valid"),
    [
        *[("12", True), ("-1", True), ("+5", True), ("007", True), ("4.0", False), ("1e3", False)],
        *[("1_000", False), ("x", False), ("", False), ("1" * 20, False)],
    ],
)
def test_ints_take_javas_syntax(text, valid):
    values, ok = ints(pa.array(["1", text]))
    assert ok.tolist() == [True, valid]
    if valid:
        assert values[1] == int(text)


@pytest.mark.parametrize(
    ("text", "valid"),
    [
        *[("12.5", True), ("-1", True), (".5", True), ("5.", True), ("1e3", True), ("+2.5E-1", True)],
        *[("nan", False), ("inf", False), ("Infinity", False), ("1e999", False), ("1_0", False)],
        ("0x1p3", False),
    ],
)
def test_reals_are_finite_decimals(text, valid):
    values, ok = reals(pa.array(["1", text]))
    assert ok.tolist() == [True, valid]
    if valid:
        assert values[1] == float(text)
    else:
        assert values[1] == 0.0


def test_open_binary_reads_gzip_zip_and_plain(tmp_path):
    import gzip
    import zipfile

    data = b"1 2 3\n"
    (tmp_path / "p.txt").write_bytes(data)
    (tmp_path / "g.gz").write_bytes(gzip.compress(data))
    with zipfile.ZipFile(tmp_path / "z.zip", "w") as z:
        z.writestr("t.swf", data)
    for name in ("p.txt", "g.gz", "z.zip"):
        with columns.open_binary(tmp_path / name) as stream:
            assert stream.read() == data


def test_counts_are_numpy_arrays():
    found = scan(io.BytesIO(b"1 2 3\n1\n"), fields=3)
    (block,) = list(found.blocks)
    assert isinstance(block.lines, np.ndarray) and block.short_counts.tolist() == [1]


def test_bytes_beyond_ascii_make_a_field_unreadable_not_the_file(tmp_path):
    from workloads.swf import read_swf

    path = tmp_path / "t.swf"
    path.write_bytes(
        b"1 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n2 0 0 1\xe90 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n"
    )
    trace = read_swf(path, rules="pwa")
    assert trace.table.column("id").to_pylist() == [1]
    assert trace.skipped[0].line == 2 and "field 4 (run time) is '1?0'" in trace.skipped[0].reason
