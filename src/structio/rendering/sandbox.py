"""The Jinja2 sandbox templates render in: no Python internals, and every render bounded.

An immutable sandboxed environment whose code generator counts loop iterations and sizes
``~``; its operators, method calls, ``str.format`` and filters are checked against the
render's limits before they compute (`rendering.budget`). Also the one translation of a
Jinja or sandbox failure into a `TemplateError` (`_jinja_error`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Mapping, Sized
from types import BuiltinMethodType, MethodType
from typing import TYPE_CHECKING, Any

from structio.exceptions import ConfigurationError, TemplateError
from structio.rendering.budget import (
    _Captured,
    _check_text,
    _finalize,
    _Limits,
    _limits,
    _recorder,
    _refuse,
    _RefusedError,
    _sized,
    _too_big,
    _Values,
)

if TYPE_CHECKING:
    from types import FrameType


def _environment(loader: Any) -> Any:
    from jinja2 import StrictUndefined

    return _sandbox_class()(
        loader=loader,
        undefined=StrictUndefined,
        finalize=_finalize,
        autoescape=False,
        keep_trailing_newline=True,
    )


@functools.lru_cache(maxsize=256)
def _compiled(source: str) -> Any:
    """A template without a loader, compiled once per source (compiling costs milliseconds)."""
    return _environment(None).from_string(source)


@functools.cache
def _sandbox_class() -> type[Any]:
    from jinja2 import nodes
    from jinja2.compiler import CodeGenerator, Frame, optimizeconst
    from jinja2.runtime import Context
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class _Generator(CodeGenerator):
        """Jinja's code generator, with loops counted and ``~`` sized."""

        def visit_For(self, node: nodes.For, frame: Frame) -> None:  # noqa: N802 (Jinja's name)
            # Wrapping the iterable covers every loop, nested, filtered (``if``) or
            # recursive (its first level; deeper levels are ``loop(...)`` calls, counted).
            # Jinja allows no node types of our own; an environment attribute is one that
            # template syntax cannot write, so it marks the wrapping.
            if not _is_counted(node.iter):
                node.iter = nodes.Call(
                    nodes.EnvironmentAttribute(_ITERATE, lineno=node.iter.lineno),
                    [node.iter],
                    [],
                    None,
                    None,
                    lineno=node.iter.lineno,
                )
            super().visit_For(node, frame)

        def visit_Call(  # noqa: N802 (Jinja's name)
            self, node: nodes.Call, frame: Frame, forward_caller: bool = False
        ) -> None:
            if _is_counted(node):  # straight to the environment: not a call to count
                self.write(f"environment.{_ITERATE}(")
                self.visit(node.args[0], frame)
                self.write(")")
            else:
                super().visit_Call(node, frame, forward_caller=forward_caller)

        @optimizeconst
        def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:  # noqa: N802
            # ``~`` cannot be intercepted like the binary operators: its pieces go to
            # ``sio_concat``, which measures them before joining (``xs ~ ''`` with a list
            # of long strings must not build gigabytes), as Jinja's own code would join.
            if frame.eval_ctx.volatile:
                join = "(markup_join if context.eval_ctx.volatile else str_join)"
            elif frame.eval_ctx.autoescape:
                join = "markup_join"
            else:
                join = "str_join"
            self.write(f"environment.sio_concat({join}, (")
            for piece in node.nodes:
                self.visit(piece, frame)
                self.write(", ")
            self.write("))")

    class _Sandbox(ImmutableSandboxedEnvironment):
        code_generator_class = _Generator
        # Intercepted operators are checked before they compute, and Jinja does not fold
        # them at compile time, so ``10 ** (10 ** 8)`` cannot hang the compiler either.
        intercepted_binops = frozenset(("*", "**", "%", "+"))

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.globals["range"] = _range
            self.globals["lipsum"] = _lipsum
            self.filters.update(_checked_filters())

        @staticmethod
        def concat(pieces: Any) -> str:
            # What ``{% set %}`` blocks, macros and call blocks capture.
            text: str = _sized("".join(pieces))
            state = _recorder.get()
            return text if state is None else _Captured(text, state)

        def getattr(self, obj: Any, attribute: str) -> Any:
            # ``message.role`` on a plain dict: the sandbox tries the attribute first and
            # comes to the item after an AttributeError; a chat template does this for
            # every message, so go straight to the same answer.
            if type(obj) is dict and attribute not in _DICT_ATTRIBUTES and attribute in obj:
                return obj[attribute]
            return super().getattr(obj, attribute)

        def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
            limits = _limits()
            if operator == "**":
                _check_power(left, right, limits)
            elif operator == "*":
                _check_product(left, right, limits)
            elif operator == "%" and isinstance(left, str):
                _check_percent(left, right, limits)
                given = right.values() if isinstance(right, Mapping) else right
                _check_text(
                    "a % format",
                    given if isinstance(right, tuple | Mapping) else [right],
                    len(left),
                )
            elif (
                operator == "+"
                and isinstance(left, (str, list, tuple))
                and isinstance(right, (str, list, tuple))
            ):
                _check_size("a +", len(left) + len(right), limits)
            result = self.binop_table[operator](left, right)
            if (
                operator in ("*", "**")
                and type(result) is int
                and result.bit_length() > limits.max_int_bits
            ):  # past the bound checked before computing, which is cheap to compute
                raise _too_many_bits(result.bit_length(), limits)
            return _sized(result)

        def call(self, context: Context, obj: Any, /, *args: Any, **kwargs: Any) -> Any:
            state = _recorder.get()
            if state is not None and obj is not _range:  # range() charges its length
                state.charge(1)
            if isinstance(obj, (BuiltinMethodType, MethodType)) and isinstance(
                obj.__self__, (str, int)
            ):
                # ``'x'.center(10 ** 9)``: refuse before the method builds it.
                args = _check_method(obj.__self__, obj.__name__, args, kwargs, _limits())
                return _sized(super().call(context, obj, *args, **kwargs))
            return super().call(context, obj, *args, **kwargs)

        def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
            wrapped = super().wrap_str_format(value)
            if wrapped is None:
                return None
            text: str = value.__self__
            is_map = value.__name__ == "format_map"

            def checked(*args: Any, **kwargs: Any) -> str:
                given = args[0] if is_map and args else kwargs
                _check_braces(text, args, given, _limits())
                values = given.values() if isinstance(given, Mapping) else ()
                _check_text("str.format", (*(() if is_map else args), *values), len(text))
                return _sized(wrapped(*args, **kwargs))  # type: ignore[no-any-return]

            return checked

        def sio_iterate(self, items: Any) -> Any:
            """A loop's iterable, its items charged to the step budget."""
            state = _recorder.get()
            if state is None:
                return items
            kind = type(items)
            if kind is range and state.ranges.pop(id(items), None) is items:
                return items  # range() charged its length already
            if kind in _SIZED_EXACTLY:
                # A loop cannot stop early (no ``break``) nor change a builtin container
                # (the sandbox is immutable): charge every item now, and iterate at C speed.
                state.charge(len(items))
                return items
            return _Counted(items, state)

        @staticmethod
        def sio_concat(join: Callable[[Any], str], pieces: tuple[Any, ...]) -> str:
            _check_text("a ~", pieces)
            return _sized(join(pieces))  # type: ignore[no-any-return]

    return _Sandbox


