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


# Something a shell, a parser, a template engine or a command's options would trip on: shell
# metacharacters, control characters (C0, DEL, C1, Unicode line separators), ansible/Jinja
# templates, and option-like words (placed before a valid value they make it start with "-").
TROUBLE = [
    "\n", "\r", "\r\n", " ", "\t", "\x00", "\x7f", "\x85", "\u2028", ";", "|", "&", "$", "`",
    "<", ">", "'", '"', "\\", "$(id)", "; rm -rf /", "\u00a0", "\u200b", "é", "٣", "\ufeff", "*",
    "\x1b[31m", "{{ lookup('pipe','id') }}", "{% raw %}", "{{", "{%", "{#", "-", "-x", "--help",
    "-R", "--",
]  # fmt: skip


def _around(valid: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """A valid value with something a shell or a parser would trip on before, inside or after."""
    trouble = st.sampled_from(TROUBLE)
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


# Numbers as a URL's query or a form carries them: not numbers at all, infinities, past any
# float or 64-bit integer, negative, in notations float() reads and int() does not.
hostile_number_strings = st.one_of(
    st.sampled_from(
        [
            "nan",
            "NaN",
            "-nan",
            "inf",
            "-inf",
            "Infinity",
            "-Infinity",
            "1e308",
            "-1e308",
            "1e309",
            "1e20",
            "1e-400",
            "-1",
            "0",
            "-0",
            "2147483648",
            "9223372036854775808",
            "99999999999999999999999",
            "1.5",
            "1e3",
            "0x10",
            "1_000",
            "١٢",
            " 1",
            "1\n",
            "",
        ]
    ),  # fmt: skip
    st.floats().map(repr),
    st.integers(min_value=-(2**80), max_value=2**80).map(str),
)

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(),  # NaN and the infinities among them: json.dumps writes NaN, Infinity
    st.sampled_from([1e308, -1e308, 2**63, -(2**63) - 1, 2**64]),
    hostile_text(),
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(hostile_text(), children, max_size=4)
    ),
    max_leaves=12,
)


def _nest(depth: int, brackets: tuple[str, str], inner: str) -> str:
    opening, closing = brackets
    return opening * depth + inner + closing * depth


deep_json_texts = st.builds(
    _nest,
    st.one_of(st.integers(min_value=65, max_value=2000), st.just(100_000)),
    st.sampled_from([("[", "]"), ('{"a": ', "}"), ('[{"a": ', "}]")]),
    json_values.map(json.dumps),
)

# The bytes of a spec file: anything, nesting deeper than Python's parser goes, or JSON of any
# shape, whole or as one field of a spec.
spec_files = st.one_of(
    st.binary(max_size=2000),
    st.just(b"[" * 100_000),
    deep_json_texts.map(str.encode),
    json_values.map(lambda value: json.dumps(value).encode()),
    json_values.map(lambda value: json.dumps({"filesystem": "scratch", "ssu": value}).encode()),
)
