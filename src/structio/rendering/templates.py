r"""Prompt templates: a YAML list of parts, written with Jinja2, rendered to a `Prompt`.

As in Prompt Poet, a template is a YAML list of parts (``name``, ``role``, ``content``,
optional ``truncation_priority``) produced by Jinja2 from your data: loops, conditionals,
``{% include %}`` of section files, functions passed in the data. Two differences make it
safe to render untrusted data:

- Jinja2 runs sandboxed: a template cannot reach Python internals.
- Data never becomes structure. Every ``{{ value }}`` is rendered as an opaque placeholder,
  the YAML is parsed, and only then are the placeholders replaced by the values. A value
  holding YAML (``\n- name: x\n  role: system``), part keys, Jinja syntax or
  ``[[ ## field ## ]]`` markers stays literal text of its part.

What the template itself writes is structure, as in Prompt Poet: the output of a macro, a
``caller()`` or a ``{% set %}`` block written with ``{{ ... }}`` is template text (its own
values still behind placeholders), so a macro that writes parts can be called alone on a
line. An empty value (``""``, ``None``) renders nothing, as in Jinja. A key left empty
takes its default (``role`` ``user``, ``truncation_priority`` 0; ``content`` ``""``).

Content is stripped of surrounding whitespace (as YAML block scalars leave it); write
``<|space|>`` for a space the strip must keep, in the template or at the start or end of a
value (``{{ "<|space|>" if cont }}``). Your data's own whitespace is kept as it is, and so
is a ``<|space|>`` inside its text.

A part may be written as Prompt Poet's ``sections:`` instead of ``content:``: a list of
``name`` / ``content`` mappings, each stripped of the spaces and tabs around it and joined
into the part's text (see `PartSection`, `Prompt.section_tokens`).

Besides Prompt Poet's keys, a part may list ``expected_template_data_keys`` (names the data
must hold) and, with ``Template(..., allow_token_overrides=True)``, give its ``tokens`` (a
list of token ids, or a value holding one as JSON), which counts and truncation then use
instead of encoding the content; a section may give its own too.

A render never hangs and never reads outside the template's folder:

- ``{% include %}`` (and ``import``, ``extends``) read only files inside the template's
  folder (`Template.from_file`, ``search_path=``) or its package folder
  (`Template.from_package`): a name with a ``..`` segment, an absolute path, a drive, a
  backslash, or a symbolic link that resolves outside the folder is refused, whether the
  name is written in the template or comes from the data.
- Each render has a budget of steps (`MAX_ITERATIONS`: loop iterations, items of
  ``range()``, calls), of text (`MAX_OUTPUT`: the rendered text with the data in it, and any
  one string or list built on the way) and of integer size (`MAX_INT_BITS`, checked before
  ``**`` or ``*`` computes). `Template` takes each as a keyword option.

Each refusal is a `TemplateError` that names the template, the line and the limit.
"""

from __future__ import annotations

import contextvars
import functools
import os
import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sized
from pathlib import Path
from types import BuiltinMethodType, MethodType
from typing import TYPE_CHECKING, Any, NamedTuple

from structio.exceptions import ConfigurationError, TemplateError
from structio.rendering.prompt import Part, PartSection, Prompt
from structio.rendering.tokens import DEFAULT_ENCODING, EncodeFunc

if TYPE_CHECKING:
    from importlib.abc import Traversable
    from types import FrameType

__all__ = ["MAX_INT_BITS", "MAX_ITERATIONS", "MAX_OUTPUT", "SPACE_MARKER", "Template"]

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
ROLES = ("system", "user", "assistant", "developer", "tool")
_KEYS = ("name", "role", "content", "truncation_priority")
# The keys of the usual part, which `Template._part` reads without the full checks.
_KEY_SET = frozenset(_KEYS)
_ALL_KEYS = (*_KEYS, "sections", "expected_template_data_keys", "tokens")
_ALL_KEY_SET = frozenset(_ALL_KEYS)
# A section's keys (Prompt Poet's); its truncation_priority is accepted and, as there,
# unused: truncation drops whole parts.
_SECTION_KEYS = ("name", "content", "tokens", "truncation_priority")

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
        # One pass: a value that looks like a placeholder is never expanded again.
        return self.pattern.sub(lambda m: self.values[int(m.group(1))], text)

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


