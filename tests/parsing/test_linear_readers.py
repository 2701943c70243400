"""The readers that search a whole completion at once read it as the line-by-line ones did.

Drafts, sections, fences and labels are found with one search of the text instead of a step
per line or per tag, so that a long completion costs time in proportion to its length. The
line-by-line readers they replace are kept here as the definition of what each must find.
"""

from __future__ import annotations

import re
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import structio as sio
from structio._util.scan import strip_fence
from structio.parsing import decode, labels, locate
from structio.parsing.clean import clean
from structio.parsing.locate import (
    _TAIL_DECORATION_CHARS,
    Found,
    _all_sections,
    _by_norm,
    _may_name,
    _section_text,
    _spellings,
    find_labels,
    norm,
)

# -- the line-by-line readers ---------------------------------------------------------------

_THINK_ANY = re.compile(r"</?think", re.IGNORECASE)
_THINK_TAG = re.compile(r"<(/?)think(?:ing)?>", re.IGNORECASE)


def _starts_its_line(text: str, start: int) -> bool:
    line = text[:start].rsplit("\n", 1)[-1]
    return line.strip(" \t") == ""


def _ends_its_line(text: str, end: int) -> bool:
    rest = text[end:].split("\n", 1)[0]
    glued = rest[:1] == "<" and rest[1:2] in set(string.ascii_letters + "/")
    return rest.strip(" \t\r") == "" or glued or rest.startswith(("[[", "{", "```"))


def clean_by_tags(completion: str) -> str:
    """`clean`, tag by tag: a draft opens at a line's start; a lone close starts or ends one."""
    if _THINK_ANY.search(completion) is None:
        return strip_fence(completion.strip()).strip()
    kept: list[str] = []
    position = 0
    in_draft = False
    for tag in _THINK_TAG.finditer(completion):
        closing = tag.group(1) == "/"
        if in_draft:
            if closing:
                in_draft = False
                position = tag.end()
        elif not closing and _starts_its_line(completion, tag.start()):
            kept.append(completion[position : tag.start()])
            in_draft = True
        elif closing and (
            _starts_its_line(completion, tag.start()) or _ends_its_line(completion, tag.end())
        ):
            kept = []
            position = tag.end()
    if not in_draft:
        kept.append(completion[position:])
    return strip_fence("".join(kept).strip()).strip()


_FENCE_BY_LINE = re.compile(r"^\s*```[\w+-]*\s*$")


def section_text_by_lines(lines: list[str]) -> str:
    fences = [i for i, line in enumerate(lines) if _FENCE_BY_LINE.match(line)]
    if len(fences) % 2 == 1:
        drop = fences[-1] if fences[-1] == len(lines) - 1 else fences[0]
        lines = lines[:drop] + lines[drop + 1 :]
    return "\n".join(lines).strip()


_DECORATION = re.compile(r"^[\s*_`#>|:~\-]*$")


def splitting_markers_by_slices(line: str) -> list[tuple[re.Match[str], bool]]:
    if "[[" not in line:
        return []
    splits: list[tuple[re.Match[str], bool]] = []
    for match in locate._MARKER.finditer(line):
        at_start = not splits and bool(_DECORATION.match(line[: match.start()]))
        at_end = bool(_DECORATION.match(line[match.end() :]))
        if at_start or at_end:
            splits.append((match, True))
        elif splits:
            splits.append((match, False))
    return splits


def all_sections_by_lines(
    text: str, by_norm: dict[str, str], output_set: set[str]
) -> list[tuple[str | None, bool, str]]:
    sections: list[tuple[str | None, bool, list[str]]] = [(None, True, [])]
    seen_output = False
    for line in text.split("\n"):
        splits = splitting_markers_by_slices(line)
        if not splits:
            sections[-1][2].append(line)
            continue
        head = line[: splits[0][0].start()].rstrip(_TAIL_DECORATION_CHARS)
        if head.strip():
            sections[-1][2].append(head)
        stop = False
        for index, (match, strong) in enumerate(splits):
            end = splits[index + 1][0].start() if index + 1 < len(splits) else len(line)
            rest = locate._LEAD_DECORATION.sub("", line[match.end() : end], count=1)
            rest = rest.rstrip(_TAIL_DECORATION_CHARS) if index + 1 < len(splits) else rest
            label = norm(match.group(1))
            name = by_norm.get(label)
            seen_output = seen_output or any(
                n is not None and n in output_set and not locate.is_placeholder("\n".join(b), n)
                for n, _, b in sections
            )
            if label == "completed" and seen_output:
                sections.append((None, True, []))
                stop = True
                break
            sections.append((name, strong, [rest] if rest.strip() else []))
        if stop:
            break
    return [(name, strong, "\n".join(lines)) for name, strong, lines in sections]


