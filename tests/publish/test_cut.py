from __future__ import annotations

import numpy as np
import pytest

from dpkit.algorithms.publish.cut import Cut, grid_points
from dpkit.errors import DataError


def test_initial_cut_is_fully_generalized(schema):
    cut = Cut.initial(schema, "label")
    assert cut.columns == ["age", "size", "band", "color"]  # ignored column and target left out
    assert cut.labels() == {"age": ["[0,10]"], "size": ["[0,1]"], "band": ["[0,100]"], "color": ["Any"]}
    assert cut.shape() == [1, 1, 1, 1]


def test_specialize_and_codes(schema):
    cut = Cut.initial(schema, "label")
    color = cut.attributes["color"]
    color.specialize(schema.columns["color"].root)
    assert color.labels() == ["Warm", "Cool"]
    # leaves depth-first: red, orange, blue, green, teal
    assert color.codes(np.array([0, 1, 2, 3, 4])).tolist() == [0, 0, 1, 1, 1]
    warm = schema.columns["color"].nodes["Warm"]
    color.specialize(warm)
    assert color.labels() == ["red", "orange", "Cool"]
    assert color.codes(np.array([0, 1, 2, 4])).tolist() == [0, 1, 2, 2]


def test_numeric_split_labels_and_codes(schema):
    cut = Cut.initial(schema, "label")
    age = cut.attributes["age"]
    age.split(0, [4])
    age.split(1, [7])
    assert age.labels() == ["[0,4)", "[4,7)", "[7,10]"]  # the last interval is closed
    assert age.codes(np.array([0, 3.99, 4, 6, 7, 10])).tolist() == [0, 0, 1, 1, 2, 2]
    with pytest.raises(ValueError):
        age.split(0, [0])  # not strictly inside


def test_cut_json_round_trip(schema):
    cut = Cut.initial(schema, "label")
    cut.attributes["age"].split(0, [5])
    cut.attributes["size"].split(0, [0.25])
    cut.attributes["color"].specialize(schema.columns["color"].root)
    data = cut.to_json()
    assert data["age"] == [[0, 5], [5, 10]]
    assert data["size"] == [[0.0, 0.25], [0.25, 1.0]]
    back = Cut.from_json(schema, "label", data)
    assert back.labels() == cut.labels()
    vals = np.array([0.1, 0.3, 0.99])
    assert back.attributes["size"].codes(vals).tolist() == cut.attributes["size"].codes(vals).tolist()


@pytest.mark.parametrize(
    "bad, msg",
    [
        ({"color": ["Warm"]}, "does not cover"),
        ({"color": ["Warm", "red"]}, "does not partition"),
        ({"color": ["Purple"]}, "not a node"),
        ({"age": [[0, 4], [5, 10]]}, "tile"),
        ({"age": [[1, 10]]}, "tile"),
        ({"nope": ["Any"]}, "not in schema"),
    ],
)
def test_bad_cut_json_is_refused(schema, bad, msg):
    with pytest.raises(DataError, match=msg):
        Cut.from_json(schema, "label", bad, source="r.json")


def test_grid_points_integer_small_domain_gives_every_integer():
    assert grid_points(15, 40, 32, True).tolist() == list(range(16, 40))


def test_grid_points_are_public_nice_and_bounded():
    for lo, hi, g, integer in [(0, 100000, 32, True), (0, 10, 32, False), (0, 1, 4, False), (15, 95, 32, True)]:
        pts = grid_points(lo, hi, g, integer)
        assert 0 < pts.size <= g
        assert np.all((pts > lo) & (pts < hi))
        steps = np.diff(pts)
        assert np.allclose(steps, steps[0])  # evenly spaced
        if integer:
            assert np.all(pts == np.round(pts))
    assert grid_points(0, 100000, 32, True)[:2].tolist() == [5000, 10000]
    assert grid_points(0, 10, 32, False)[:2].tolist() == [0.5, 1.0]


def test_grid_points_of_a_huge_integer_column_are_integers():
    """A learned column of 16-digit numbers: every grid point a whole number, so that the cut in
    the report and the release's labels agree (2174999999999999.8 was both ...999 and ...000)."""
    pts = grid_points(2e15, 2.8e15, 32, True)
    assert pts.size > 0 and np.all(pts == np.floor(pts))
    assert 2175000000000000.0 in pts.tolist()


def test_an_integer_cut_is_written_as_it_is_labelled(schema):
    """The report's pairs round an integer column's edges as its labels do (not truncate)."""
    from dpkit.algorithms.publish.cut import NumericCut

    cut = NumericCut(schema.columns["age"], [0.0, 4.75])
    assert cut.labels() == ["[0,5)", "[5,10]"]
    assert cut.to_json() == [[0, 5], [5, 10]]


def test_grid_points_empty_when_nothing_fits():
    assert grid_points(3, 4, 32, True).size == 0