_DICT_ATTRIBUTES = frozenset(dir(dict))
_ITERATE = "sio_iterate"
# Builtin containers whose len() is the number of items a loop over them takes.
_SIZED_EXACTLY = frozenset(
    (
        list,
        tuple,
        dict,
        str,
        range,
        set,
        frozenset,
        type({}.keys()),
        type({}.values()),
        type({}.items()),
    )
)


def _is_counted(node: Any) -> bool:
    from jinja2 import nodes

    return (
        isinstance(node, nodes.Call)
        and isinstance(node.node, nodes.EnvironmentAttribute)
        and node.node.name == _ITERATE
    )


class _Counted:
    """A loop's iterable whose items are charged to the render's step budget."""

    __slots__ = ("_items", "_state")

    def __init__(self, items: Any, state: _Values) -> None:
        self._items = items
        self._state = state

    def __iter__(self) -> Iterator[Any]:
        return _count(iter(self._items), self._state)

    def __len__(self) -> int:
        # ``loop.length`` asks; a TypeError here makes Jinja count the items instead.
        return len(self._items)


def _count(items: Iterator[Any], state: _Values) -> Iterator[Any]:
    limit = state.limits.max_iterations
    for item in items:
        state.steps += 1
        if state.steps > limit:
            state.charge(0)  # raises, naming the template line that loops
        yield item