def labels_by_lines(
    text: str, names: list[str], outputs: dict[str, bool], narrow: tuple[str, ...] = ()
) -> Found | None:
    by_norm = {norm(n): n for n in names}
    label_line = labels._label_line(tuple(by_norm.values()))
    current: str | None = None
    collected: dict[str, list[list[str]]] = {}  # each time an output is labelled, its lines
    before: list[str] = []
    labelled = False
    for line in text.split("\n"):
        match = label_line.match(line)
        name = by_norm.get(norm(match.group(1))) if match else None
        if match and name is not None:
            labelled = True
            current = name
            collected.setdefault(name, []).append([match.group(2).rstrip(_TAIL_DECORATION_CHARS)])
        elif current is not None:
            collected[current][-1].append(line)
        elif not labelled:
            before.append(line)
    found = Found(how="labels")
    for name in outputs:
        if name in collected:
            first, *again = ["\n".join(lines).strip() for lines in collected[name]]
            other = [v for v in again if v != first and not locate.is_placeholder(v, name)]
            if other:
                found.conflicts[name] = (first, locate.two_values(first, other[0]))
            else:
                found.texts[name] = first
    if collected:
        found.open.add(next(reversed(collected)))
    missing = [
        name
        for name, needed in outputs.items()
        if needed and name not in found.texts and name not in found.conflicts
    ]
    if len(missing) == 1 and found.texts and missing[0] in narrow:
        lines = [line for line in "\n".join(before).splitlines() if line.strip()]
        if len(lines) == 1:
            found.texts[missing[0]] = lines[0].strip()
            missing = []
    if not (found.texts or found.conflicts) or missing:
        return None
    return found


# -- the same readings ----------------------------------------------------------------------

TAG_PIECES = ["<think>", "</think>", "<thinking>", "</THINKING>", "<Think>", "<think", "</"]
TAG_PIECES += ["think>", "x", "\n", " ", "```", "```json\n", "İ", "[[ ## answer ## ]]\n"]
TAG_PIECES += ["<a>", "{", '"', "[", "\t"]


@given(st.lists(st.sampled_from(TAG_PIECES), max_size=16).map("".join))
@settings(max_examples=1500, deadline=None)
def test_drafts_are_dropped_as_tag_by_tag(text: str) -> None:
    assert clean(text) == clean_by_tags(text)


LINE_PIECES = ["```", "```python", "```json", "``", "`", " ", "\t", "\r", "\x0b", "\x85"]
LINE_PIECES += ["\u2028", "\xa0", "x", "+", "-", "\x1c"]
lines_strategy = st.lists(
    st.lists(st.sampled_from(LINE_PIECES), max_size=4).map("".join), max_size=7
)


@given(lines_strategy)
@settings(max_examples=1500, deadline=None)
def test_fences_are_found_as_line_by_line(lines: list[str]) -> None:
    assert _section_text("\n".join(lines)) == section_text_by_lines(lines)


SECTION_PIECES = ["[[ ## answer ## ]]", "[[ ## notes ## ]]", "[[ ## completed ## ]]", "[["]
SECTION_PIECES += ["[[ ## question ## ]]", "**", "###", ":", "\n", "\n", "\n\n", "```", "x"]
SECTION_PIECES += ["{answer}", " ", "\r", "[[ ## Answer ## ]]", "[[## notes ##]]", "]]", "- "]
SECTION_PIECES += ["x", "`", "~", "|", ">", "\t", "\u2028", "\x85"]
NAMES = ("question", "answer", "notes")


@given(st.lists(st.sampled_from(SECTION_PIECES), max_size=30).map("".join))
@settings(max_examples=1500, deadline=None)
def test_markers_on_a_line_are_found_as_before(line: str) -> None:
    line = line.replace("\n", " ")
    found = [(m.span(), strong) for m, strong in locate._splitting_markers(line)]
    assert found == [(m.span(), strong) for m, strong in splitting_markers_by_slices(line)]


@given(st.lists(st.sampled_from(SECTION_PIECES), max_size=30).map("".join))
@settings(max_examples=1500, deadline=None)
def test_sections_are_split_as_line_by_line(text: str) -> None:
    by_norm = _by_norm(NAMES)
    outputs = {"answer", "notes"}
    assert _all_sections(text, by_norm, outputs) == all_sections_by_lines(text, by_norm, outputs)


LABEL_PIECES = ["answer", "Answer", "notes", "question", "other", ":", ": ", "**", "-", " "]
LABEL_PIECES += ["\n", "\n", "\r", "x", "42", "`", "#", "\t", "\u2028", "_", "a:b", "\n\n"]
LABEL_PIECES += [" = ", " - ", "\u2014", "1. ", "billing"]


