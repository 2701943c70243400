"""The fast reader of rendered templates never disagrees with PyYAML, and takes the usual shape."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import structio as sio
from structio.rendering import _yaml_parts
from structio.rendering._yaml_parts import read_parts

KEYS = ["name", "role", "content", "truncation_priority", "yes", "null", "on", "extra", "Name"]
VALUES = [
    "",
    "x",
    "user",
    "system",
    "assistant",
    "robot",
    "0",
    "1",
    "7",
    "01",
    "0x1",
    "1_0",
    "-1",
    "+1",
    "1.5",
    ".5",
    "1e3",
    "yes",
    "No",
    "true",
    "off",
    "y",
    "null",
    "~",
    "2024-01-01",
    "a: b",
    "a:b",
    "a #b",
    "a#b",
    "x:",
    "'quoted'",
    '"quoted"',
    "[1, 2]",
    "{a: 1}",
    "a, b",
    "&anchor",
    "*alias",
    "!tag x",
    "%x",
    "@x",
    "`x",
    "<<",
    "=",
    "| x",
    ">",
    "|",
    "|-",
    "|+",
    "|2",
    "   |",
    "a\tb",
    "trailing   ",
    "ünïcödé ✓",
    "<|space|>x",
    "hello world.",
    "__sio0123_4__",
]
BLOCK_LINES = [
    "    text",
    "   three",
    "      deeper",
    "",
    "  ",
    "     ",
    "    # not a comment",
    "\tx",
]


SAFE_VALUES = ["x", "user", "assistant", "system", "1", "0", "hello world.", "__sio0123_4__"]


@st.composite
def documents(draw: st.DrawFn) -> str:
    """Lists of parts near the shape the reader takes: often inside it, often just outside."""
    odd = draw(st.floats(0, 0.3))  # how often a line leaves the usual shape

    def pick(usual: list[str], unusual: list[str]) -> str:
        return draw(st.sampled_from(unusual if draw(st.floats(0, 1)) < odd else usual))

    lines: list[str] = []
    for _ in range(draw(st.integers(0, 5))):
        keys = ["name", "role", "truncation_priority", "content"]
        keys = [k for k in keys if k in ("name", "content") or draw(st.booleans())]
        for number, usual_key in enumerate(keys):
            lead = "- " if number == 0 else pick(["  "], ["- ", " ", "   ", ""])
            key = pick([usual_key], KEYS)
            if usual_key == "content" and draw(st.booleans()):
                lines.append(f"{lead}{key}: {pick(['|', '|-'], ['|+', '>', '|2', '| #'])}")
                lines.extend(
                    pick(["    text", "    more: text # here", "", "      deeper"], BLOCK_LINES)
                    for _ in range(draw(st.integers(1, 4)))
                )
                continue
            value = pick(SAFE_VALUES, VALUES)
            lines.append(f"{lead}{key}: {value}" if value else f"{lead}{key}:")
        if draw(st.floats(0, 1)) < odd:
            lines.append(
                draw(
                    st.sampled_from(
                        ["", " ", "# comment", "  # comment", "---", "...", "key: v", "- x", "-"]
                    )
                )
            )
    return "\n".join(lines) + draw(st.sampled_from(["", "\n", "\n\n"]))


def _render(text: str) -> list[sio.Part] | str:
    try:
        return list(sio.Template(text).render().parts)
    except sio.TemplateError as exc:
        return str(exc)


@given(documents())
@settings(max_examples=600, deadline=None)
def test_the_fast_reader_agrees_with_pyyaml(text: str) -> None:
    fast = _render(text)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_yaml_parts, "read_parts", lambda _text: None)
        slow = _render(text)
    assert fast == slow


def test_the_usual_chat_template_takes_the_fast_path() -> None:
    template = sio.Template(
        """
- name: system
  role: system
  content: |
    You are {{ persona }}.
{% for m in messages %}
- name: message_{{ loop.index }}
  role: {{ m.role }}
  truncation_priority: 1
  content: |
    {{ m.content }}
{% endfor %}
- name: user
  role: user
  content: {{ question }}
"""
    )
    seen: list[object] = []

    def spy(text: str) -> object:
        result = read_parts(text)
        seen.append(result)
        return result

    messages = [
        {"role": "user", "content": "a: b\n- name: x"},
        {"role": "assistant", "content": "c"},
    ]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_yaml_parts, "read_parts", spy)
        prompt = template.render({"persona": "kind", "messages": messages, "question": "why?"})
    assert seen
    assert seen[0] is not None
    assert [p.content for p in prompt.parts] == ["You are kind.", "a: b\n- name: x", "c", "why?"]


@pytest.mark.parametrize(
    "text",
    [
        "- name: a\n  content: 'quoted'\n",  # quoted scalars
        "- name: a\n  content: >\n    folded\n",  # folded blocks
        "- name: a\n  content: one\n    two\n",  # a plain scalar over two lines
        "- name: a\n  content: yes\n",  # YAML 1.1 reads a boolean
        "- name: a\n  role: |\n    user\n",  # a block outside content
        "- name: a\r\n  content: x\r\n",  # other line breaks
        "name: a\n",  # not a list
    ],
)
def test_the_fast_reader_leaves_other_shapes_to_pyyaml(text: str) -> None:
    assert read_parts(text) is None


def test_the_fast_reader_reads_values_and_lines() -> None:
    text = (
        "# parts\n- name: a\n  truncation_priority: 2\n  content: |-\n    x\n\n     y\n\n"
        "- name: b\n  content:\n"
    )
    assert read_parts(text) == [
        ({"name": "a", "truncation_priority": "2", "content": "x\n\n y\n"}, 2),
        ({"name": "b", "content": None}, 9),
    ]