def _range(*args: int) -> range:
    """``range()`` in a template: the sandbox's, charging its length to the step budget."""
    from jinja2.sandbox import safe_range

    numbers = safe_range(*args)
    state = _recorder.get()
    if state is not None and numbers:
        state.charge(len(numbers))
        state.ranges[id(numbers)] = numbers
    return numbers


def _lipsum(*args: Any, **kwargs: Any) -> Any:
    """``lipsum()`` in a template, its paragraphs and words charged to the step budget."""
    from jinja2.utils import generate_lorem_ipsum

    paragraphs = _arg(args, kwargs, 0, "n", 5)
    words = _arg(args, kwargs, 3, "max", 100)
    state = _recorder.get()
    if state is not None and isinstance(paragraphs, int) and isinstance(words, int):
        state.charge(max(paragraphs, 0) * max(words, 1))
    return _sized(generate_lorem_ipsum(*args, **kwargs))


def _arg(
    args: tuple[Any, ...], kwargs: Mapping[str, Any], index: int, key: str, default: Any
) -> Any:
    """An argument given by position or by name."""
    if index < len(args):
        return args[index]
    return kwargs.get(key, default)


def _too_many_bits(bits: int, limits: _Limits) -> _RefusedError:
    return _refuse(
        f"an integer of {bits:,} bits or more, beyond max_int_bits "
        f"({limits.max_int_bits:,}); pass max_int_bits= to Template to allow more"
    )


def _check_power(base: Any, exponent: Any, limits: _Limits) -> None:
    if isinstance(base, int) and isinstance(exponent, int) and exponent > 0 and abs(base) > 1:
        # The result has at least (bits of base - 1) * exponent bits: refuse before Python
        # spends minutes building it. Below that bound the result is cheap to compute, and
        # call_binop checks its exact size.
        least = (abs(base).bit_length() - 1) * exponent
        if least > limits.max_int_bits:
            raise _too_many_bits(least, limits)


def _check_product(left: Any, right: Any, limits: _Limits) -> None:
    if isinstance(left, int) and isinstance(right, int):
        least = left.bit_length() + right.bit_length() - 1
        if least > limits.max_int_bits:
            raise _too_many_bits(least, limits)
        return
    for sequence, count in ((left, right), (right, left)):
        if isinstance(count, int) and isinstance(sequence, (str, list, tuple, bytes)):
            size = len(sequence) * count
            if size > limits.max_output:
                raise _too_big("a repetition with *", size, limits)


def _check_width(width: Any, limits: _Limits) -> None:
    if isinstance(width, str):  # digits read from a format
        width = int(width) if len(width) <= 18 else 10**18
    if isinstance(width, int) and width > limits.max_output:
        raise _refuse(
            f"a width, precision or length of {width:,} is more than max_output "
            f"({limits.max_output:,}); pass max_output= to Template to allow more"
        )


_PERCENT_SPEC = re.compile(r"%(?:%|(?:\([^)]*\))?[#0 +\-]*(\*|\d+)?(?:\.(\*|\d+))?)")
_DIGITS = re.compile(r"\d+")