@given(
    st.lists(st.sampled_from(LABEL_PIECES), max_size=25).map("".join),
    st.sampled_from(
        [
            {"answer": True},
            {"answer": True, "notes": False},
            {"notes": False},
            {"answer": True, "notes": True},
        ]
    ),
    st.sampled_from([(), ("answer",), ("answer", "notes")]),
)
@settings(max_examples=1500, deadline=None)
def test_labels_are_read_as_line_by_line(
    text: str, outputs: dict[str, bool], narrow: tuple[str, ...]
) -> None:
    names = list(NAMES)
    assert find_labels(text, names, outputs, narrow) == labels_by_lines(
        text, names, outputs, narrow
    )


# -- JSON chunks that name no output ----------------------------------------------------------

KEY_PIECES = ['"', "'", "ans", "wer", "an", "swer", "ANSWER", "answer", "_", "-", " ", ":"]
KEY_PIECES += ["1", ",", "{", "}", "[", "]", "\\u0061", "\\", "nswer", "/*", "*/", "//", "\n"]
KEY_PIECES += ["#", "None", "...", "1e999", "'ans' 'wer'", '"an" "swer"', "Answer: 1"]
BY_NORM = _by_norm(("answer", "notes"))


@given(st.lists(st.sampled_from(KEY_PIECES), max_size=12).map("".join))
@settings(max_examples=3000, deadline=None)
def test_a_chunk_that_gives_an_output_key_is_never_passed_over(body: str) -> None:
    chunk = "{" + body + "}"
    value, _ = decode.decode_marked(chunk)  # as `_objects` reads it, a repeated key marked
    spellings = _spellings(tuple(BY_NORM))
    assert spellings is not None
    if value is not None and locate._fit(value, BY_NORM)[1]:
        assert _may_name(chunk, spellings)


@pytest.mark.parametrize(
    "chunk",
    [
        '{"answer": 1}',
        "{'Answer': 1}",
        '{"wrapper": {"an_swer": 1}}',
        "{ANSWER: 1}",
        "{'ans' 'wer': 1}",
        '{"an-swer": 1, "notes": 2}',
    ],
)
def test_a_chunk_that_spells_an_output_is_read(chunk: str) -> None:
    assert decode.decode_object(chunk) is not None
    assert _may_name(chunk, ("answer",))


def test_an_escaped_or_numeric_key_turns_the_check_off() -> None:
    assert decode.decode_object('{"\\u0061nswer": 1}') == {"answer": 1}
    assert _may_name('{"\\u0061nswer": 1}', ("answer",))
    assert decode.decode_object("{-1e999: 1}") == {float("-inf"): 1}
    assert _spellings(("inf",)) is None  # `-1e999` spells no `inf`
    assert _spellings(("\u03c3",)) is None  # lowercasing it depends on its neighbours
    assert _spellings(("answer",)) == ("answer",)


def test_a_brace_in_a_string_of_a_chunk_naming_no_output_hides_nothing_after_it() -> None:
    # Once read from inside the first chunk, the `{` in its string opened a "chunk" running
    # to the end of the text, which hid the answer.
    text = 'Code: {print("{")} then {"answer": 1}'
    for adapter in (sio.ChatAdapter(), sio.JSONAdapter()):
        assert adapter.parse("question -> answer: int", text) == {"answer": 1}


def test_text_json_repair_fails_on_is_a_parse_error() -> None:
    # json-repair 0.64 raises AssertionError on this text rather than reading it.
    for adapter in (sio.ChatAdapter(), sio.JSONAdapter()):
        with pytest.raises(sio.ParseError):
            adapter.parse("question -> answer: int", "{'```json```[")


# -- the work done on code full of braces -----------------------------------------------------

CODE = "\n".join(
    [
        'config = {"name": "svc", "ports": [80, 443], "env": {"DEBUG": False}}',
        "handler = lambda event, ctx: {'status': 200, 'body': json.dumps({'ok': True})}",
        "print(f\"{user['name']!r} has {len(items)} items: {[i.id for i in items]}\")",
        "export default { data() { return { count: 0, items: [] }; } };",
    ]
    * 200
)


@pytest.fixture
def repaired(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The length of each text json-repair reads."""
    lengths: list[int] = []
    real = decode._json_repaired

    def counted(text: str) -> object:
        lengths.append(len(text))
        return real(text)

    monkeypatch.setattr(decode, "_json_repaired", counted)
    return lengths


def test_code_that_names_no_output_is_not_decoded_chunk_by_chunk(repaired: list[int]) -> None:
    for adapter in (sio.ChatAdapter(), sio.JSONAdapter()):
        with pytest.raises(sio.ParseError):
            adapter.parse("question -> answer", CODE)
    assert repaired == []


def test_json_repair_rereads_nested_chunks_once_at_most(repaired: list[int]) -> None:
    # Each block holds the output's name, and none reads as JSON: every level is searched
    # for objects inside it, but json-repair reads the text no more than twice in all (it
    # read it once per level before, nine times here).
    text = "if (items) {\n" * 8 + CODE + "}" * 8
    locate.find_json(text, ["items"])
    assert len(text) < sum(repaired) <= 2 * len(text)
