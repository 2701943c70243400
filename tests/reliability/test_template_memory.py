"""A render allocates no more than its max_output: text is measured before it is built.

Each operation that makes text of a value (``{{ xs }}``, ``~``, ``+``, ``*``, ``%``,
``str.format``, ``join``, filters) is given text of 400 KB to 100 MB once built (500
references to one 200 KB string, say), under a limit of 10,000 characters: the render is
refused with a `TemplateError` naming the limit, and the most memory it held
(`tracemalloc`, counted in bytes, not timed) stays far below what building the text
would take."""

from __future__ import annotations

import tracemalloc
from typing import Any

import pytest

import structio as sio
from structio.rendering.budget import _text_size

HEADER = "- name: a\n  content: hello\n- name: b\n  content: "  # the value is on line 4
LIMIT = 10_000
LONG = "x" * 200_000
DATA: dict[str, Any] = {"xs": [LONG] * 500, "s": LONG, "d": {"k": [LONG] * 500}}
DATA["long"] = "x" * 9_000  # within the limit once; 50 copies of it are not

BUILDERS = {
    "a list written out": "{{ xs }}",
    "a dict written out": "{{ d }}",
    "a list in a set block": "{% set a %}{{ xs }}{% endset %}",
    "a ~": "{{ xs ~ '' }}",
    "a + of strings": "{{ s + s + s }}",
    "a * of a string": "{{ s * 500 }}",
    "a % format": "{{ '%s' % xs }}",
    "a % format of a tuple": "{{ '%s%s' % (xs, xs) }}",
    "a % format of a mapping": "{{ '%(a)s' % {'a': xs} }}",
    "str.format": "{{ '{}'.format(xs) }}",
    "str.format by name": "{{ '{a}'.format(a=xs) }}",
    "str.format_map": "{{ '{a}'.format_map({'a': xs}) }}",
    "a join method": "{{ ''.join(xs) }}",
    "a join filter": "{{ xs | join }}",
    "the string filter": "{{ xs | string }}",
    "the pprint filter": "{{ xs | pprint }}",
    "the tojson filter": "{{ xs | tojson }}",
    "the upper filter": "{{ xs | upper }}",
    "the format filter": "{{ '%s' | format(xs) }}",
    "a captured text written again": (
        "{% set a %}{{ long }}{% endset %}{% for i in range(50) %}{{ a }}{% endfor %}"
    ),
    "a captured text captured again": (
        "{% set a %}{{ long }}{% endset %}"
        "{% set b %}{% for i in range(50) %}{{ a }}{% endfor %}{% endset %}{{ b | length }}"
    ),
}


@pytest.mark.parametrize("body", BUILDERS.values(), ids=BUILDERS.keys())
def test_text_past_max_output_is_refused_before_it_is_built(body: str) -> None:
    template = sio.Template(HEADER + body, max_output=LIMIT)
    template.render(
        {"xs": ["x"], "s": "x", "d": {}, "long": "x"}
    )  # compiled, and small data renders
    tracemalloc.start()
    try:
        with pytest.raises(sio.TemplateError, match=r"line 4: .*max_output \(10,000"):
            template.render(DATA)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Building the text would hold 400 KB to 100 MB; the render holds kilobytes of its own.
    assert peak < 200_000


def test_text_within_max_output_still_renders() -> None:
    data = {"xs": ["ab"] * 3, "s": "xy", "d": {"k": 1}}
    rendered = {
        "{{ xs }}": "['ab', 'ab', 'ab']",
        "{{ d }}": "{'k': 1}",
        "{{ xs ~ '!' }}": "['ab', 'ab', 'ab']!",
        "{{ '%s|%s' % (s, xs) }}": "xy|['ab', 'ab', 'ab']",
        "{{ '{}'.format(xs) }}": "['ab', 'ab', 'ab']",
        "{{ '-'.join(xs) }}": "ab-ab-ab",
        "{{ xs | join('-') }}": "ab-ab-ab",
        "{{ xs | tojson }}": '["ab", "ab", "ab"]',
        "{% set a %}{{ s }}{% endset %}{{ a }}{{ a }}": "xyxy",
    }
    for body, text in rendered.items():
        prompt = sio.Template(HEADER + body, max_output=100).render(data)
        assert prompt.parts[-1].content == text, body


def test_a_value_is_measured_without_building_its_text() -> None:
    cyclic: list[Any] = [1]
    cyclic.append(cyclic)
    assert _text_size(cyclic, 100) >= 3
    assert _text_size(["ab", "cd"], 100) == len(str(["ab", "cd"]))
    assert _text_size({"a": [1, 2]}, 100) == len(str({"a": [1, 2]}))
    assert _text_size(10**50, 100) <= len(str(10**50))
    # Past the limit, the count stops.
    assert _text_size(["x"] * 10**6, 100) > 100
