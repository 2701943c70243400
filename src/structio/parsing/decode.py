"""The one decoding ladder: JSON-ish text to Python data, never completing a cut-off value.

Every reader that turns model text into data (a section's value, a JSON object in a
completion, a bare JSON answer) goes through `decode_text` or `decode_object`, so the same
text always decodes the same way.

An object that gives one key two different values (``{"answer": 4, "answer": 5}``) has no
one reading: every step refuses it (`DuplicateKeyError`) rather than keep the first or the last
value; `decode_marked` marks such a key a `Conflict` instead, so the rest can still be read.
"""

from __future__ import annotations

import ast
import json
import re
import unicodedata
from collections.abc import Callable
from typing import Any

from structio._util.scan import MAX_DEPTH, json_region, scan_brackets, strip_fence
from structio.parsing.lenient import NO_READING, parse_python, python_call_reading

__all__ = [
    "Conflict",
    "DuplicateKeyError",
    "decode_json",
    "decode_marked",
    "decode_object",
    "decode_text",
    "decode_text_whole",
    "marked_pairs",
    "unique_pairs",
]


class DuplicateKeyError(ValueError):
    """An object gives one key two different values: the text has no one reading.

    Attributes:
        key: The key.
        values: The first value and a different one, as they are shown (JSON, or the text
            written).
    """

    def __init__(self, key: Any, first: str, second: str) -> None:
        self.key = key
        self.values = (first, second)
        super().__init__(
            f"the key {key!r} is given two different values, {first} and {second}: no one "
            "of them is the answer"
        )


class Conflict:
    """Where a key was given two different values, in data decoded with ``conflicts=True``.

    Attributes:
        error: What the two values are.
    """

    __slots__ = ("error",)

    def __init__(self, error: DuplicateKeyError) -> None:
        self.error = error

    def __repr__(self) -> str:
        return f"Conflict({self.error})"


Repeat = tuple[tuple[Any, ...], DuplicateKeyError]  # (where the dict is, its repeated key)


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b  # `1` and `true` (equal in Python) differ