class Template:
    """A prompt template: YAML parts written with Jinja2.

    Example:
        >>> template = Template('''
        ... - name: system
        ...   role: system
        ...   content: You are {{ persona }}.
        ... {% for turn in history %}
        ... - name: turn_{{ loop.index }}
        ...   role: user
        ...   truncation_priority: 1
        ...   content: |
        ...     {{ turn }}
        ... {% endfor %}
        ... ''')
        >>> template.render({"persona": "a poet", "history": ["hi"]}).messages
        [{'role': 'system', 'content': 'You are a poet.'}, {'role': 'user', 'content': 'hi'}]

    Args:
        raw_template: The template text.
        name: A name for error messages (a file name when loaded from a file).
        search_path: A folder ``{% include %}`` reads section files from; an include never
            reads outside it.
        max_iterations: The steps one render may take (loop iterations, ``range()`` items,
            calls); `MAX_ITERATIONS` by default.
        max_output: The characters one render may produce, data included, and the longest
            string or list it may build; `MAX_OUTPUT` by default.
        max_int_bits: The largest integer, in bits, ``**`` and ``*`` may produce;
            `MAX_INT_BITS` by default.
        allow_token_overrides: Let parts give their own ``tokens`` (Prompt Poet's option of
            the same name); off by default, since token counts then trust the template.

    Raises:
        TemplateError: The template is not text or has a syntax error.
        ConfigurationError: A limit is not a positive integer.
    """

    def __init__(
        self,
        raw_template: str,
        *,
        name: str = "<string>",
        search_path: str | Path | None = None,
        max_iterations: int = MAX_ITERATIONS,
        max_output: int = MAX_OUTPUT,
        max_int_bits: int = MAX_INT_BITS,
        allow_token_overrides: bool = False,
        _loader: Any = None,
    ) -> None:
        if not isinstance(raw_template, str):
            raise TemplateError(f"a template is text, not {type(raw_template).__name__}")
        self.name = name
        self.source = raw_template
        self._limits = _checked_limits(max_iterations, max_output, max_int_bits)
        self.allow_token_overrides = allow_token_overrides
        loader = _loader
        if loader is None and search_path is not None:
            # Absolute now: a later change of the working folder must not move the folder.
            folder = Path(os.path.abspath(search_path))
            loader = _loader_class()(folder, _real(folder), name)
        try:
            if loader is None:  # no includes: share the compiled code of equal sources
                self._template = _compiled(raw_template)
            else:
                self._template = _environment(loader).from_string(raw_template)
        except Exception as exc:
            raise _jinja_error(name, exc) from None

    def __repr__(self) -> str:
        return f"Template({self.name!r})"

    @classmethod
    def from_file(
        cls,
        path: str | Path,
        *,
        max_iterations: int = MAX_ITERATIONS,
        max_output: int = MAX_OUTPUT,
        max_int_bits: int = MAX_INT_BITS,
        allow_token_overrides: bool = False,
    ) -> Template:
        """Load a template file; ``{% include %}`` paths are relative to its folder.

        An include never reads outside that folder (see the module's notes). The limits and
        ``allow_token_overrides`` are those of `Template`.

        Raises:
            TemplateError: The file cannot be read.
        """
        file = Path(path)
        try:
            text = file.read_text(encoding="utf-8")
        except OSError as exc:
            raise TemplateError(
                f"cannot read template {str(file)!r}: {exc.strerror or exc}"
            ) from exc
        return cls(
            text,
            name=str(file),
            search_path=file.parent,
            max_iterations=max_iterations,
            max_output=max_output,
            max_int_bits=max_int_bits,
            allow_token_overrides=allow_token_overrides,
        )

    @classmethod
    def from_package(
        cls,
        package: str,
        name: str,
        *,
        max_iterations: int = MAX_ITERATIONS,
        max_output: int = MAX_OUTPUT,
        max_int_bits: int = MAX_INT_BITS,
        allow_token_overrides: bool = False,
    ) -> Template:
        """Load a template shipped inside a package (``name`` relative to the package).

        ``{% include %}`` paths are relative to the template's folder in the package, and
        never read outside the package (see the module's notes). The limits and
        ``allow_token_overrides`` are those of `Template`.

        Raises:
            TemplateError: The package or the file cannot be found, or ``name`` leaves the
                package.
        """
        import importlib.resources

        try:
            root = importlib.resources.files(package)
        except ModuleNotFoundError as exc:
            raise TemplateError(f"cannot load template {name!r}: no package {package!r}") from exc
        problem = _include_problem(name)
        if problem is not None:
            problem = problem.replace("the template folder", "the package")
            raise TemplateError(
                f"cannot load template {name!r} from package {package!r}: the name "
                + problem.replace("includes are", "template names are")
            )
        pieces = _pieces(name)
        folder = root.joinpath(*pieces[:-1])
        resource = root.joinpath(*pieces)
        # On disk, a symbolic link may not lead out of the package (a zipped package has
        # none); a namespace package, spread over folders, is held to the template's own.
        anchor = root if isinstance(root, Path) else folder
        boundary = _real(anchor) if isinstance(anchor, Path) else None
        if (
            boundary is not None
            and isinstance(resource, Path)
            and not _inside(_real(resource), boundary)
        ):
            raise TemplateError(
                f"cannot load template {name!r} from package {package!r}: it resolves "
                "outside the package (through a symbolic link)"
            )
        if not resource.is_file():
            raise TemplateError(f"template {name!r} not found in package {package!r}")
        full_name = f"{package}:{name}"
        return cls(
            resource.read_text(encoding="utf-8"),
            name=full_name,
            max_iterations=max_iterations,
            max_output=max_output,
            max_int_bits=max_int_bits,
            allow_token_overrides=allow_token_overrides,
            _loader=_loader_class()(folder, boundary, full_name),
        )

    def render(
        self,
        template_data: Mapping[str, Any] | None = None,
        *,
        encoding: str = DEFAULT_ENCODING,
        encode_func: EncodeFunc | None = None,
    ) -> Prompt:
        """Render the template with ``template_data`` into a `Prompt`.

        Raises:
            TemplateError: A Jinja error (syntax, undefined variable, a blocked unsafe
                operation, a missing or refused include, a limit reached), YAML that does
                not parse, or a part that is not a mapping, lacks ``name`` or ``content``,
                has an unknown key or role. The message names the template, the part and
                the line of the rendered YAML (of the template, for a Jinja error).
        """
        values = _Values(self.name, self._limits)
        token = _recorder.set(values)
        chunks: list[str] = []
        stream: Any = None
        try:
            # The template's own generator, not Template.generate(), which adds a layer of
            # generators only to rewrite tracebacks that become a TemplateError anyway.
            template = self._template
            stream = template.root_render_func(template.new_context(dict(template_data or {})))
            limit = self._limits.max_output
            append = chunks.append
            for chunk in stream:
                # Count as the text is made (a piece is at most a stretch of the template's
                # own text): memory must not fill before the limit is seen, and the stream
                # stops where the template is, for the error to name the line. The data
                # behind placeholders is counted by `_finalize`.
                values.size += len(chunk)
                if values.size > limit:
                    raise _too_long(values, _innermost_frame(stream))
                append(chunk)
        except Exception as exc:
            raise _jinja_error(self.name, exc) from None
        finally:
            if stream is not None:
                stream.close()
            _recorder.reset(token)
        text = "".join(chunks)
        data = template_data or {}
        parts = [
            self._part(item, line, index, values, data)
            for index, (item, line) in enumerate(self._load_yaml(text, values))
        ]
        return Prompt(parts, encoding=encoding, encode_func=encode_func)

    def _load_yaml(self, text: str, values: _Values) -> list[tuple[Any, int]]:
        # Imported here, not at `import structio`: its patterns cost ~3 ms to compile, and
        # only templates need them.
        from structio.rendering import _yaml_parts

        fast = _yaml_parts.read_parts(text)
        if fast is not None:
            return list(fast)
        import yaml

        loader_class = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        loader = loader_class(text)
        try:
            node = loader.get_single_node()
            document = loader.construct_document(node) if node is not None else None
        except yaml.MarkedYAMLError as exc:
            rendered = text.splitlines()
            problem, context = exc.problem_mark, exc.context_mark
            line = problem.line + 1 if problem is not None else 0
            if context is not None and not (
                0 < line <= len(rendered) and rendered[line - 1].strip()
            ):
                # Found only past the text or on a blank line (a stray scalar's missing
                # ':'): show the line that started it.
                line = context.line + 1
            shown = values.fill(rendered[line - 1]) if 0 < line <= len(rendered) else ""
            raise TemplateError(
                f"template {self.name}: the rendered template is not valid YAML at line {line} "
                f"({exc.problem}): {shown.strip()!r}"
            ) from None
        except yaml.YAMLError as exc:
            raise TemplateError(
                f"template {self.name}: the rendered template is not valid YAML: {exc}"
            ) from None
        finally:
            loader.dispose()
        if document is None or node is None:
            return []
        if not isinstance(document, list):
            raise TemplateError(
                f"template {self.name}: a template renders a YAML list of parts "
                f"(- name: ..., role: ..., content: ...), not a {type(document).__name__}"
            )
        lines = [item.start_mark.line + 1 for item in node.value]
        return list(zip(document, lines, strict=True))

    def _part(
        self, item: Any, line: int, index: int, values: _Values, data: Mapping[str, Any]
    ) -> Part:
        if (
            type(item) is dict
            and _KEY_SET.issuperset(item)
            and item.get("name") is not None
            and type(content := item.get("content")) is str
        ):  # the usual part: skip straight to its fields
            role = values.fill(str(_value(item, "role", "user"))).strip()
            priority_text = values.fill(str(_value(item, "truncation_priority", 0))).strip()
            if role in ROLES and priority_text.isdecimal():
                text = content.strip().replace(SPACE_MARKER, " ")
                return Part(
                    values.fill(str(item["name"])), role, values.fill(text), int(priority_text)
                )
        return self._checked_part(item, line, index, values, data)

    def _checked_part(
        self, item: Any, line: int, index: int, values: _Values, data: Mapping[str, Any]
    ) -> Part:
        def where() -> str:
            if isinstance(item, dict) and item.get("name") is not None:
                return (
                    f"template {self.name}: part {values.fill(str(item['name']))!r} (line {line})"
                )
            return f"template {self.name}: part {index + 1} (line {line})"

        if not isinstance(item, dict):
            raise TemplateError(f"{where()} must be a mapping with name, role and content")
        if not _ALL_KEY_SET.issuperset(item):
            unknown = sorted(str(k) for k in item if k not in _ALL_KEY_SET)
            raise TemplateError(
                f"{where()} has unknown key(s) {unknown}; a part takes {', '.join(_ALL_KEYS)}"
            )
        if item.get("name") is None:
            raise TemplateError(f"{where()} has no name")
        sections: tuple[PartSection, ...] = ()
        if "sections" in item:
            if "content" in item:
                raise TemplateError(
                    f"{where()} has both content and sections; write its text in one of them"
                )
            sections, raw = self._sections(where(), item["sections"], values)
        elif "content" not in item:
            raise TemplateError(f"{where()} has no content")
        else:
            # An empty value (``content:``, or an expression that rendered nothing) is no
            # text, as in Prompt Poet; its part is kept.
            content = item["content"]
            if isinstance(content, (list, dict)):
                raise TemplateError(
                    f"{where()}: content must be text, not a {type(content).__name__}"
                )
            raw = _content_text(content)
        role = values.fill(str(_value(item, "role", "user"))).strip()
        if role not in ROLES:
            raise TemplateError(
                f"{where()} has unknown role {role!r}; use one of {', '.join(ROLES)}"
            )
        priority_text = values.fill(str(_value(item, "truncation_priority", 0))).strip()
        try:
            priority = int(priority_text)
        except ValueError:
            raise TemplateError(
                f"{where()}: truncation_priority must be an integer, not {priority_text!r}"
            ) from None
        expected = item.get("expected_template_data_keys")
        if expected is not None:
            _check_expected_keys(where(), expected, values, data)
        tokens = None
        if "tokens" in item:
            if not self.allow_token_overrides:
                raise TemplateError(
                    f"{where()} sets its tokens, which a template may do only with "
                    "Template(..., allow_token_overrides=True), since token counts and "
                    "truncation then trust the template"
                )
            tokens = _token_ids(where(), item["tokens"], values)
        text = values.fill(raw.strip().replace(SPACE_MARKER, " "))
        name = values.fill(str(item["name"]))
        return Part(name, role, text, priority, tokens=tokens, sections=sections)

    def _sections(
        self, where: str, given: Any, values: _Values
    ) -> tuple[tuple[PartSection, ...], str]:
        """A part's ``sections``, and the part's text before its values are filled.

        As in Prompt Poet, each section's text loses the spaces and tabs around it (its
        newlines stay, so sections written as ``|`` blocks keep their lines apart), and the
        part's text is the sections joined, stripped whole.
        """
        if not isinstance(given, list) or not given:
            raise TemplateError(
                f"{where}: sections must be a non-empty list of sections "
                "(- name: ..., content: ...)"
            )
        sections: list[PartSection] = []
        raws: list[str] = []
        for number, section in enumerate(given, 1):
            label = f"{where}, section {number}"
            if not isinstance(section, dict):
                raise TemplateError(f"{label} must be a mapping with name and content")
            if section.get("name") is not None:
                label = f"{where}, section {values.fill(str(section['name']))!r}"
            unknown = sorted(str(k) for k in section if k not in _SECTION_KEYS)
            if unknown:
                raise TemplateError(
                    f"{label} has unknown key(s) {unknown}; a section takes "
                    f"{', '.join(_SECTION_KEYS)}"
                )
            if section.get("name") is None:
                raise TemplateError(f"{label} has no name")
            if "content" not in section:
                raise TemplateError(f"{label} has no content")
            content = section["content"]
            if isinstance(content, (list, dict)):
                raise TemplateError(
                    f"{label}: content must be text, not a {type(content).__name__}"
                )
            tokens = None
            if "tokens" in section:
                if not self.allow_token_overrides:
                    raise TemplateError(
                        f"{label} sets its tokens, which a template may do only with "
                        "Template(..., allow_token_overrides=True), since token counts "
                        "then trust the template"
                    )
                tokens = _token_ids(label, section["tokens"], values)
            raw = _content_text(content).strip(" \t").replace(SPACE_MARKER, " ")
            raws.append(raw)
            sections.append(
                PartSection(values.fill(str(section["name"])), values.fill(raw), tokens)
            )
        return tuple(sections), "".join(raws)