def _check_percent(text: str, values: Any, limits: _Limits) -> None:
    """Refuse ``'%0999999999d' % 1`` before Python pads a string that long."""
    star = False
    for match in _PERCENT_SPEC.finditer(text):
        for group in match.groups():
            if group == "*":
                star = True
            elif group is not None:
                _check_width(group, limits)
    if star:  # widths taken from the values
        for value in values if isinstance(values, tuple) else (values,):
            _check_width(value, limits)


def _check_braces(text: str, args: tuple[Any, ...], given: Any, limits: _Limits) -> None:
    """Refuse ``'{:>999999999}'.format(1)`` before Python pads a string that long."""
    import string

    try:
        fields = list(string.Formatter().parse(text))
    except ValueError:
        return  # the call itself raises the same error
    nested = False
    for _literal, _field, spec, _conversion in fields:
        if spec:
            nested = nested or "{" in spec
            for digits in _DIGITS.findall(spec):
                _check_width(digits, limits)
    if nested:  # ``{:{width}}``: widths taken from the arguments
        values = list(given.values()) if isinstance(given, Mapping) else []
        for value in (*args, *values):
            _check_width(value, limits)


def _check_method(
    owner: str | int,
    name: str,
    args: tuple[Any, ...],
    kwargs: Mapping[str, Any],
    limits: _Limits,
) -> tuple[Any, ...]:
    """Refuse a str or int method call whose result would pass max_output; the arguments.

    ``join`` gets its items as a list, so that they can be counted before joining.
    """
    if isinstance(owner, int):
        if name == "to_bytes":
            _check_width(_arg(args, kwargs, 0, "length", 1), limits)
        return args
    if name in ("ljust", "rjust", "center", "zfill"):
        _check_width(_arg(args, kwargs, 0, "width", 0), limits)
    elif name == "expandtabs":
        tabsize = _arg(args, kwargs, 0, "tabsize", 8)
        if isinstance(tabsize, int):
            _check_size("expandtabs", len(owner) + owner.count("\t") * tabsize, limits)
    elif name == "replace":
        old, new = _arg(args, kwargs, 0, "old", ""), _arg(args, kwargs, 1, "new", "")
        count = _arg(args, kwargs, 2, "count", -1)
        if isinstance(old, str) and isinstance(new, str) and isinstance(count, int):
            _check_replace(owner, old, new, count, limits)
    elif name == "join" and args:
        items = _listed(args[0])
        separators = len(owner) * max(len(items) - 1, 0)
        _check_size("a join", separators, limits)
        # The items are counted too: a join of one long string 10,000 times is as long.
        _check_text("a join", items, separators)
        return (items, *args[1:])
    elif name == "translate" and args and isinstance(args[0], Mapping):
        longest = max((len(v) for v in args[0].values() if isinstance(v, str)), default=1)
        _check_size("translate", len(owner) * max(longest, 1), limits)
    return args


def _listed(items: Any) -> Any:
    """``items`` if sized, else its items in a list, each charged to the step budget."""
    if isinstance(items, Sized):
        return items
    state = _recorder.get()
    return list(items if state is None else _count(iter(items), state))


def _check_size(what: str, size: int, limits: _Limits) -> None:
    if size > limits.max_output:
        raise _too_big(what, size, limits)


def _check_replace(text: str, old: str, new: str, count: int, limits: _Limits) -> None:
    if len(new) <= len(old):
        return
    times = text.count(old) if old else len(text) + 1
    if count >= 0:
        times = min(times, count)
    _check_size("a replace", len(text) + times * (len(new) - len(old)), limits)


def _filter_center(
    args: tuple[Any, ...], kwargs: Mapping[str, Any], limits: _Limits
) -> tuple[Any, ...]:
    _check_width(_arg(args, kwargs, 1, "width", 80), limits)
    return args


