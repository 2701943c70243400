"""One template render's state: its budgets, the values behind placeholders, its refusals.

A render records every value it interpolates behind an opaque placeholder (`_Values`), so
data never becomes YAML structure, and counts its steps and output against the limits of
its `Template` (`MAX_ITERATIONS`, `MAX_OUTPUT`, `MAX_INT_BITS`). A limit reached is a
`_RefusedError`, naming the template line, which `rendering.templates` turns into a
`TemplateError`. The sandbox (`rendering.sandbox`) and the include rule
(`rendering.includes`) charge and refuse through this module.
"""

from __future__ import annotations

import contextvars
import re
import sys
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from types import FrameType

__all__ = ["MAX_INT_BITS", "MAX_ITERATIONS", "MAX_OUTPUT", "SPACE_MARKER"]

MAX_ITERATIONS = 100_000
"""The steps one render may take: loop iterations, items of ``range()``, calls of macros,
functions and methods (and the items ``batch``, ``slice`` and ``lipsum`` make), summed over
the template and its includes. Nested loops of 10^10 iterations stop after this many."""

MAX_OUTPUT = 10_000_000
"""The characters one render may produce, counting the data interpolated into it (about
10 MB; a prompt this long is beyond every model's context window). Also the most
characters (or items) of any one string or list the template builds, checked before
``*``, padding, ``replace``, ``join`` and format widths build it."""

MAX_INT_BITS = 4096
"""The largest integer, in bits, that ``**`` and ``*`` may produce in a template; checked
before computing, so ``{{ 10 ** (10 ** 8) }}`` is refused at once."""

SPACE_MARKER = "<|space|>"

_recorder: contextvars.ContextVar[_Values | None] = contextvars.ContextVar(
    "structio_template_values", default=None
)


class _Limits(NamedTuple):
    """The resource limits of one template's renders."""

    max_iterations: int = MAX_ITERATIONS
    max_output: int = MAX_OUTPUT
    max_int_bits: int = MAX_INT_BITS


_DEFAULT_LIMITS = _Limits()


class _Values:
    """One render: the values it interpolated, each behind a placeholder, and its budgets."""

    def __init__(self, name: str = "<string>", limits: _Limits = _DEFAULT_LIMITS) -> None:
        import secrets

        self.nonce = secrets.token_hex(6)
        self.values: list[str] = []
        self.marker = f"__sio{self.nonce}_"
        self.pattern = re.compile(rf"__sio{self.nonce}_(\d+)__")
        self.name = name
        self.limits = limits
        self.max_output = limits.max_output
        self.steps = 0  # loop iterations, range() items, calls
        self.size = 0  # characters of rendered text, data included
        # range() objects already charged for their length, by id (kept alive so that an
        # id is never reused): a loop over one of them is not charged a second time.
        self.ranges: dict[int, range] = {}

    def placeholder(self, value: Any) -> str:
        if type(value) is _Captured and value._state is self:
            # Text the template wrote (a macro's output, a set block): structure, as if
            # written in place; its own values are behind placeholders already.
            return value._template
        if value is not None and not isinstance(value, str):
            # str() of a list holding one long string 10,000 times builds gigabytes before
            # its length could be counted: measure it first.
            room = self.max_output - self.size
            if _text_size(value, room) > room:
                raise _too_long(self, sys._getframe())
        text = "" if value is None else str(value)
        if not text:
            # Nothing to hide, and a placeholder would be text where the template meant
            # none: a line of its own, or a block's first line.
            return ""
        if text.startswith(SPACE_MARKER) or text.endswith(SPACE_MARKER):
            text = _edge_spaces(text)
        marker = self.marker
        if marker in text:
            # This render's placeholders in a value that is not a captured text (none is
            # expected, this is a guard): expand them now, or they would reach the prompt
            # as placeholders, since filling is one pass.
            text = self.fill(text)
        values = self.values
        placeholder = f"{marker}{len(values)}__"
        values.append(text)
        # The placeholder itself is counted as output when the template yields it.
        self.size += len(text) - len(placeholder)
        if self.size > self.max_output:
            raise _too_long(self, sys._getframe())
        return placeholder

    def fill(self, text: str) -> str:
        if self.marker not in text:
            return text
        whole = self.pattern.fullmatch(text)
        if whole is not None:
            return self.values[int(whole.group(1))]
        # A captured text written out again (``{{ a }}``) repeats its placeholders, not
        # its values: a thousand copies of one long value would be filled in past
        # max_output, so the filled length is counted before it is built.
        values = self.values
        size = len(text)
        for match in self.pattern.finditer(text):
            size += len(values[int(match.group(1))]) - (match.end() - match.start())
            if size > self.max_output:
                raise _too_long(self, sys._getframe())
        # One pass: a value that looks like a placeholder is never expanded again.
        return self.pattern.sub(lambda m: values[int(m.group(1))], text)

    def charge(self, steps: int) -> None:
        """Count ``steps`` against the budget; refuse the render once it is spent."""
        self.steps += steps
        if self.steps > self.limits.max_iterations:
            raise _RefusedError(
                f"{_where(self, sys._getframe())}: the render took more than max_iterations "
                f"({self.limits.max_iterations:,}) steps (loop iterations, range() items, "
                "calls); pass max_iterations= to Template to allow more"
            )