def _check_expected_keys(
    where: str, expected: Any, values: _Values, data: Mapping[str, Any]
) -> None:
    """Refuse a render whose data lacks a key the part lists in expected_template_data_keys."""
    if isinstance(expected, str) or not isinstance(expected, list):
        raise TemplateError(
            f"{where}: expected_template_data_keys must be a list of names, "
            f"not {type(expected).__name__}"
        )
    names = [values.fill(str(key)) for key in expected]
    missing = [name for name in names if name not in data]
    if missing:
        raise TemplateError(
            f"{where} expects template data key(s) {missing}, which template_data lacks; "
            "pass them in template_data"
        )


def _token_ids(where: str, given: Any, values: _Values) -> tuple[int, ...]:
    """A part's ``tokens``: a YAML list of ints, or a value holding a JSON list of ints."""
    tokens = given
    if isinstance(given, str):
        import json

        text = values.fill(given)
        try:
            tokens = json.loads(text)
        except ValueError:
            raise TemplateError(
                f"{where}: tokens must be a list of token ids, not {_shorten(text)!r}"
            ) from None
    if not isinstance(tokens, list) or not all(
        type(token) is int and token >= 0 for token in tokens
    ):
        raise TemplateError(
            f"{where}: tokens must be a list of token ids (integers from 0), "
            f"not {_shorten(repr(tokens))}"
        )
    return tuple(tokens)