def _shown(value: Any) -> str:
    """A value as a `DuplicateKeyError` shows it: its JSON, clipped."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def unique_pairs(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    """An object's members as a dict, a key repeated only with the same value.

    A ``json`` ``object_pairs_hook``.

    Raises:
        DuplicateKeyError: A key is given two different values.
    """
    obj = dict(pairs)
    if len(obj) < len(pairs):  # the usual object repeats no key: one length check
        seen: dict[Any, Any] = {}
        for key, value in pairs:
            if key in seen and not _same(seen[key], value):
                raise DuplicateKeyError(key, _shown(seen[key]), _shown(value))
            seen.setdefault(key, value)
    return obj


def marked_pairs(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    """`unique_pairs`, but a key given two different values holds a `Conflict`."""
    obj: dict[Any, Any] = {}
    for key, value in pairs:
        if key not in obj:
            obj[key] = value
        elif not isinstance(obj[key], Conflict) and not _same(obj[key], value):
            obj[key] = Conflict(DuplicateKeyError(key, _shown(obj[key]), _shown(value)))
    return obj


_Scan = Callable[[str, int], tuple[Any, int]]
# json.loads with strict=False builds a decoder per call; these are built once, and their
# C scanners (`scan_once`, which typeshed does not declare) are called directly. The hook
# costs one length check per object, and finds a repeated key where json keeps the last.
_SCAN: _Scan = json.JSONDecoder(strict=False, object_pairs_hook=unique_pairs).scan_once  # type: ignore[attr-defined]
_MARKING_SCAN: _Scan = json.JSONDecoder(strict=False, object_pairs_hook=marked_pairs).scan_once  # type: ignore[attr-defined]
_LITERAL_ERRORS = (ValueError, SyntaxError, TypeError, MemoryError, RecursionError)
_JSON_SPACE = re.compile(r"[ \t\n\r]*")


def _json(text: str, scan: _Scan) -> Any:
    """`json.JSONDecoder.decode` with ``scan`` (its scanner), less its two Python calls."""
    start = _JSON_SPACE.match(text).end()  # type: ignore[union-attr]  # `*` always matches
    try:
        value, end = scan(text, start)
    except StopIteration as error:
        raise json.JSONDecodeError("Expecting value", text, error.value) from None
    end = _JSON_SPACE.match(text, end).end()  # type: ignore[union-attr]
    if end != len(text):
        raise json.JSONDecodeError("Extra data", text, end)
    return value


def decode_json(text: str, *, python: bool = True, repair: bool = True) -> Any:
    """The ladder: JSON (control characters allowed), a Python literal, then json-repair.

    Args:
        text: The text to decode, whole.
        python: Also read Python literals (``None``, ``True``, single quotes, tuples), which
            keep their exact meaning this way.
        repair: Last, let json-repair read damaged JSON (comments, trailing commas, missing
            quotes).

    Raises:
        DuplicateKeyError: A step read the text, and an object in it gives a key two different
            values; no later step is tried, as each would keep one of them.
        ValueError: No step could read the text, or what it read nests deeper than
            `MAX_DEPTH` (validating and reporting such a value would exhaust the stack).
    """
    try:  # the usual case, and the first step: plain JSON, here without `_ladder`'s call
        value = _json(text, _SCAN)
    except DuplicateKeyError:
        raise
    except _LITERAL_ERRORS:  # RecursionError too: deep nesting is refused, not raised
        return _ladder(text, python, repair, mark=False, json_tried=True)[0]
    return _depth_checked(text, value)


def decode_object(text: str, *, repair: bool = True) -> dict[Any, Any] | None:
    """A ``{...}`` chunk as a dict by the ladder, or ``None`` if it is not one.

    Args:
        text: The chunk.
        repair: Let json-repair read it last (see `decode_json`).

    Raises:
        DuplicateKeyError: An object in the chunk gives a key two different values.
    """
    try:
        value = decode_json(text, repair=repair)
    except DuplicateKeyError:
        raise
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def decode_marked(text: str, *, repair: bool = True) -> tuple[dict[Any, Any] | None, bool]:
    """`decode_object`, each key given two different values holding a `Conflict`.

    Returns:
        The dict (``None`` if the chunk is not one, or a repeated key cannot be marked), and
        whether a key in it is given two different values: a caller can then tell which
        part of the data has no one reading, and read the rest.
    """
    try:
        value, conflicted = _ladder(text, True, repair, mark=True)
    except ValueError:  # DuplicateKeyError too: a repeated key with no place to mark it
        return None, False
    return (value, conflicted) if isinstance(value, dict) else (None, False)


def _ladder(
    text: str, python: bool, repair: bool, *, mark: bool, json_tried: bool = False
) -> tuple[Any, bool]:
    """`decode_json`'s steps; with ``mark``, a repeated key is a `Conflict` (and True).

    ``json_tried``: plain JSON has failed already (not for a repeated key).
    """
    try:  # the usual case, and the first step: plain JSON
        if not json_tried:
            value = _json(text, _SCAN)
            return _depth_checked(text, value), False
    except DuplicateKeyError:
        if not mark:
            raise
        try:  # an inner object closed before the text showed it is no JSON: go on if not
            value = _json(text, _MARKING_SCAN)
            return _depth_checked(text, value), True
        except _LITERAL_ERRORS:
            pass
    except _LITERAL_ERRORS:  # RecursionError too: deep nesting is refused, not raised
        pass
    steps: list[Callable[[str], tuple[Any, list[Repeat]]]] = []
    if python:
        steps.append(_literal)
    if repair:
        steps.append(_json_repaired)
    for step in steps:
        try:
            value, repeats = step(text)
        except _LITERAL_ERRORS:
            continue
        if repeats:  # raises DuplicateKeyError unless each is marked
            value = _resolved(value, repeats, mark)
        return _depth_checked(text, value), bool(repeats)
    raise ValueError("the text is not JSON")


def decode_text(text: str) -> Any:
    """Read JSON-ish text: JSON, a Python literal or constructor call, or repairable JSON.

    Text without brackets that is neither JSON nor a Python literal is returned as it is
    (pydantic reads ``yes`` or `` 42 `` itself). JSON that is cut off (an unclosed string,
    list or object) is refused rather than completed: its last value may be incomplete.

    Raises:
        DuplicateKeyError: An object in the text gives a key two different values.
        ValueError: The JSON in the text is cut off.
    """
    return decode_text_whole(text)[0]


def decode_text_whole(text: str) -> tuple[Any, bool]:
    """`decode_text`, and whether plain JSON read the whole text (no fence, no prose).

    A reader that must know whether data was the whole text, not a bracket inside prose,
    needs no second pass over a long answer when it was.

    Raises:
        DuplicateKeyError: An object in the text gives a key two different values.
        ValueError: The JSON in the text is cut off.
    """
    try:  # `decode_json`'s first step, here to know whether it read the text
        value = _json(text, _SCAN)
    except DuplicateKeyError:
        raise
    except _LITERAL_ERRORS:
        return _after_json(text), False
    try:
        value = _depth_checked(text, value)
    except ValueError:
        return _not_json(text), False
    return value, True


def _after_json(text: str) -> Any:
    """`decode_text` of text that plain JSON did not read."""
    try:
        return _ladder(text, True, False, mark=False, json_tried=True)[0]
    except DuplicateKeyError:
        raise
    except ValueError:
        return _not_json(text)


def _not_json(text: str) -> Any:
    """`decode_text` of text that neither JSON nor a Python literal read whole."""
    call = python_call_reading(text)
    if call is not NO_READING:
        return call
    region = json_region(strip_fence(text))
    if region is None:
        return text
    inner, cut_off = region
    if cut_off:
        raise ValueError(f"the value is cut off (an unclosed {inner[0]!r}); it may be incomplete")
    try:
        return decode_json(inner)
    except DuplicateKeyError:
        raise
    except ValueError:
        return text


def _literal(text: str) -> tuple[Any, list[Repeat]]:
    """A Python literal (`ast.literal_eval`), and each key it repeats with another value."""
    tree = parse_python(text.lstrip(" \t"))  # as literal_eval parses
    value = ast.literal_eval(tree)
    # Only a dict display can repeat a key.
    return value, (_literal_repeats(tree.body) if "{" in text else [])


def _literal_repeats(node: ast.expr) -> list[Repeat]:
    """Each dict display under ``node`` that gives a key two different values."""
    repeats: list[Repeat] = []
    pending: list[tuple[ast.expr, tuple[Any, ...]]] = [(node, ())]
    while pending:
        item, path = pending.pop()
        if isinstance(item, ast.Dict):
            last: dict[Any, ast.expr] = {}
            for key_node, value_node in zip(item.keys, item.values, strict=True):
                if key_node is None:  # `**x`: literal_eval has refused it already
                    continue
                key = ast.literal_eval(key_node)
                if key in last:
                    first, second = ast.literal_eval(last[key]), ast.literal_eval(value_node)
                    if not _same(first, second):
                        repeats.append(
                            (path, DuplicateKeyError(key, _shown(first), _shown(second)))
                        )
                last[key] = value_node  # literal_eval keeps the last value
            pending.extend((value, (*path, key)) for key, value in last.items())
        elif isinstance(item, (ast.List, ast.Tuple)):
            pending.extend((element, (*path, i)) for i, element in enumerate(item.elts))
    return repeats


def _resolved(value: Any, repeats: list[Repeat], mark: bool) -> Any:
    """``value`` with each repeated key marked a `Conflict`; or the first `DuplicateKeyError`.

    Raises:
        DuplicateKeyError: Not ``mark``, or a repeat is not where ``value`` has a dict.
    """
    if not mark:
        raise repeats[0][1]
    for path, error in repeats:
        target = value
        try:
            for step in path:
                target = target[step]
        except (KeyError, IndexError, TypeError):
            raise error from None  # the reading moved the data: no place to mark
        if not isinstance(target, dict) or error.key not in target:
            raise error
        target[error.key] = Conflict(error)
    return value


def _json_repaired(text: str) -> tuple[Any, list[Repeat]]:
    """json-repair's reading of damaged JSON, and each key it writes twice, two ways."""
    import json_repair

    _check_depth(text)  # json-repair recurses per level and rescans the text at each
    _check_numbers_whole(text)
    # json-repair would read `<value>` as "value>" and `undefined` as a string: each is no
    # value, as `null` is (a required field is then missing, the others are still read).
    text = _NO_VALUE.sub(lambda m: m.group(0).replace(m.group(1), "null"), text)
    text = _quoted_bare_items(text)
    try:
        repaired = json_repair.loads(text)
    except AssertionError as error:  # its own checks fail on some text (`{'```json```[`)
        raise ValueError("json-repair could not read the text") from error
    if repaired == "" and text.strip():
        raise ValueError("json-repair found no JSON")
    _check_nothing_invented(repaired, text)
    _check_brackets_kept(repaired, text)
    # json-repair keeps a repeated key's last value: the text says whether there is one.
    return repaired, (_written_repeats(text) if ":" in text else [])