class _Captured(str):
    """Text a template captured (macro, ``caller()``, set or filter block), values filled in.

    As a string it is the text with the values, so filters and tests see what Jinja would
    give them; output as it is (``{{ macro() }}``), it is the template text with the values'
    placeholders, which `_Values.placeholder` passes through as structure.
    """

    # Underscored: the sandbox keeps templates from reading them.
    _state: _Values
    _template: str

    def __new__(cls, template: str, state: _Values) -> _Captured:
        captured = super().__new__(cls, state.fill(template))
        captured._state = state
        captured._template = template
        return captured


def _edge_spaces(text: str) -> str:
    """``text`` with each `SPACE_MARKER` at its start or end made a space."""
    size = len(SPACE_MARKER)
    lead = 0
    while text.startswith(SPACE_MARKER, lead * size):
        lead += 1
    body = text[lead * size :]
    trail = 0
    while body.endswith(SPACE_MARKER, 0, len(body) - trail * size):
        trail += 1
    if trail:
        body = body[: len(body) - trail * size]
    return " " * lead + body + " " * trail


def _finalize(value: Any) -> Any:
    values = _recorder.get()
    return values.placeholder(value) if values is not None else value


class _RefusedError(Exception):
    """A sandbox limit or the include rule stopped a render; it becomes a `TemplateError`.

    Not a `ValueError`: Jinja filters such as ``int`` swallow those, and a refusal must
    never be swallowed.
    """


def _where(state: _Values | None, frame: FrameType | None) -> str:
    """``template NAME, line N``: the innermost template code on the stack from ``frame``."""
    name = state.name if state is not None else "<string>"
    while frame is not None:
        # Jinja's compiled templates keep their Template in their module globals; its debug
        # info maps the Python line to the template line.
        template = frame.f_globals.get("__jinja_template__")
        if template is not None:
            line = template.get_corresponding_lineno(frame.f_lineno)
            inside = f" (in {template.name!r})" if template.name is not None else ""
            return f"template {name}{inside}, line {line}"
        frame = frame.f_back
    return f"template {name}"


def _too_long(state: _Values, frame: FrameType | None) -> _RefusedError:
    return _RefusedError(
        f"{_where(state, frame)}: the rendered text is longer than max_output "
        f"({state.limits.max_output:,} characters); pass max_output= to Template to allow more"
    )


def _limits() -> _Limits:
    state = _recorder.get()
    return state.limits if state is not None else _DEFAULT_LIMITS


def _refuse(problem: str) -> _RefusedError:
    """A refusal raised by a check that the template's code called directly."""
    return _RefusedError(f"{_where(_recorder.get(), sys._getframe())}: {problem}")


def _too_big(what: str, size: int, limits: _Limits) -> _RefusedError:
    return _refuse(
        f"{what} would make {size:,} characters or items, more than max_output "
        f"({limits.max_output:,}); pass max_output= to Template to allow more"
    )


def _sized(value: Any) -> Any:
    """``value``, refused if it is a string or a collection longer than ``max_output``."""
    if isinstance(value, (str, list, tuple, dict, bytes)):
        limits = _limits()
        if len(value) > limits.max_output:
            unit = "characters" if isinstance(value, (str, bytes)) else "items"
            raise _refuse(
                f"a {type(value).__name__} of {len(value):,} {unit} was built, more than "
                f"max_output ({limits.max_output:,}); pass max_output= to Template to allow more"
            )
    return value


# The reprs whose length `_text_size` can tell from the items, without building them.
_CONTAINER_REPRS: frozenset[object] = frozenset(
    (list.__repr__, tuple.__repr__, dict.__repr__, set.__repr__, frozenset.__repr__)
)
_DEEPEST = 100  # nesting below this is counted as one character (a lower bound still)


def _text_size(value: Any, limit: int) -> int:
    """At least how many characters ``str(value)`` has, counted no further than past ``limit``.

    Strings count their length (and their quotes inside a container), builtin containers
    their items and separators, integers their digits; anything else one character, as
    its own ``__str__`` is not called here. Each item counted adds a character at least,
    so the count stops after about ``limit`` items, however large or cyclic the value.
    """
    total = 0
    path: set[int] = set()  # the containers being counted, for cycles (``[...]``)

    def add(item: Any, inside: bool, depth: int) -> None:
        nonlocal total
        if total > limit:
            return
        if isinstance(item, str):
            total += len(item) + (2 if inside else 0)
        elif isinstance(item, (bytes, bytearray)):
            total += len(item) + 3
        elif type(item) is int:
            total += (item.bit_length() * 3) // 10 + 1  # digits: log10(2) is above 0.3
        elif type(item).__repr__ in _CONTAINER_REPRS and depth < _DEEPEST:
            if id(item) in path:
                total += 5
                return
            path.add(id(item))
            total += 2 + 2 * max(len(item) - 1, 0)
            pairs = item.items() if isinstance(item, dict) else ((x, None) for x in item)
            for key, each in pairs:
                add(key, True, depth + 1)
                if isinstance(item, dict):
                    total += 2
                    add(each, True, depth + 1)
                if total > limit:
                    break
            path.discard(id(item))
        else:
            total += 1

    add(value, False, 0)
    return total


def _check_text(what: str, values: Any, extra: int = 0) -> None:
    """Refuse text made of ``values`` and ``extra`` characters more, before it is built.

    Raises:
        _RefusedError: The text would pass max_output.
    """
    limits = _limits()
    size = extra
    for value in values:
        if size > limits.max_output:
            break
        size += _text_size(value, limits.max_output - size)
    if size > limits.max_output:
        # The count stops past the limit: the text would be at least this long.
        raise _refuse(
            f"{what} would make more than max_output ({limits.max_output:,}) characters; "
            "pass max_output= to Template to allow more"
        )