def _shorten(text: str, size: int = 60) -> str:
    return text if len(text) <= size else text[: size - 3] + "..."


def _value(item: dict[Any, Any], key: str, default: Any) -> Any:
    """A part's ``key``, or ``default`` where it is missing or left empty."""
    value = item.get(key)
    return default if value is None else value


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, bool):
        return "true" if content else "false"
    return str(content)


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
    from jinja2.compiler import CodeGenerator, Frame
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

        def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:  # noqa: N802
            # ``~`` cannot be intercepted like the binary operators: doubling a string with
            # it in a loop must still stop at max_output.
            self.write("environment.sio_sized(")
            super().visit_Concat(node, frame)
            self.write(")")

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
        def sio_sized(value: Any) -> Any:
            return _sized(value)

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
        _check_size("a join", len(owner) * max(len(items) - 1, 0), limits)
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
    return args


def _filter_join(
    args: tuple[Any, ...], kwargs: Mapping[str, Any], limits: _Limits
) -> tuple[Any, ...]:
    if not args:
        return args
    items = _listed(args[0])
    separator = str(_arg(args, kwargs, 1, "d", ""))
    _check_size("a join", len(separator) * max(len(items) - 1, 0), limits)
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


@functools.cache
def _checked_filters() -> dict[str, Callable[..., Any]]:
    """Jinja's filters, each checked against the render's limits."""
    from jinja2.filters import FILTERS

    return {
        name: _checked_filter(function, _FILTER_CHECKS.get(name))
        for name, function in FILTERS.items()
    }