# A token of JSON as models damage it: a string (maybe unclosed), a bracket, a comma or
# colon, or a run of anything else (a number, a bare word; `it's` is one word).
_TOKEN = re.compile(
    r""""(?:[^"\\]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?|[{}\[\],:]"""
    r"""|(?:[^\s{}\[\],:"']|(?<=\w)'(?=\w))+""",
    re.DOTALL,
)


# What a bare word in a list may be other than text: JSON's and Python's literals.
_BARE_LITERALS = frozenset(("true", "false", "null", "True", "False", "None", "NaN", "Infinity"))


def _quoted_bare_items(text: str) -> str:
    """A list whose items are bare words, each item written as a JSON string.

    ``[a, b c]`` becomes ``["a", "b c"]``: an item runs from one comma or bracket to the
    next, on one line. json-repair reads such a list differently from one version to the
    next (0.31 reads ``[a, b]`` as the one item ``"a, b"``, and ``[a, "b, c"]`` as
    ``["a,", "b, c"]``). A bare number or literal stays as written. Text that is not only
    lists of such items (an object, a colon, a comment, an item over two lines, a word next
    to a string) is returned as it is, for json-repair to read.
    """
    if not text.lstrip().startswith("[") or any(c in text for c in "{}:#") or "/" in text:
        return text
    out: list[str] = []
    written = 0  # how much of `text` is in `out`
    item: list[re.Match[str]] = []  # the tokens of the item being read

    def close() -> bool:
        nonlocal written
        if not item:
            return True
        words = [t.group() for t in item]
        if any(w[0] in "\"'" for w in words):
            return len(words) == 1  # one string; a word beside a string is no one item
        start, end = item[0].start(), item[-1].end()
        if "\n" in text[start:end]:
            return False
        if len(words) == 1 and (words[0] in _BARE_LITERALS or _BARE_NUMBER.fullmatch(words[0])):
            return True
        out.append(text[written:start])
        out.append(json.dumps(text[start:end], ensure_ascii=False))
        written = end
        return True

    for token in _TOKEN.finditer(text):
        if token.group() in ("[", "]", ","):
            if not close():
                return text
            item.clear()
        else:
            item.append(token)
    if not close():
        return text
    out.append(text[written:])
    return "".join(out)


