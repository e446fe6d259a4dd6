from dpkit.evaluate.imbalance import one_class_warning


def test_warns_at_99_percent_one_class():
    msg = one_class_warning(["no"] * 996 + ["yes"] * 4, hint="try --decision balanced")
    assert msg == "predicts 'no' for 99.6 % of rows; try --decision balanced"


def test_silent_below_99_percent_and_on_empty():
    assert one_class_warning(["no"] * 98 + ["yes"] * 2) is None
    assert one_class_warning([]) is None


def test_silent_on_a_handful_of_rows():
    # predicting one row (a notebook's test.iloc[[7]]) is one class by nature: no warning
    assert one_class_warning(["yes"]) is None
    assert one_class_warning(["yes"] * 19) is None
    assert one_class_warning(["yes"] * 20) == "predicts 'yes' for 100.0 % of rows"
