"""What the fuzz tests share: how many examples, and the texts and JSON they are fed.

A fuzz test is marked `fuzz` and takes its settings from `examples(n)`: n examples in
`make test`, OSTARA_FUZZ_EXAMPLES each in `make fuzz`. The portal's fuzz tests use it too.
"""

from __future__ import annotations

import json
import os
import re

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

# What may reach a shell word, an ansible variable or a Pacemaker id: no whitespace, quotes,
# `;|&$`<>`, newlines or other control characters, nothing outside ASCII.
SHELL_SAFE = re.compile(r"[A-Za-z0-9._:@/+=,%-]+")


def examples(default: int) -> settings:
    """`default` examples in `make test`; OSTARA_FUZZ_EXAMPLES in `make fuzz`."""
    count = int(os.environ.get("OSTARA_FUZZ_EXAMPLES") or default)
    return settings(
        max_examples=count,
        deadline=None,
        # Fixtures are shared by the examples of a test; each example rolls back what it did.
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.filter_too_much,
            HealthCheck.function_scoped_fixture,
        ],
    )


def _around(valid: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """A valid value with something a shell or a parser would trip on before, inside or after."""
    trouble = st.sampled_from(
        ["\n", "\r", " ", "\t", "\x00", ";", "|", "&", "$", "`", "<", ">", "'", '"', "\\",
         "$(id)", "; rm -rf /", "\u00a0", "\u200b", "é", "٣", "\ufeff", "*", "\x1b[31m"]
    )  # fmt: skip
    return st.one_of(
        st.tuples(valid, trouble).map("".join),
        st.tuples(trouble, valid).map("".join),
        st.tuples(valid, trouble, valid).map("".join),
    )


def hostile_text(*valid_patterns: str) -> st.SearchStrategy[str]:
    """Any text: unicode, control characters, shell metacharacters, very long strings, and
    values that are valid but for one troublesome character (around each pattern given)."""
    valids = [st.from_regex(pattern, fullmatch=True) for pattern in valid_patterns]
    return st.one_of(
        st.text(),
        st.text(alphabet=st.characters(codec="ascii"), max_size=40),
        st.text(min_size=300, max_size=5000),
        *valids,
        *(_around(valid) for valid in valids),
    )


json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(),
    hostile_text(),
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(hostile_text(), children, max_size=4)
    ),
    max_leaves=12,
)

# The bytes of a spec file: anything, nesting deeper than Python's parser goes, or JSON of any
# shape, whole or as one field of a spec.
spec_files = st.one_of(
    st.binary(max_size=2000),
    st.just(b"[" * 100_000),
    json_values.map(lambda value: json.dumps(value).encode()),
    json_values.map(lambda value: json.dumps({"filesystem": "scratch", "ssu": value}).encode()),
)