# A bare number as JSON writes it, whole (json-repair also takes `5.` and `.5`, one number).
_BARE_NUMBER = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?", re.ASCII)
_AFTER_VALUE = frozenset((",", "}", "]"))


def _check_numbers_whole(text: str) -> None:
    """Raise ValueError if a bare number in damaged JSON runs on into text that changes it.

    json-repair reads the digits and drops the rest: ``5 million``, ``76½``, ``10²``, ``5e``
    and ``12:30`` would each be read as the number they start with, another value. What may
    follow a number: ``,``, ``}``, ``]``, a comment, or the next key (its comma missing).
    """
    tokens = list(_TOKEN.finditer(text))
    for i, token in enumerate(tokens):
        word = token.group()
        if not (
            word[0].isdigit() or word[0] in "-+." or unicodedata.numeric(word[0], None) is not None
        ):
            continue
        if word[0] in "-+." and len(word) > 1 and not (word[1].isdigit() or word[1] == "."):
            continue  # a bare word such as `-foo` or `.net`, read as text
        if not _BARE_NUMBER.fullmatch(word):
            raise ValueError(f"the number {word!r} runs on into text that changes its value")
        if i + 1 == len(tokens):
            continue
        after = tokens[i + 1].group()
        if after in _AFTER_VALUE or after[0] in "/#":
            continue
        if after[0] in "\"'" and i + 2 < len(tokens) and tokens[i + 2].group() == ":":
            continue  # the next key, its comma missing
        raise ValueError(f"the number {word!r} runs on into {after!r}, which may change it")


