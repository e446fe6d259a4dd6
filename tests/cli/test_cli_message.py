"""The CLI speaks of flags where the library names parameters (dpkit/cli/boundary.py)."""

from dpkit.cli.boundary import cli_message
from dpkit.errors import DpkitError, DpkitWarning


def test_a_message_starting_with_the_parameter_starts_with_the_flag():
    assert cli_message(DpkitError("selection_share must be in (0, 1)", param="selection_share")) == (
        "--selection-share must be in (0, 1)")


def test_a_keyword_mention_mid_sentence_becomes_the_flag():
    err = DpkitError("d.csv:3: ragged row; check delimiter= and quoting", param="delimiter")
    assert cli_message(err) == "d.csv:3: ragged row; check --delimiter and quoting"
    warn = DpkitWarning("d.csv: fields are separated by ';' (sniffed; pass delimiter= to choose)", param="delimiter")
    assert cli_message(warn) == "d.csv: fields are separated by ';' (sniffed; pass --delimiter to choose)"


def test_otherwise_the_flag_follows_in_brackets_and_plain_messages_pass():
    assert cli_message(DpkitError("no such class", param="positive")) == "no such class (--positive)"
    assert cli_message(DpkitError("plain")) == "plain"
    assert cli_message(ValueError("x")) == "x"


def test_every_mentioned_parameter_of_a_command_becomes_its_flag():
    err = DpkitError("l= needs sensitive= (the column that must be ℓ-diverse)", param="sensitive")
    assert cli_message(err) == "--l needs --sensitive (the column that must be ℓ-diverse)"
    # a name no command has stays as Python spells it; a value after '=' is no mention
    assert cli_message(DpkitError("pass nosuchparam= or k=10", param="k")) == "pass nosuchparam= or k=10 (-k)"
    assert cli_message(DpkitError("declare it ignored (ignore='COLUMN')", param="ignore")) == (
        "declare it ignored (--ignore COLUMN)")


def test_a_line_break_from_the_data_keeps_the_message_on_one_line():
    """A category quoted from a cell may hold a quoted newline: the message stays one line."""
    err = DpkitError("t.csv: column 'c' has values the model does not know; trained with (x, two\nlines\r)")
    assert cli_message(err) == "t.csv: column 'c' has values the model does not know; trained with (x, two\\nlines\\r)"
