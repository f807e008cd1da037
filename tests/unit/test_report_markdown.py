"""The Markdown report is pasted into chat and GitHub: money reads as written ($1,234.56, not \\$1,234.56)
and nothing from input can open GitHub math, a table cell or emphasis."""

import re

from hypothesis import given, strategies as st

from pipelines.reports.markdown import md


def test_money_stays_as_written_and_input_dollars_are_escaped():
    assert md("pretrain spent $12,345.67 of which $1,234.56 idle") == "pretrain spent $12,345.67 of which $1,234.56 idle"
    assert md("team a$b and $x | *y*") == r"team a\$b and \$x \| \*y\*"


@given(st.text(alphabet="$ab1 |*_\\`", max_size=40))
def test_no_unescaped_dollar_can_close_math(text):
    out = md(text)
    # every `$` not escaped is followed by a digit, and a `$` before a digit cannot close math on GitHub
    for m in re.finditer(r"(?<!\\)(?:\\\\)*\$", out):
        assert out[m.end():m.end() + 1].isdigit(), out