def _checked_filter(function: Callable[..., Any], check: _FilterCheck | None) -> Callable[..., Any]:
    # A filter marked pass_context/pass_eval_context/pass_environment takes that first.
    skip = 1 if getattr(function, "jinja_pass_arg", None) is not None else 0

    @functools.wraps(function)  # keeps jinja_pass_arg
    def checked(*args: Any, **kwargs: Any) -> Any:
        if check is not None:
            args = (*args[:skip], *check(args[skip:], kwargs, _limits()))
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


# -- includes -----------------------------------------------------------------------------

_DRIVE = re.compile(r"[A-Za-z]:")


def _pieces(name: str) -> list[str]:
    return [piece for piece in name.split("/") if piece not in ("", ".")]


def _include_problem(name: object) -> str | None:
    """Why an include name would leave the template folder, or None where it stays inside."""
    if not isinstance(name, str):
        return f"is a {type(name).__name__}, not a file name"
    if "\\" in name:
        return "contains a backslash (separate folders with '/')"
    if "\x00" in name:
        return "contains a NUL character"
    if name.startswith("/"):
        return "is an absolute path; includes are relative to the template folder"
    if _DRIVE.match(name):
        return "names a drive; includes are relative to the template folder"
    if ".." in name.split("/"):
        return "leaves the template folder ('..')"
    if not _pieces(name):
        return "names no file"
    return None


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)


