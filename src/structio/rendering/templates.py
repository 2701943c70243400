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

Content is stripped of surrounding whitespace (as YAML block scalars leave it); write
``<|space|>`` in the template for a space the strip must keep. Your data's own whitespace
is kept as it is.
"""

from __future__ import annotations

import contextvars
import functools
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from structio.exceptions import TemplateError
from structio.rendering.prompt import Part, Prompt
from structio.rendering.tokens import DEFAULT_ENCODING, EncodeFunc

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["SPACE_MARKER", "Template"]

SPACE_MARKER = "<|space|>"
ROLES = ("system", "user", "assistant", "developer", "tool")
_KEYS = ("name", "role", "content", "truncation_priority")
_KEY_SET = frozenset(_KEYS)

_recorder: contextvars.ContextVar[_Values | None] = contextvars.ContextVar(
    "structio_template_values", default=None
)


class _Values:
    """The values one render interpolated, each behind a placeholder."""

    def __init__(self) -> None:
        import secrets

        self.nonce = secrets.token_hex(6)
        self.values: list[str] = []
        self.marker = f"__sio{self.nonce}_"
        self.pattern = re.compile(rf"__sio{self.nonce}_(\d+)__")

    def placeholder(self, value: Any) -> str:
        self.values.append("" if value is None else str(value))
        return f"__sio{self.nonce}_{len(self.values) - 1}__"

    def fill(self, text: str) -> str:
        if self.marker not in text:
            return text
        whole = self.pattern.fullmatch(text)
        if whole is not None:
            return self.values[int(whole.group(1))]
        # One pass: a value that looks like a placeholder is never expanded again.
        return self.pattern.sub(lambda m: self.values[int(m.group(1))], text)


def _finalize(value: Any) -> Any:
    values = _recorder.get()
    return values.placeholder(value) if values is not None else value


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
        search_path: A folder ``{% include %}`` reads section files from.
    """

    def __init__(
        self,
        raw_template: str,
        *,
        name: str = "<string>",
        search_path: str | Path | None = None,
        _loader: Any = None,
    ) -> None:
        if not isinstance(raw_template, str):
            raise TemplateError(f"a template is text, not {type(raw_template).__name__}")
        self.name = name
        self.source = raw_template
        loader = _loader
        if loader is None and search_path is not None:
            import jinja2

            loader = jinja2.FileSystemLoader(str(search_path))
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
    def from_file(cls, path: str | Path) -> Template:
        """Load a template file; ``{% include %}`` paths are relative to its folder.

        Raises:
            TemplateError: The file cannot be read.
        """
        from pathlib import Path

        file = Path(path)
        try:
            text = file.read_text(encoding="utf-8")
        except OSError as exc:
            raise TemplateError(
                f"cannot read template {str(file)!r}: {exc.strerror or exc}"
            ) from exc
        return cls(text, name=str(file), search_path=file.parent)

    @classmethod
    def from_package(cls, package: str, name: str) -> Template:
        """Load a template shipped inside a package (``name`` relative to the package).

        ``{% include %}`` paths are relative to the template's folder in the package.

        Raises:
            TemplateError: The package or the file cannot be found.
        """
        import importlib.resources
        from pathlib import Path

        import jinja2

        try:
            root = importlib.resources.files(package)
        except ModuleNotFoundError as exc:
            raise TemplateError(f"cannot load template {name!r}: no package {package!r}") from exc
        folder = root.joinpath(*Path(name).parent.parts)
        resource = root.joinpath(*Path(name).parts)
        if not resource.is_file():
            raise TemplateError(f"template {name!r} not found in package {package!r}")

        def load(include: str) -> str | None:
            target = folder.joinpath(*Path(include).parts)
            return target.read_text(encoding="utf-8") if target.is_file() else None

        return cls(
            resource.read_text(encoding="utf-8"),
            name=f"{package}:{name}",
            _loader=jinja2.FunctionLoader(load),
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
                operation, a missing include), YAML that does not parse, or a part that is
                not a mapping, lacks ``name`` or ``content``, has an unknown key or role. The
                message names the template, the part and the line of the rendered YAML.
        """
        values = _Values()
        token = _recorder.set(values)
        try:
            text = self._template.render(dict(template_data or {}))
        except Exception as exc:
            raise _jinja_error(self.name, exc) from None
        finally:
            _recorder.reset(token)
        parts = [
            self._part(item, line, index, values)
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
            mark = exc.problem_mark or exc.context_mark
            line = mark.line + 1 if mark is not None else 0
            shown = (
                values.fill(text.splitlines()[line - 1])
                if 0 < line <= len(text.splitlines())
                else ""
            )
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

    def _part(self, item: Any, line: int, index: int, values: _Values) -> Part:
        if (
            type(item) is dict
            and _KEY_SET.issuperset(item)
            and item.get("name") is not None
            and type(content := item.get("content")) is str
        ):  # the usual part: skip straight to its fields
            role = values.fill(str(item.get("role", "user"))).strip()
            priority_text = values.fill(str(item.get("truncation_priority", 0))).strip()
            if role in ROLES and priority_text.isdecimal():
                text = content.strip().replace(SPACE_MARKER, " ")
                return Part(
                    values.fill(str(item["name"])), role, values.fill(text), int(priority_text)
                )
        return self._checked_part(item, line, index, values)

    def _checked_part(self, item: Any, line: int, index: int, values: _Values) -> Part:
        def where() -> str:
            if isinstance(item, dict) and item.get("name") is not None:
                return (
                    f"template {self.name}: part {values.fill(str(item['name']))!r} (line {line})"
                )
            return f"template {self.name}: part {index + 1} (line {line})"

        if not isinstance(item, dict):
            raise TemplateError(f"{where()} must be a mapping with name, role and content")
        if not _KEY_SET.issuperset(item):
            unknown = sorted(str(k) for k in item if k not in _KEY_SET)
            raise TemplateError(
                f"{where()} has unknown key(s) {unknown}; a part takes {', '.join(_KEYS)}"
            )
        if item.get("name") is None:
            raise TemplateError(f"{where()} has no name")
        content = item.get("content")
        if content is None:
            raise TemplateError(f"{where()} has no content")
        if isinstance(content, (list, dict)):
            raise TemplateError(f"{where()}: content must be text, not a {type(content).__name__}")
        role = values.fill(str(item.get("role", "user"))).strip()
        if role not in ROLES:
            raise TemplateError(
                f"{where()} has unknown role {role!r}; use one of {', '.join(ROLES)}"
            )
        priority_text = values.fill(str(item.get("truncation_priority", 0))).strip()
        try:
            priority = int(priority_text)
        except ValueError:
            raise TemplateError(
                f"{where()}: truncation_priority must be an integer, not {priority_text!r}"
            ) from None
        text = _content_text(content).strip().replace(SPACE_MARKER, " ")
        return Part(values.fill(str(item["name"])), role, values.fill(text), priority)


def _content_text(content: Any) -> str:
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
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class _Sandbox(ImmutableSandboxedEnvironment):
        def getattr(self, obj: Any, attribute: str) -> Any:
            # ``message.role`` on a plain dict: the sandbox tries the attribute first and
            # comes to the item after an AttributeError; a chat template does this for
            # every message, so go straight to the same answer.
            if type(obj) is dict and attribute not in _DICT_ATTRIBUTES and attribute in obj:
                return obj[attribute]
            return super().getattr(obj, attribute)

    return _Sandbox


_DICT_ATTRIBUTES = frozenset(dir(dict))


def _jinja_error(name: str, exc: Exception) -> TemplateError:
    import jinja2
    from jinja2.exceptions import SecurityError

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
