"""Text fitted to its figure, checked with the renderer's own text extents after a real draw."""

from __future__ import annotations

import pytest

from emulator.report.style import new_figure
from emulator.report.text_fit import fit_categories, fit_legend, wrap
from tests.figure_checks import disjoint, drawn, inside


def chars(text: str) -> float:
    return 10.0 * len(text)


@pytest.mark.parametrize(
    ("text", "room", "lines"),
    [
        ("easy[order=sjf]", 120, "easy\n[order=sjf]"),
        ("easy[order=sjf]", 100, "easy\n[order=\nsjf]"),
        ("easy[order=sjf]", 200, "easy[order=sjf]"),
        ("most-bandwidth", 100, "most-\nbandwidth"),
        ("conservative", 50, "conservative"),  # no break: one line, too wide
        ("cs2[w_d=15.0,sort=quick]", 110, "cs2\n[w_d=15.0,\nsort=quick]"),
        ("sweep: easy, dll", 100, "sweep:\neasy, dll"),
    ],
)
def test_labels_wrap_before_brackets_and_after_commas_first_then_after_hyphens(text, room, lines):
    assert wrap(text, room, chars) == lines


def category_figure(names: list[str], width: float):
    figure = new_figure(2.8, width=width)
    ax = figure.add_subplot()
    ax.plot(range(len(names)), range(len(names)), "o")
    ax.set_xticks(range(len(names)), names)
    ax.set_xlim(-0.6, len(names) - 0.4)
    figure.fitters.append(fit_categories(ax, names))
    return figure, ax


POLICIES = ["easy", "conservative", "easy[order=sjf]"]
SPECS = ["cs2[w_d=15.0,sort=quick]", "flexible[priority=ls,k=2.0]", "titan[population=20]", "gridsim-easy"]
MANY = [f"policy-{i}" for i in range(14)]


@pytest.mark.parametrize("width", [3.5, 7.0])
@pytest.mark.parametrize("names", [POLICIES, SPECS, MANY], ids=["policies", "specs", "many"])
def test_category_tick_labels_never_overlap_nor_leave_the_figure(names, width):
    figure, ax = category_figure(names, width)
    renderer = drawn(figure)
    labels = ax.get_xticklabels()
    assert [t.get_text().replace("\n", "") for t in labels] == names  # wrapped, never cut
    assert disjoint(labels, renderer) and inside(figure, renderer)


def test_short_names_stay_horizontal_and_long_ones_wrap_then_turn_vertical():
    _, ax = category_figure(POLICIES, 3.5)
    drawn(ax.figure)
    assert [t.get_rotation() for t in ax.get_xticklabels()] == [0, 0, 0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["easy", "conservative", "easy\n[order=sjf]"]
    _, ax = category_figure(MANY, 3.5)
    drawn(ax.figure)
    assert {t.get_rotation() for t in ax.get_xticklabels()} == {90}


def test_a_figure_drawn_again_at_another_width_fits_again():
    figure, ax = category_figure(POLICIES, 10.0)
    drawn(figure)
    assert [t.get_text() for t in ax.get_xticklabels()] == POLICIES  # room enough: as they are
    figure.set_size_inches(3.5, 2.8)
    renderer = drawn(figure)
    assert (
        disjoint(ax.get_xticklabels(), renderer) and ax.get_xticklabels()[2].get_text() == "easy\n[order=sjf]"
    )


@pytest.mark.parametrize(("width", "columns"), [(10.0, 5), (3.5, 2)])
def test_a_legend_takes_the_fewest_balanced_rows_that_fit_the_width(width, columns):
    figure = new_figure(2.8, width=width)
    ax = figure.add_subplot()
    labels = ["least-load", "most-bandwidth", "round-robin", "random", "dll"]
    handles = [ax.plot([0, 1], [i, i])[0] for i in range(len(labels))]

    def make(texts, ncols):
        return figure.legend(handles, texts, ncols=ncols, loc="outside upper center", frameon=False)

    figure.fitters.append(fit_legend(figure, make, labels))
    renderer = drawn(figure)
    (legend,) = figure.legends
    assert legend._ncols == columns and [t.get_text() for t in legend.get_texts()] == labels
    assert inside(figure, renderer) and disjoint(legend.get_texts(), renderer)
    if columns < len(labels):  # one more column would not have fitted
        wider = make(labels, columns + 1)
        assert wider.get_window_extent(renderer).width > figure.bbox.width * 0.98


def test_titles_wrap_to_their_axes_and_crowded_minor_tick_labels_go():
    figure = new_figure(2.0, width=3.5)
    left, right = figure.subplots(1, 2)
    left.set_title("Late jobs per cluster (% of jobs with a deadline)", loc="left")
    right.set_xscale("log")
    right.plot([1.0, 6.0], [0, 1])  # under a decade: matplotlib labels the minor ticks 2, 3, 4, 6
    renderer = drawn(figure)
    assert left.get_title(loc="left").count("\n") >= 2 and inside(figure, renderer)
    assert disjoint(right.get_xticklabels(which="both"), renderer)
    figure.set_size_inches(10.0, 2.0)  # room again: the title as it was set
    drawn(figure)
    assert left.get_title(loc="left") == "Late jobs per cluster (% of jobs with a deadline)"