def _filter_indent(
    args: tuple[Any, ...], kwargs: Mapping[str, Any], limits: _Limits
) -> tuple[Any, ...]:
    width = _arg(args, kwargs, 1, "width", 4)
    step = len(width) if isinstance(width, str) else width
    if isinstance(step, int) and args:
        text = str(args[0])
        _check_size("indent", len(text) + step * (text.count("\n") + 1), limits)
    return args


def _filter_format(
    args: tuple[Any, ...], kwargs: Mapping[str, Any], limits: _Limits
) -> tuple[Any, ...]:
    if args and isinstance(args[0], str):
        _check_percent(args[0], dict(kwargs) or tuple(args[1:]), limits)
        _check_text("the format filter", (*args[1:], *kwargs.values()), len(args[0]))
    return args


def _filter_join(
    args: tuple[Any, ...], kwargs: Mapping[str, Any], limits: _Limits
) -> tuple[Any, ...]:
    if not args:
        return args
    items = _listed(args[0])
    separator = str(_arg(args, kwargs, 1, "d", ""))
    separators = len(separator) * max(len(items) - 1, 0)
    _check_size("a join", separators, limits)
    if _arg(args, kwargs, 2, "attribute", None) is None:  # an attribute may be shorter
        _check_text("a join", items, separators)
    return (items, *args[1:])


def _filter_replace(
    args: tuple[Any, ...], kwargs: Mapping[str, Any], limits: _Limits
) -> tuple[Any, ...]:
    if len(args) + len(kwargs) >= 3:
        old, new = _arg(args, kwargs, 1, "old", ""), _arg(args, kwargs, 2, "new", "")
        count = _arg(args, kwargs, 3, "count", None)
        if count is None or isinstance(count, int):
            times = -1 if count is None else count
            _check_replace(str(args[0]), str(old), str(new), times, limits)
    return args


def _filter_batch(
    args: tuple[Any, ...], kwargs: Mapping[str, Any], limits: _Limits
) -> tuple[Any, ...]:
    # The last batch is filled up to ``linecount`` items.
    linecount = _arg(args, kwargs, 1, "linecount", 0)
    state = _recorder.get()
    if (
        state is not None
        and isinstance(linecount, int)
        and _arg(args, kwargs, 2, "fill_with", None) is not None
    ):
        state.charge(max(linecount, 0))
    return args


def _filter_slice(
    args: tuple[Any, ...], kwargs: Mapping[str, Any], limits: _Limits
) -> tuple[Any, ...]:
    # ``slice`` makes ``slices`` lists, one step each.
    slices = _arg(args, kwargs, 1, "slices", 0)
    state = _recorder.get()
    if state is not None and isinstance(slices, int):
        state.charge(max(slices, 0))
    return args


def _filter_wordwrap(
    args: tuple[Any, ...], kwargs: Mapping[str, Any], limits: _Limits
) -> tuple[Any, ...]:
    wrapstring = _arg(args, kwargs, 3, "wrapstring", None)
    width = _arg(args, kwargs, 1, "width", 79)
    if args and isinstance(wrapstring, str) and isinstance(width, int):
        text = str(args[0])
        breaks = len(text) // max(width, 1) + len(text.split()) + text.count("\n") + 1
        _check_size("wordwrap", len(text) + len(wrapstring) * breaks, limits)
    return args


def _filter_tojson(
    args: tuple[Any, ...], kwargs: Mapping[str, Any], limits: _Limits
) -> tuple[Any, ...]:
    _check_width(_arg(args, kwargs, 1, "indent", None), limits)
    return args


_FilterCheck = Callable[[tuple[Any, ...], Mapping[str, Any], _Limits], tuple[Any, ...]]