def _refused_include(template: str, include: object, problem: str) -> _RefusedError:
    state = _recorder.get()
    where = _where(state, sys._getframe()) if state is not None else f"template {template}"
    shown = include if isinstance(include, str) else type(include).__name__
    return _RefusedError(f"{where}: include {shown!r} {problem}")


@functools.cache
def _loader_class() -> type[Any]:
    import jinja2

    class _ConfinedLoader(jinja2.BaseLoader):
        """Reads includes from one folder and never from outside it.

        Args:
            folder: The folder include names are relative to.
            boundary: The real path a file must resolve inside (symbolic links followed),
                or None where the folder is not on disk (a zipped package).
            template: The template's name, for error messages.
        """

        def __init__(self, folder: Traversable, boundary: Path | None, template: str) -> None:
            self.folder = folder
            self.boundary = boundary
            self.template = template

        def get_source(
            self, environment: jinja2.Environment, template: str
        ) -> tuple[str, str | None, Callable[[], bool] | None]:
            problem = _include_problem(template)
            if problem is not None:
                raise _refused_include(self.template, template, problem)
            target = self.folder.joinpath(*_pieces(template))
            if not isinstance(target, Path):  # inside a zip file: no links to follow
                if not target.is_file():
                    raise jinja2.TemplateNotFound(template)
                return target.read_text(encoding="utf-8"), None, None
            real = _real(target)
            if self.boundary is not None and not _inside(real, self.boundary):
                raise _refused_include(
                    self.template,
                    template,
                    "resolves outside the template folder (through a symbolic link)",
                )
            try:
                # Read the path that was checked, not the name: a link swapped in between
                # must not lead elsewhere.
                mtime = os.path.getmtime(real)
                source = real.read_text(encoding="utf-8") if real.is_file() else None
            except OSError:
                source = None
            if source is None:
                raise jinja2.TemplateNotFound(template)

            def uptodate() -> bool:
                try:
                    return os.path.getmtime(real) == mtime
                except OSError:
                    return False

            return source, str(target), uptodate

    return _ConfinedLoader


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
