"""`Adapter`: the base class of the wire formats.

An adapter is a pure wire format: it turns a signature, demos and inputs into chat messages
(`format`, `render`), and a completion back into typed values (`parse`). It never calls a
model: `structio.call` does that, through an adapter.

Subclassing: override the methods marked with `hook` (`Adapter.hooks()`), with or without
``super()``. What an adapter derives from a signature (system message, reminder, demos,
grammar) is computed once per signature *and per adapter options* (its attributes).
"""

from __future__ import annotations

import abc
import textwrap
import typing
from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from typing import Any, ClassVar
from weakref import WeakKeyDictionary

from structio._util.data import jsonable
from structio.adapters.fields import describe_fields, field_names, text_outputs
from structio.adapters.hooks import (
    NONE_OPEN,
    Message,
    ModelCapabilities,
    Reading,
    hook,
    set_native_options,
)
from structio.adapters.inputs import check_input_types, coerced, input_texts
from structio.adapters.native import (
    Native,
    native_calls_of,
    native_plan,
    tool_calls_output,
    tool_turn,
    tool_types,
)
from structio.adapters.plan import Plan, demo_key, history_key, plain_user_content, renamed
from structio.adapters.saving import adapter_class, saved_name
from structio.exceptions import ConfigurationError, FormatError, ParseError
from structio.grammar import Grammar
from structio.parsing.clean import clean
from structio.parsing.found import PromptText, set_aside
from structio.parsing.locate import Found, without_echoes
from structio.parsing.read import fill_omitted_outputs, read_outputs
from structio.parsing.stream import StreamReader
from structio.rendering.prompt import Part, Prompt, part_messages
from structio.rendering.tokens import DEFAULT_ENCODING, EncodeFunc
from structio.signatures.field import SignatureField
from structio.signatures.history import History
from structio.signatures.signature import (
    Signature,
    SignatureLike,
    as_signature,
    unknown_fields_message,
)
from structio.typemodel.info import core_type, type_info

__all__ = [
    "Adapter",
    "Message",
    "ModelCapabilities",
    "Reading",
    "SignatureLike",
    "as_signature",
    "check_input_types",
    "hook",
    "set_native_options",
    "text_outputs",
]

INCOMPLETE_DEMO_PREFIX = (
    "This is an example of the task, though some input or output fields are not supplied."
)
NOT_SUPPLIED = "Not supplied for this particular example. "
STRUCTURE_SENTENCE = (
    "All interactions will be structured in the following way, "
    "with the appropriate values filled in."
)

_TOOL_CALLS_REQUIREMENT = (
    ' (must be a JSON object like {"tool_calls": [{"name": "...", "args": {...}}]})'
)


# Plans of adapters whose options cannot be hashed, kept with the instance itself.
_INSTANCE_PLANS: WeakKeyDictionary[Adapter, dict[type[Signature], Plan]] = WeakKeyDictionary()
# Where an adapter keeps the key of its plans (computed from its options, dropped when one is
# set), and the key of an adapter whose options cannot be hashed.
_PLAN_KEY = "_structio_plan_key"
_UNHASHABLE: Any = object()