# Filters that can build much more than they are given, checked before they run; every
# filter's result is then checked against max_output.
_FILTER_CHECKS: dict[str, _FilterCheck] = {
    "center": _filter_center,
    "indent": _filter_indent,
    "format": _filter_format,
    "join": _filter_join,
    "replace": _filter_replace,
    "batch": _filter_batch,
    "slice": _filter_slice,
    "wordwrap": _filter_wordwrap,
    "tojson": _filter_tojson,
}


# Filters that make text of their value (``str``, ``repr``, JSON): the value is measured
# before, since its text may be far longer than anything the render has counted.
_TEXT_FILTERS = frozenset(
    (
        "capitalize",
        "center",
        "e",
        "escape",
        "forceescape",
        "format",
        "indent",
        "lower",
        "pprint",
        "replace",
        "safe",
        "string",
        "striptags",
        "title",
        "tojson",
        "trim",
        "truncate",
        "upper",
        "urlencode",
        "urlize",
        "wordcount",
        "wordwrap",
        "xmlattr",
    )
)


@functools.cache
def _checked_filters() -> dict[str, Callable[..., Any]]:
    """Jinja's filters, each checked against the render's limits."""
    from jinja2.filters import FILTERS

    return {
        name: _checked_filter(
            function, _FILTER_CHECKS.get(name), name if name in _TEXT_FILTERS else None
        )
        for name, function in FILTERS.items()
    }


def _checked_filter(
    function: Callable[..., Any], check: _FilterCheck | None, text_of: str | None = None
) -> Callable[..., Any]:
    # A filter marked pass_context/pass_eval_context/pass_environment takes that first.
    skip = 1 if getattr(function, "jinja_pass_arg", None) is not None else 0

    @functools.wraps(function)  # keeps jinja_pass_arg
    def checked(*args: Any, **kwargs: Any) -> Any:
        if check is not None:
            args = (*args[:skip], *check(args[skip:], kwargs, _limits()))
        if text_of is not None and len(args) > skip:
            _check_text(f"the {text_of} filter", args[skip : skip + 1])
        return _sized(function(*args, **kwargs))

    return checked


def _checked_limits(max_iterations: int, max_output: int, max_int_bits: int) -> _Limits:
    for option, value in (
        ("max_iterations", max_iterations),
        ("max_output", max_output),
        ("max_int_bits", max_int_bits),
    ):
        if type(value) is not int or value < 1:
            raise ConfigurationError(
                f"Template option {option}= must be a positive integer, not {value!r}"
            )
    return _Limits(max_iterations, max_output, max_int_bits)


def _innermost_frame(stream: Any) -> FrameType | None:
    """The frame of the innermost template code a suspended render stream is in."""
    found = None
    while stream is not None and hasattr(stream, "gi_frame"):
        frame = stream.gi_frame
        if frame is not None and "__jinja_template__" in frame.f_globals:
            found = frame
        stream = stream.gi_yieldfrom
    return found


def _jinja_error(name: str, exc: Exception) -> TemplateError:
    import jinja2
    from jinja2.exceptions import SecurityError

    if isinstance(exc, _RefusedError):
        return TemplateError(str(exc))
    if isinstance(exc, jinja2.TemplateSyntaxError):
        where = f"{exc.name or name}, line {exc.lineno}"
        return TemplateError(f"template {where}: syntax error: {exc.message}")
    if isinstance(exc, SecurityError):
        return TemplateError(f"template {name}: blocked by the sandbox: {exc}")
    if isinstance(exc, jinja2.UndefinedError):
        return TemplateError(f"template {name}: {exc.message}; pass it in template_data")
    if isinstance(exc, TypeError) and "no loader" in str(exc):
        return TemplateError(
            f"template {name}: {{% include %}} needs a folder to read from: load the template "
            "with Template.from_file or from_package, or pass search_path="
        )
    if isinstance(exc, jinja2.TemplateNotFound):
        return TemplateError(
            f"template {name}: cannot include {exc.name!r}: not found (raw templates need "
            "search_path= for includes)"
        )
    return TemplateError(f"template {name}: rendering failed: {type(exc).__name__}: {exc}")
