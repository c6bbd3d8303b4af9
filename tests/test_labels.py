"""Short labels: ``--label RAW=SHORT`` split outside brackets, TOML and CSV files, one-line errors."""

from __future__ import annotations

import pytest

from emulator.report import ReportError, read_labels
from emulator.report.labels import parse_label


@pytest.mark.parametrize(
    ("item", "pair"),
    [
        ("easy[order=sjf]=EASY-SJF", ("easy[order=sjf]", "EASY-SJF")),
        ("easy[order=sjf,reserve=1]=EASY (SJF, 1)", ("easy[order=sjf,reserve=1]", "EASY (SJF, 1)")),
        ("most-bandwidth=BARS", ("most-bandwidth", "BARS")),
        ("mean_wait=wait", ("mean_wait", "wait")),
        ("a=b=c", ("a", "b=c")),
    ],
)
def test_a_label_splits_at_its_first_equals_sign_outside_brackets(item, pair):
    assert parse_label(item) == pair


@pytest.mark.parametrize("item", ["easy", "=EASY", "easy=", "easy[order=sjf]"])
def test_a_label_without_raw_and_short_is_an_error(item):
    with pytest.raises(ReportError, match="expected RAW=SHORT"):
        parse_label(item)


def test_files_then_items_later_ones_winning(tmp_path):
    toml = tmp_path / "labels.toml"
    toml.write_text('"easy[order=sjf]" = "EASY-SJF"\n"most-bandwidth" = "BARS"\n')
    csv = tmp_path / "labels.csv"
    csv.write_text('value,label\n# comment\n"easy[order=sjf,reserve=1]",EASY-R1\nmost-bandwidth,MB\n\n')
    assert read_labels(["dll=DLL", "most-bandwidth=bars"], [toml, csv]) == {
        "easy[order=sjf]": "EASY-SJF",
        "most-bandwidth": "bars",
        "easy[order=sjf,reserve=1]": "EASY-R1",
        "dll": "DLL",
    }


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "l.csv",
            "easy,EASY\nconservative\n",
            "l.csv:2: expected two cells, value,label; got ['conservative']",
        ),
        ("l.csv", "a,b,c\n", "l.csv:1: expected two cells, value,label; got ['a', 'b', 'c']"),
        ("l.toml", "easy = 3\n", 'l.toml: key \'easy\': expected a label, "easy" = "SHORT"; got 3'),
        ("l.toml", "easy = \n", "l.toml: invalid TOML: "),
        ("l.txt", "easy,EASY\n", "l.txt: a labels file is .toml or .csv, not .txt"),
        ("missing.csv", None, "missing.csv: cannot read the labels file (No such file or directory)"),
    ],
)
def test_bad_label_files_are_one_line_errors_naming_file_and_line(tmp_path, name, text, message):
    path = tmp_path / name
    if text is not None:
        path.write_text(text)
    with pytest.raises(ReportError) as error:
        read_labels(files=[path])
    assert str(error.value).startswith(f"{path.parent}/{message}") and "\n" not in str(error.value)
