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

import os
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from structio._util.files import TEXT_ENCODING
from structio.exceptions import TemplateError
from structio.rendering.budget import (
    MAX_INT_BITS,
    MAX_ITERATIONS,
    MAX_OUTPUT,
    SPACE_MARKER,
    _recorder,
    _too_long,
    _Values,
)
from structio.rendering.prompt import Part, PartSection, Prompt
from structio.rendering.tokens import DEFAULT_ENCODING, EncodeFunc

__all__ = ["MAX_INT_BITS", "MAX_ITERATIONS", "MAX_OUTPUT", "SPACE_MARKER", "Template"]

ROLES = ("system", "user", "assistant", "developer", "tool")


def _sandbox() -> ModuleType:
    """The sandbox, imported with the first template (Jinja2's machinery is heavy)."""
    from structio.rendering import sandbox

    return sandbox


def _includes() -> ModuleType:
    """Includes and template folders, imported with the first template that needs them."""
    from structio.rendering import includes

    return includes


_KEYS = ("name", "role", "content", "truncation_priority")
# The keys of the usual part, which `Template._part` reads without the full checks.
_KEY_SET = frozenset(_KEYS)
_ALL_KEYS = (*_KEYS, "sections", "expected_template_data_keys", "tokens")
_ALL_KEY_SET = frozenset(_ALL_KEYS)
# A section's keys (Prompt Poet's); its truncation_priority is accepted and, as there,
# unused: truncation drops whole parts.
_SECTION_KEYS = ("name", "content", "tokens", "truncation_priority")


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
        self._limits = _sandbox()._checked_limits(max_iterations, max_output, max_int_bits)
        self.allow_token_overrides = allow_token_overrides
        loader = _loader
        if loader is None and search_path is not None:
            # Absolute now: a later change of the working folder must not move the folder.
            folder = Path(os.path.abspath(search_path))
            loader = _includes()._loader_class()(folder, _includes()._real(folder), name)
        try:
            if loader is None:  # no includes: share the compiled code of equal sources
                self._template = _sandbox()._compiled(raw_template)
            else:
                self._template = _sandbox()._environment(loader).from_string(raw_template)
        except Exception as exc:
            raise _sandbox()._jinja_error(name, exc) from None

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
            TemplateError: The file cannot be read (its path names no file, or one that is
                not UTF-8 text); the reading's error is the cause.
        """
        file = Path(path)
        try:
            text = file.read_text(encoding=TEXT_ENCODING)
        except OSError as exc:
            raise TemplateError(
                f"cannot read template {str(file)!r}: {exc.strerror or exc}"
            ) from exc
        except UnicodeDecodeError as exc:
            raise TemplateError(
                f"cannot read template {str(file)!r}: it is not UTF-8 text (byte "
                f"{exc.object[exc.start]:#04x} at offset {exc.start:,}); save it as UTF-8"
            ) from exc
        except ValueError as exc:  # a path Python refuses: a NUL character in it
            raise TemplateError(
                f"cannot read template {str(file)!r}: its path cannot name a file ({exc})"
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
        problem = _includes()._include_problem(name)
        if problem is not None:
            problem = problem.replace("the template folder", "the package")
            raise TemplateError(
                f"cannot load template {name!r} from package {package!r}: the name "
                + problem.replace("includes are", "template names are")
            )
        pieces = _includes()._pieces(name)
        folder = root.joinpath(*pieces[:-1])
        resource = root.joinpath(*pieces)
        # On disk, a symbolic link may not lead out of the package (a zipped package has
        # none); a namespace package, spread over folders, is held to the template's own.
        anchor = root if isinstance(root, Path) else folder
        boundary = _includes()._real(anchor) if isinstance(anchor, Path) else None
        if (
            boundary is not None
            and isinstance(resource, Path)
            and not _includes()._inside(_includes()._real(resource), boundary)
        ):
            raise TemplateError(
                f"cannot load template {name!r} from package {package!r}: it resolves "
                "outside the package (through a symbolic link)"
            )
        if not resource.is_file():
            raise TemplateError(f"template {name!r} not found in package {package!r}")
        full_name = f"{package}:{name}"
        return cls(
            resource.read_text(encoding=TEXT_ENCODING),
            name=full_name,
            max_iterations=max_iterations,
            max_output=max_output,
            max_int_bits=max_int_bits,
            allow_token_overrides=allow_token_overrides,
            _loader=_includes()._loader_class()(folder, boundary, full_name),
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
                    raise _too_long(values, _sandbox()._innermost_frame(stream))
                append(chunk)
        except Exception as exc:
            raise _sandbox()._jinja_error(self.name, exc) from None
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