class _Frame:
    """An object or list open at a point of `_written_repeats`' scan."""

    __slots__ = ("index", "is_object", "key", "start", "values")

    def __init__(self, is_object: bool) -> None:
        self.is_object = is_object
        self.index = 0  # a list's item being written
        self.key: Any = None  # an object's member being written, and where its value starts
        self.start = 0
        self.values: dict[Any, str] = {}  # each key's first value, as written


def _written_repeats(text: str) -> list[Repeat]:
    """Each object in damaged JSON that gives a key two different values, as written.

    json-repair keeps a repeated key's last value; its values are compared here as the text
    writes them, so the same value written twice is no repeat.
    """
    repeats: list[Repeat] = []
    frames: list[_Frame] = []

    def close_member(end: int) -> None:
        frame = frames[-1]
        if frame.key is None:
            return
        written = text[frame.start : end].strip().rstrip(",").strip()
        first = frame.values.setdefault(frame.key, written)
        if first != written:
            path = tuple(f.key if f.is_object else f.index for f in frames[:-1])
            repeats.append((path, DuplicateKeyError(frame.key, first, written)))
        frame.key = None

    tokens = list(_TOKEN.finditer(text))
    for i, token in enumerate(tokens):
        word = token.group()
        if word in ("{", "["):
            frames.append(_Frame(word == "{"))
        elif word in ("}", "]"):
            if frames:
                if frames[-1].is_object:
                    close_member(token.start())
                frames.pop()
        elif word == ",":
            if frames and not frames[-1].is_object:
                frames[-1].index += 1
        elif (
            word != ":"
            and frames
            and frames[-1].is_object
            and i + 1 < len(tokens)
            and tokens[i + 1].group() == ":"
        ):  # a key: the member before it has ended
            close_member(token.start())
            frames[-1].key = _written_key(word)
            frames[-1].start = tokens[i + 1].end()
    while frames:  # cut off: each open member runs to the end
        if frames[-1].is_object:
            close_member(len(text))
        frames.pop()
    return repeats


def _written_key(word: str) -> Any:
    """A key as json-repair reads it: a string's text, or a bare word."""
    if len(word) >= 2 and word[0] == word[-1] and word[0] in "\"'":
        try:
            return json.loads(word) if word[0] == '"' else word[1:-1]
        except ValueError:
            return word[1:-1]
    return word.strip("\"'")


# A bare `<placeholder>` or JavaScript's `undefined` where a value belongs (after a key, in
# a list): the model wrote no value there, whatever json-repair would make of it.
_NO_VALUE = re.compile(r"[:\[,]\s*(<[^<>\"'\n]{1,60}>|\bundefined\b)\s*(?=[,}\]]|\Z)")


# How each empty value is written, when a model writes it: json-repair reports these for a
# key with no value (`{"a": }`) or a bracket it closed itself (`{"a": [}`), so one that the
# text does not hold was made up by the repair.
_WRITTEN_EMPTY = {
    "empty string": re.compile(r"\"\"|''"),
    "null": re.compile(r"\b(?:null|None|NULL|Null)\b"),
    "empty object": re.compile(r"\{\s*\}"),
    "empty list": re.compile(r"\[\s*\]"),
}