class Adapter(abc.ABC):
    """Base class of adapters: the pieces every wire format shares.

    Subclasses define the field structure shown in the system message, the reminder that
    ends the user message, how an assistant message is written, and where a completion's
    outputs are (`locate`). See `hooks` for every method meant to be overridden.

    Attributes:
        route: The name of the wire format, as a prediction's ``route`` reports it.
        constrain_default: Whether a local server's decoding is constrained when the
            ``constrain`` option is ``None``: False for every built-in adapter, measured.
    """

    route: ClassVar[str] = "chat"
    constrain_default: ClassVar[bool] = False

    def __repr__(self) -> str:
        options = ", ".join(f"{k}={v!r}" for k, v in self._options().items())
        return f"{type(self).__name__}({options})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Adapter):
            return NotImplemented
        return type(self) is type(other) and self._options() == other._options()

    __hash__ = object.__hash__  # identity, so instances can key weak maps

    @classmethod
    def hooks(cls) -> list[str]:
        """The names of the methods subclasses may override (marked with `hook`)."""
        names = set()
        for klass in cls.__mro__:
            for name, member in vars(klass).items():
                target = getattr(member, "__func__", member)
                if getattr(target, "__structio_hook__", False):
                    names.add(name)
        return sorted(names)

    # -- saving -----------------------------------------------------------------------------

    def _options(self) -> dict[str, Any]:
        """The adapter's options: its public instance attributes."""
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}

    def to_dict(self) -> dict[str, Any]:
        """The adapter as JSON-ready data: its class and its options.

        Built-in adapters are named by class name; others as ``module:QualName``. Options
        are the instance's public attributes, which `from_dict` passes back to the class as
        keyword arguments: a subclass whose ``__init__`` takes other arguments overrides
        both methods.

        Raises:
            ConfigurationError: The class is defined inside a function, or an option is
                not JSON data.
        """
        klass = type(self)
        data: dict[str, Any] = {"type": saved_name(klass)}
        for key, value in self._options().items():
            converted = jsonable(value)
            if isinstance(converted, str) and not isinstance(value, str):
                raise ConfigurationError(
                    f"cannot save adapter {klass.__name__}: option {key}={value!r} is not JSON "
                    "data; override to_dict/from_dict to save it"
                )
            data[key] = converted
        return data

    @staticmethod
    def from_dict(
        data: Mapping[str, Any],
        *,
        allowed_modules: Iterable[str] | None = None,
        trust_types: bool = False,
    ) -> Adapter:
        """The adapter `to_dict` described, importing only the modules allowed.

        A custom class (``module:QualName``) already defined in this program (its module
        imported) is used as it is: nothing is imported. Otherwise its module is imported
        only when it is structio's, in ``allowed_modules`` or ``trust_types`` is set, and
        it is checked before the import: importing a module runs its code.

        Args:
            data: What `to_dict` returned.
            allowed_modules: Modules the data may import an adapter class from; each name
                allows its submodules.
            trust_types: Allow any module: only for data you trust as you trust code.

        Raises:
            ConfigurationError: The data names no adapter class, names a module that is
                not allowed (the message says how to allow it), or the class cannot be
                imported or does not take these options.
        """
        if not isinstance(data, Mapping) or not isinstance(data.get("type"), str):
            raise ConfigurationError(
                f"a saved adapter is a dict with a 'type' (its class), not {data!r}"
            )
        name = data["type"]
        options = {k: v for k, v in data.items() if k != "type"}
        klass: Any = adapter_class(Adapter, name, allowed_modules, trust_types)
        try:
            adapter: Adapter = klass(**options)
        except TypeError as exc:
            raise ConfigurationError(
                f"cannot load adapter {name!r} with options {options!r}: {exc}"
            ) from None
        return adapter

    # -- public API -------------------------------------------------------------------------

    def format(
        self,
        signature: SignatureLike,
        demos: Iterable[Mapping[str, Any]] = (),
        inputs: Mapping[str, Any] | None = None,
    ) -> list[Message]:
        """Build the chat messages for one call: ``render(...).messages``.

        Messages: the system message, the demos as user/assistant pairs (incomplete demos
        first), the turns of any `History` input, and the final user message.

        Args:
            signature: A signature class or a string spec.
            demos: Few-shot examples, each a dict of field name to value. A demo with every
                field is complete; one with some inputs and some outputs is shown as an
                incomplete example; any other demo is dropped.
            inputs: The values of the signature's inputs.

        Raises:
            FormatError: A required input is missing, or an input name is not an input of
                the signature.
        """
        return part_messages(self._parts(signature, demos, inputs, named=False))

    def render(
        self,
        signature: SignatureLike,
        demos: Iterable[Mapping[str, Any]] = (),
        inputs: Mapping[str, Any] | None = None,
        *,
        encoding: str = DEFAULT_ENCODING,
        encode_func: EncodeFunc | None = None,
    ) -> Prompt:
        """Build the prompt for one call as named parts, ready to count and truncate.

        Parts: ``system``; ``demo_<i>_user`` / ``demo_<i>_assistant``; for a `History` input,
        ``history_<i>_user`` / ``history_<i>_assistant`` with truncation priority 1 (dropped
        oldest first when the prompt must fit a budget); and ``user``, the request. Only the
        history is truncatable.

        Args:
            signature: A signature class or a string spec.
            demos: Few-shot examples (see `format`).
            inputs: The values of the signature's inputs.
            encoding: The tiktoken encoding for counting tokens.
            encode_func: A tokenizer of your own, ``str -> list[int]``.

        Raises:
            FormatError: A required input is missing, or an input name is not an input of
                the signature.
        """
        parts = self._parts(signature, demos, inputs, named=True)
        return Prompt(parts, encoding=encoding, encode_func=encode_func)

    def _parts(
        self,
        signature: SignatureLike,
        demos: Iterable[Mapping[str, Any]],
        inputs: Mapping[str, Any] | None,
        *,
        named: bool,
    ) -> list[Part]:
        sig = as_signature(signature)
        plan = self._plan(sig)
        values = self._check_inputs(sig, plan, inputs)
        parts = [plan.system_part]
        if demos:
            parts.extend(self.demo_parts(sig, demos))
        for name in plan.history:
            if name in values:
                parts.extend(self._history(sig, values[name], named=named))
        if plan.custom_user:
            request = self.format_user_message_content(sig, values, main_request=True)
        else:  # the usual case, without a method call in between
            request = plain_user_content(plan, values, "", True)
        parts.append(Part("user", "user", request))
        return parts

    def parse(
        self,
        signature: SignatureLike,
        completion: str,
        *,
        inputs: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Read the signature's outputs from a completion.

        Reasoning drafts (``<think>...</think>``) and a code fence around everything are set
        aside, the adapter's `locate` finds each output's text, and the shared value rules
        turn it into the declared type, leniently only where exactly one reading exists.
        Given the call's ``inputs``, text that only repeats them is never read as an
        answer, whitespace aside: a completion that is one input, and a copy of one that
        holds an output's marker, key, tag or label (``[[ ## answer ## ]]``,
        ``"answer":``, ``<answer>``, ``Answer:``) wherever it stands, unless the output's
        own marker introduces it (`parsing.locate.without_echoes`).

        Returns:
            A dict of every output field (in signature order) to its typed value.

        Raises:
            ParseError: A required output is missing, cut off, or does not fit its type or
                constraints; the error lists every such field with the offending text.
        """
        sig = as_signature(signature)
        found = self.find(sig, completion, inputs=inputs)
        return read_outputs(sig, completion, found, adapter=type(self).__name__)

    def read(
        self,
        signature: type[Signature],
        completion: str,
        *,
        inputs: Mapping[str, Any] | None = None,
    ) -> Reading:
        """`parse`, also saying which reader found the outputs and which were left open.

        Raises:
            ParseError: As `parse`.
        """
        found = self.find(signature, completion, inputs=inputs)
        values = read_outputs(signature, completion, found, adapter=type(self).__name__)
        if found is None:  # read_outputs has raised; this keeps the type checker informed
            return Reading(values, "")
        opened = frozenset(found.open) if found.open else NONE_OPEN
        # tuple.__new__ skips the NamedTuple's Python-level constructor: this runs per call.
        return tuple.__new__(Reading, (values, found.how, opened))

    def find(
        self,
        signature: type[Signature],
        completion: str,
        *,
        inputs: Mapping[str, Any] | None = None,
    ) -> Found | None:
        """Where each output's text is in a completion (or the part of one received so far).

        Drafts, a fence around everything, echoed inputs and the prompt's own text in a
        value (`prompt_texts`) set aside, `locate` finds what `parse` and streams read.
        """
        text = clean(completion)
        if inputs and (echoes := input_texts(inputs)):
            text = without_echoes(text, echoes, signature.output_fields)
        found = self.locate(signature, text)
        return found if found is None else set_aside(found, self.prompt_texts(signature))

    @hook
    def prompt_texts(self, signature: type[Signature]) -> Mapping[str, PromptText]:
        """What this format's prompt writes in each output's place (none by default)."""
        return {}

    @hook
    def stream_reader(
        self, signature: type[Signature], *, inputs: Mapping[str, Any] | None = None
    ) -> StreamReader:
        """The reader of a streamed completion of this format (see `structio.parsing.stream`).

        The base class's reader gives every value at the end; `ChatAdapter` and
        `JSONAdapter` give each as soon as it is complete. A custom format may return a
        `StreamReader` subclass of its own.
        """
        return StreamReader(signature, partial(self.find, signature, inputs=inputs))

    @hook
    @abc.abstractmethod
    def locate(self, signature: type[Signature], text: str) -> Found | None:
        """Find where each output's text is in a (cleaned) completion, or ``None``."""

    def format_finetune_data(
        self,
        signature: SignatureLike,
        demos: Iterable[Mapping[str, Any]],
        inputs: Mapping[str, Any],
        outputs: Mapping[str, Any],
    ) -> dict[str, list[Message]]:
        """Build one finetuning record: the inference prompt plus the assistant target.

        Returns:
            ``{"messages": [...]}``, valid for OpenAI chat fine-tuning and for TRL's
            conversational format.

        Raises:
            FormatError: An input is wrong (as in `format`), an output is unknown, or a
                required output is missing.
        """
        sig = as_signature(signature)
        messages = self.format(sig, demos, inputs)
        target = self._check_outputs(sig, outputs)
        messages.append(
            {"role": "assistant", "content": self.format_assistant_message_content(sig, target)}
        )
        return {"messages": messages}

    @hook
    def request_params(
        self, signature: type[Signature], params: Mapping[str, Any], lm: ModelCapabilities
    ) -> dict[str, Any]:
        """The request parameters for this format (JSONAdapter adds ``response_format``)."""
        return dict(params)

    @hook
    def retry_message(self, signature: type[Signature], error: ParseError) -> str:
        """What a model is told when its answer could not be used (re-asking, ``max_retries``).

        Sent as a user message after the model's own answer: each missing or invalid output
        and why, in words written for the model, then the format reminder.
        """
        lines = ["Your answer could not be used:"]
        if error.truncated:
            lines.append("- it was cut off at the token limit: answer more briefly")
        if error.problem:
            lines.append(f"- {error.problem}")
        for name, (text, reason) in error.invalid.items():
            shown = text if len(text) <= 200 else text[:197] + "..."
            lines.append(f"- `{name}`: {reason} (you wrote: {shown!r})")
        if error.missing:
            lines.append("- missing: " + ", ".join(f"`{n}`" for n in error.missing))
        lines.append("")
        lines.append(
            "Answer again, giving every output field. "
            + self.user_message_output_requirements(signature)
        )
        return "\n".join(lines)

    @hook
    def answer_text(self, text: str, tool_calls: Sequence[Mapping[str, Any]] | None = None) -> str:
        """Where this format's answer is in a reply: by default its text.

        An adapter that has the model answer through a forced tool call returns the call's
        arguments instead; the call layer reads (and falls back on) what this returns.
        """
        return text

    @hook
    def native(self, signature: type[Signature], lm: ModelCapabilities) -> Native | None:
        """How the signature's tool calls and reasoning travel with this model, if it has any.

        The adapter's ``native_tools`` and ``native_reasoning`` options choose (``None``:
        native when the model supports it); see `structio.adapters.native`.
        """
        return native_plan(
            signature,
            lm,
            native_tools=getattr(self, "native_tools", None),
            native_reasoning=getattr(self, "native_reasoning", None),
        )

    @hook
    def fallback_adapter(self) -> Adapter | None:
        """The adapter to try when a completion in this format cannot be read, if any.

        The call layer rereads the same completion with it, then makes one more request.
        """
        return None

    @hook
    def grammar(self, signature: type[Signature], *, think: bool = False) -> Grammar | None:
        """A `Grammar` of exactly the text this format asks for, or ``None`` (not known)."""
        return None

    # -- pieces subclasses may override -----------------------------------------------------

    @hook
    def format_system_message(self, signature: type[Signature]) -> str:
        """The system message: field descriptions, field structure and the task."""
        parts = (
            self.format_field_description,
            self.format_field_structure,
            self.format_task_description,
        )
        return "\n".join(part(signature) for part in parts)

    @hook
    def format_field_description(self, signature: type[Signature]) -> str:
        """The ``Your input fields are: ...`` block."""
        inputs = {n: f for n, f in signature.input_fields.items() if f.annotation is not History}
        return (
            f"Your input fields are:\n{describe_fields(inputs)}\n"
            f"Your output fields are:\n{describe_fields(signature.output_fields)}"
        )

    @hook
    @abc.abstractmethod
    def format_field_structure(self, signature: type[Signature]) -> str:
        """The part of the system message that shows how messages are laid out."""

    @hook
    def format_task_description(self, signature: type[Signature]) -> str:
        """``In adhering to this structure, your objective is:`` and the instructions."""
        lines = textwrap.dedent(signature.instructions).splitlines()
        body = "".join("\n        " + line for line in lines)
        return f"In adhering to this structure, your objective is: {body}"

    @hook
    def format_input_structure(self, signature: type[Signature]) -> str:
        """One ``[[ ## name ## ]]`` / ``{name}`` block per input (`History` inputs excepted)."""
        return "\n\n".join(
            f"[[ ## {name} ## ]]\n{{{name}}}"
            for name, f in signature.input_fields.items()
            if f.annotation is not History
        )

    @hook
    @staticmethod
    def format_type_requirement(field: SignatureField) -> str:
        """`` (must be formatted as a valid Python T)`` for a non-``str`` output, else ''."""
        if field.annotation is str:
            return ""
        types = tool_types()
        if types is not None and core_type(field.annotation) is types[1]:
            return _TOOL_CALLS_REQUIREMENT
        return f" (must be formatted as a valid Python {type_info(field.annotation).name})"

    @hook
    @abc.abstractmethod
    def user_message_output_requirements(self, signature: type[Signature]) -> str:
        """The reminder ending each request: which outputs to write, in which format."""

    @hook
    def format_user_message_content(
        self,
        signature: type[Signature],
        inputs: Mapping[str, Any],
        *,
        prefix: str = "",
        main_request: bool = False,
    ) -> str:
        """A user message: the given inputs as sections, then the reminder on requests."""
        return plain_user_content(self._plan(signature), inputs, prefix, main_request)

    def _user_content(
        self,
        signature: type[Signature],
        plan: Plan,
        inputs: Mapping[str, Any],
        prefix: str,
        main_request: bool,
    ) -> str:
        if plan.custom_user:  # a subclass changed how user messages look: use its method
            return self.format_user_message_content(
                signature, inputs, prefix=prefix, main_request=main_request
            )
        return plain_user_content(plan, inputs, prefix, main_request)

    @hook
    @abc.abstractmethod
    def format_assistant_message_content(
        self,
        signature: type[Signature],
        outputs: Mapping[str, Any],
        missing_field_message: str | None = None,
    ) -> str:
        """An assistant message holding ``outputs``.

        An output absent from ``outputs`` is written as ``missing_field_message``, or left
        out when that is ``None``.
        """

    def format_demos(
        self, signature: type[Signature], demos: Iterable[Mapping[str, Any]]
    ) -> list[Message]:
        """Demos as user/assistant messages (see `demo_parts`)."""
        return part_messages(self.demo_parts(signature, demos))

    @hook
    def demo_parts(
        self, signature: type[Signature], demos: Iterable[Mapping[str, Any]]
    ) -> list[Part]:
        """Demos as user/assistant parts: incomplete demos first, then complete ones.

        A demo is complete when every field but a `History` input is present and not
        ``None``; incomplete when it has at least one input and one output; otherwise it is
        dropped.
        """
        plan = self._plan(signature)
        complete: list[Mapping[str, Any]] = []
        incomplete: list[Mapping[str, Any]] = []
        needed = [name for name, _, _ in plan.inputs] + [name for name, _, _ in plan.outputs]
        for index, demo in enumerate(demos):
            if not isinstance(demo, Mapping):
                raise FormatError(
                    f"demo {index} must be a dict of field name to value, not {type(demo).__name__}"
                )
            if all(demo.get(name) is not None for name in needed):
                complete.append(demo)
            elif any(name in demo for name, _, _ in plan.inputs) and any(
                name in demo for name, _, _ in plan.outputs
            ):
                incomplete.append(demo)
        parts: list[Part] = []
        shown: list[tuple[Mapping[str, Any], str, str | None]]
        shown = [(demo, INCOMPLETE_DEMO_PREFIX, NOT_SUPPLIED) for demo in incomplete]
        shown += [(demo, "", None) for demo in complete]
        for number, (demo, prefix, missing) in enumerate(shown, 1):

            def render(
                demo: Mapping[str, Any] = demo,
                prefix: str = prefix,
                missing: str | None = missing,
                number: int = number,
            ) -> tuple[Part, ...]:
                demo = coerced(signature, plan.coerced, demo)
                user = self._user_content(signature, plan, demo, prefix, False)
                assistant = self.format_assistant_message_content(signature, demo, missing)
                return (
                    Part(f"demo_{number}_user", "user", user),
                    Part(f"demo_{number}_assistant", "assistant", assistant),
                )

            key = partial(demo_key, number, missing, demo)
            parts.extend(plan.rendered.get(key, render))
        return parts

    def format_history(self, signature: type[Signature], history: History) -> list[Message]:
        """The turns of a conversation history as messages (see `history_parts`)."""
        return part_messages(self._history(signature, history, named=False))

    def _history(self, signature: type[Signature], history: History, *, named: bool) -> list[Part]:
        """`history_parts`; if not overridden and not ``named``, parts under cached names."""
        if type(self).history_parts is Adapter.history_parts:
            return self._history_turns(signature, history, named=named)
        return self.history_parts(signature, history)

    @hook
    def history_parts(self, signature: type[Signature], history: History) -> list[Part]:
        """The turns of a conversation history, oldest first, as truncatable parts.

        A turn's inputs become a user part (with the reminder) and its outputs an assistant
        part; a turn without outputs gives only the user part, one without inputs only the
        assistant part. Nothing is padded with ``None``. Every part has truncation priority 1.

        A turn whose `ToolCalls` output has run (`ToolCalls.execute`) also replays the
        results: with native tools, as the provider expects them (the assistant message
        carries ``tool_calls``, then one ``tool`` message per result); in text mode, as a
        user message with a ``[[ ## tool_call_results ## ]]`` section. Calls that have not
        run are not replayed natively (a provider refuses calls without results).
        """
        return self._history_turns(signature, history, named=True)

    def _history_turns(
        self, signature: type[Signature], history: History, *, named: bool
    ) -> list[Part]:
        plan = self._plan(signature)
        parts: list[Part] = []
        native = native_calls_of(signature)
        calls_field = native or tool_calls_output(signature)
        for number, turn in enumerate(history.messages, 1):

            def render(turn: Mapping[str, Any] = turn, number: int = number) -> tuple[Part, ...]:
                turn = coerced(signature, plan.coerced, turn)
                rendered: list[Part] = []
                label = f"history_{number}"
                if any(name in turn for name, _, _ in plan.inputs):
                    content = self._user_content(signature, plan, turn, "", True)
                    rendered.append(Part(f"{label}_user", "user", content, 1))
                turn_calls = tool_turn(turn.get(calls_field)) if calls_field else None
                answered = any(name in turn for name, _, _ in plan.outputs)
                if native is not None and turn_calls is not None and turn_calls.replayable:
                    # The provider's own form: the calls on the assistant message, then
                    # one tool message per result.
                    text = (
                        self.format_assistant_message_content(signature, turn) if answered else None
                    )
                    extra: tuple[tuple[str, Any], ...] = (
                        ("tool_calls", turn_calls.openai_calls()),
                    )
                    if turn_calls.reasoning_items:
                        # Replayed unchanged, before the calls, by the APIs that take them.
                        items = [dict(item) for item in turn_calls.reasoning_items]
                        extra += (("reasoning_items", items),)
                    rendered.append(Part(f"{label}_assistant", "assistant", text, 1, extra))
                    rendered.extend(
                        Part(f"{label}_tool_{i}", "tool", result, 1, tool_extra)
                        for i, (result, tool_extra) in enumerate(turn_calls.tool_messages(), 1)
                    )
                    return tuple(rendered)
                if answered:
                    if turn_calls is not None and native is None and calls_field is not None:
                        # The calls as the model writes them: names and arguments only.
                        turn = {**turn, calls_field: turn_calls.written()}
                    content = self.format_assistant_message_content(signature, turn)
                    rendered.append(Part(f"{label}_assistant", "assistant", content, 1))
                if native is None and turn_calls is not None and turn_calls.results:
                    # Text mode: the results come back as a user message, as DSPy sends them.
                    rendered.append(
                        Part(f"{label}_tool_results", "user", turn_calls.results_section(), 1)
                    )
                return tuple(rendered)

            # Cached by content, not position (a sliding window moves every turn each call);
            # messages carry no part names, so `format` skips renaming a moved turn's parts.
            turn_parts = plan.rendered.get(partial(history_key, turn), render)
            parts.extend(renamed(turn_parts, number) if named else turn_parts)
        return parts

    # -- shared machinery -------------------------------------------------------------------

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        # Options are attributes: a new value means new prompts.
        self.__dict__.pop(_PLAN_KEY, None)
        _INSTANCE_PLANS.pop(self, None)

    def __getstate__(self) -> dict[str, Any]:
        """The attributes to pickle: the options, not this process's plan key (made anew)."""
        state = dict(self.__dict__)
        state.pop(_PLAN_KEY, None)
        return state

    def _new_plan(self, sig: type[Signature]) -> Plan:
        custom_user = (
            type(self).format_user_message_content is not Adapter.format_user_message_content
        )
        system = self.format_system_message(sig)
        return Plan(
            sig, system, self.user_message_output_requirements(sig), custom_user=custom_user
        )

    def _plan(self, sig: type[Signature]) -> Plan:
        state = self.__dict__
        key = state.get(_PLAN_KEY)
        if key is None:
            # The options are part of the key: instances that differ share no prompt.
            key = (type(self), "plan", *((k, v) for k, v in state.items() if k != _PLAN_KEY))
            try:
                hash(key)
            except TypeError:  # an unhashable option: plans are kept with this instance
                key = _UNHASHABLE
            state[_PLAN_KEY] = key
        if key is _UNHASHABLE:
            plans = _INSTANCE_PLANS.setdefault(self, {})
            plan = plans.get(sig)
            if plan is None:
                plan = plans[sig] = self._new_plan(sig)
            return plan
        cache = sig.__structio_cache__
        plan = cache.get(key)
        if plan is None:
            plan = cache[key] = self._new_plan(sig)
        return plan

    def _check_inputs(
        self, sig: type[Signature], plan: Plan, inputs: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        if (
            type(inputs) is dict
            and not plan.history
            and not plan.coerced
            and plan.input_names.issuperset(inputs)
            and all(name in inputs for name in plan.all_inputs)
        ):  # every input given, none to default or convert: nothing to copy or change
            return inputs
        if inputs is None:
            inputs = {}
        elif not isinstance(inputs, Mapping):
            raise FormatError(
                f"inputs must be a dict of field name to value, not {type(inputs).__name__}"
            )
        values = dict(inputs)
        unknown = [name for name in values if name not in plan.input_names]
        if unknown:
            raise FormatError(unknown_fields_message(sig, unknown, "input"))
        missing = [name for name in plan.required_inputs if name not in values]
        if missing:
            names = ", ".join(f"`{n}`" for n in missing)
            raise FormatError(
                f"missing required input(s) {names} for {sig.__name__} ({sig.signature}); "
                f"its inputs are: {field_names(sig.input_fields)}"
            )
        for name, field, _ in plan.inputs:
            if name not in values and field.has_default:
                values[name] = field.get_default()
        for name in plan.history:
            if name in values:
                try:
                    values[name] = History.coerce(values[name])
                except TypeError as exc:
                    raise FormatError(f"input `{name}` of {sig.__name__}: {exc}") from None
        return typing.cast("dict[str, Any]", coerced(sig, plan.coerced, values))

    def _check_outputs(self, sig: type[Signature], outputs: Mapping[str, Any]) -> dict[str, Any]:
        if not isinstance(outputs, Mapping):
            raise FormatError(
                f"outputs must be a dict of field name to value, not {type(outputs).__name__}"
            )
        unknown = [name for name in outputs if name not in sig.output_fields]
        if unknown:
            raise FormatError(unknown_fields_message(sig, unknown, "output"))
        values, missing = fill_omitted_outputs(sig, outputs)
        if missing:
            raise FormatError(
                f"missing output(s) {', '.join(f'`{n}`' for n in missing)} for {sig.__name__} "
                f"({sig.signature}); a finetuning target needs every required output"
            )
        return values