def _check_nothing_invented(value: Any, text: str) -> None:
    """Raise ValueError if the repaired value holds more empty values than the text writes."""
    counts = dict.fromkeys(_WRITTEN_EMPTY, 0)
    pending = [value]
    while pending:
        item = pending.pop()
        if item == "" and isinstance(item, str):
            counts["empty string"] += 1
        elif item is None:
            counts["null"] += 1
        elif isinstance(item, dict):
            counts["empty object"] += not item
            pending.extend(item.values())
        elif isinstance(item, list):
            counts["empty list"] += not item
            pending.extend(item)
    for kind, count in counts.items():
        if count and count > len(_WRITTEN_EMPTY[kind].findall(text)):
            raise ValueError(f"repairing the JSON would invent an {kind}: a value is missing")


def _check_brackets_kept(value: Any, text: str) -> None:
    """Raise ValueError if the repair turned brackets into other brackets or into text.

    json-repair reads ``{X}`` as the list ``["X}"]``: an object became a list, and its
    closing brace an item's text. The value must open as the text does, and a bracket or
    brace in a string must stand in a quoted string of the text.
    """
    opening = text.lstrip()[:1]
    if (opening == "{" and not isinstance(value, dict)) or (
        opening == "[" and not isinstance(value, list)
    ):
        raise ValueError(
            f"repairing the JSON would read text opening with {opening!r} as another kind"
        )
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            pending.extend(item.values())
            pending.extend(item.keys())
        elif isinstance(item, list):
            pending.extend(item)
        elif isinstance(item, str) and any(c in item for c in "{}[]"):
            quoted = json.dumps(item, ensure_ascii=False)[1:-1]
            if f'"{quoted}"' not in text and f"'{item}'" not in text and f'"{item}"' not in text:
                raise ValueError(f"repairing the JSON would make the text {item!r} of brackets")


def _check_depth(text: str) -> None:
    """Raise ValueError if the first bracketed value nests deeper than `MAX_DEPTH`."""
    starts = [i for i in (text.find("{"), text.find("[")) if i != -1]
    if starts:
        scan_brackets(text, min(starts))


# Above this length a value is looked at before its text's brackets are counted.
_LONG_TEXT = 4096


def _depth_checked(text: str, value: Any) -> Any:
    """``value``, read from ``text``, or ValueError if it nests deeper than `MAX_DEPTH`.

    Cheap tests settle most values without the walk (`_shallow`): text with this few
    brackets cannot nest too deep, and neither can a value of two levels seen at a glance,
    which a long text (one long string) is told by before its characters are counted.
    """
    if len(text) > _LONG_TEXT and _at_a_glance(value):
        return value
    if text.count("[") + text.count("{") + text.count("(") <= MAX_DEPTH:
        return value
    return _shallow(value)


_CONTAINERS = (list, dict, tuple)


def _at_a_glance(value: Any) -> bool:
    """Whether ``value`` has no containers below its second level, told at C speed.

    The kinds of a container's items are gathered by `map` and `set`, not looked at one
    by one: a long list of strings is told by its one kind.
    """
    if not isinstance(value, _CONTAINERS) or not _holds_containers(value):
        return True
    children = _children(value)
    if len(children) > MAX_DEPTH:
        return False  # many items, some of them containers: counting brackets is quicker
    return not any(isinstance(c, _CONTAINERS) and _holds_containers(c) for c in children)


def _children(value: list[Any] | dict[Any, Any] | tuple[Any, ...]) -> Any:
    return value.values() if isinstance(value, dict) else value


def _holds_containers(value: Any) -> bool:
    if isinstance(value, list):
        # A list of strings, the long list a model writes, is told by joining it (C speed,
        # a few times quicker than gathering the kinds): only strings join.
        try:
            "".join(value)
        except TypeError:
            pass
        else:
            return False
    kinds = set(map(type, _children(value)))
    return any(issubclass(kind, _CONTAINERS) for kind in kinds)


def _shallow(value: Any) -> Any:
    """``value`` itself, or ValueError if its lists and dicts nest deeper than `MAX_DEPTH`."""
    if not isinstance(value, (list, dict, tuple)):
        return value
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if depth > MAX_DEPTH:
            raise ValueError(f"the value is nested deeper than {MAX_DEPTH} levels")
        children = item.values() if isinstance(item, dict) else item
        pending.extend((c, depth + 1) for c in children if isinstance(c, (list, dict, tuple)))
    return value
