"""`Adapter`: the base class of the wire formats.

An adapter turns a signature, demos and inputs into chat messages, and a completion back
into typed values. Adapters are pure: they never call a model.
"""

from __future__ import annotations

import abc
import dataclasses
import functools
import json
import textwrap
from collections.abc import Hashable, Iterable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

from structio.adapters._completions import Found, clean
from structio.adapters._memo import RenderCache, freeze_fields
from structio.adapters._values import TypeInfo, input_text, jsonable, type_info
from structio.exceptions import ContextWindowExceededError, FormatError, ParseError, TruncationError
from structio.formatting import formatting_class
from structio.prompt import Part, Prompt, Truncation, TruncationStep
from structio.signatures.field import SignatureField
from structio.signatures.history import History
from structio.signatures.signature import Signature, SignatureMeta, _make_signature
from structio.tokens import DEFAULT_ENCODING, EncodeFunc

if TYPE_CHECKING:
    from structio.lm.base import BaseLM
    from structio.lm.types import LMResponse, Usage

__all__ = ["Adapter", "AdapterResult", "Message", "SignatureLike"]

Message = dict[str, Any]
"""An OpenAI-style chat message: ``{"role": "system" | "user" | "assistant", "content": str}``."""

SignatureLike = type[Signature] | str
"""A signature class, or a string spec such as ``"question -> answer: int"``."""

INCOMPLETE_DEMO_PREFIX = (
    "This is an example of the task, though some input or output fields are not supplied."
)
NOT_SUPPLIED = "Not supplied for this particular example. "
_STRUCTURE_SENTENCE = (
    "All interactions will be structured in the following way, "
    "with the appropriate values filled in."
)


Path = Literal["chat", "json", "json_reparse", "json_request"]
"""Which route produced a result: the adapter's own format, the same completion read again
as JSON (no new request), or a new request in JSON after the first could not be read."""


@dataclasses.dataclass(frozen=True)
class AdapterResult:
    """What a call through an adapter produced.

    Attributes:
        outputs: One dict of typed output values per completion (``n=`` choices).
        path: ``"chat"`` or ``"json"`` when the adapter's own format was read;
            ``"json_reparse"`` when ChatAdapter's completion was read as JSON instead (no new
            request); ``"json_request"`` when a new request in JSON was needed.
        responses: Every model response involved, in order (two after a JSON request).
        truncation: What was cut from the prompt before the answering request, if anything.
    """

    outputs: list[dict[str, Any]]
    path: Path
    responses: list[LMResponse] = dataclasses.field(default_factory=list)
    truncation: Truncation | None = None

    @property
    def usage(self) -> Usage:
        """Tokens of every request made for this result."""
        if len(self.responses) == 1:  # the usual case: nothing to add up
            return self.responses[0].usage
        from structio.lm.types import Usage

        total = Usage()
        for response in self.responses:
            total = total + response.usage
        return total

    @property
    def cost(self) -> float | None:
        """Cost in USD of every request, when known."""
        if len(self.responses) == 1:
            cost = self.responses[0].cost
            return None if cost is None else float(cost)
        costs = [r.cost for r in self.responses]
        return None if any(c is None for c in costs) else float(sum(c or 0.0 for c in costs))

    def after(self, first: LMResponse) -> AdapterResult:
        """This result as the answer of a JSON request made after ``first`` failed to parse."""
        return AdapterResult(
            self.outputs, "json_request", [first, *self.responses], self.truncation
        )


# Our token count and the provider's differ (other tokenizers, message framing): keep a margin.
_CONTEXT_MARGIN = 0.9


@dataclasses.dataclass(frozen=True)
class _Call:
    """One request being prepared: the full prompt, what is sent, and what was cut."""

    sig: type[Signature]
    demos: list[Mapping[str, Any]]
    prompt: Prompt
    sent: Prompt
    kwargs: dict[str, Any]
    step: TruncationStep
    truncation: Truncation | None = None

    @property
    def messages(self) -> list[Message]:
        return self.sent.messages

    def truncated(
        self, reason: Literal["max_prompt_tokens", "context_window"], limit: int
    ) -> _Call:
        sent = self.prompt.truncate(limit, self.step)
        if not sent.dropped:
            return dataclasses.replace(self, sent=sent)
        truncation = Truncation(
            reason=reason,
            token_limit=limit,
            tokens_before=self.prompt.token_count,
            tokens_after=sent.token_count,
            dropped=tuple(p.name for p in sent.dropped),
        )
        return dataclasses.replace(self, sent=sent, truncation=truncation)

    def fitted_to_context(self, lm: BaseLM, error: ContextWindowExceededError) -> _Call:
        """The call cut to the model's input limit, or ``error`` raised if that cannot help."""
        limit = lm.max_input_tokens
        if not limit:
            raise error
        budget = max(1, int(limit * _CONTEXT_MARGIN))
        if self.truncation is not None:
            budget = min(budget, self.truncation.token_limit)
        try:
            fitted = self.truncated("context_window", budget)
        except TruncationError as cannot:
            raise cannot from error
        if len(fitted.sent) == len(self.sent):
            raise error  # nothing more can be dropped; the same prompt would fail again
        return fitted


class _NeedsJSONRequestError(Exception):
    """Internal: the completion could not be read; a JSON request should be made."""

    def __init__(self, error: ParseError) -> None:
        super().__init__(str(error))
        self.error = error


class _Plan:
    """Everything about a signature that an adapter needs on every call, computed once."""

    __slots__ = (
        "all_inputs",
        "history",
        "input_formats",
        "input_names",
        "inputs",
        "output_infos",
        "outputs",
        "reminder",
        "rendered",
        "required_inputs",
        "system",
        "system_part",
    )

    def __init__(self, adapter: Adapter, sig: type[Signature]) -> None:
        self.inputs: tuple[tuple[str, SignatureField, bool], ...] = tuple(
            (name, f, f.annotation is str)
            for name, f in sig.input_fields.items()
            if f.annotation is not History
        )
        self.history: tuple[str, ...] = tuple(
            name for name, f in sig.input_fields.items() if f.annotation is History
        )
        self.input_names = frozenset(sig.input_fields)
        self.input_formats: dict[str, type] = {
            name: klass
            for name, f, _ in self.inputs
            if (klass := formatting_class(f.annotation)) is not None
        }
        self.required_inputs = tuple(name for name, f, _ in self.inputs if f.required)
        self.outputs: tuple[tuple[str, SignatureField, bool], ...] = tuple(
            (name, f, f.annotation is str) for name, f in sig.output_fields.items()
        )
        self.output_infos: dict[str, TypeInfo] = {
            name: type_info(f.annotation, tuple(f.constraints.items()))
            for name, f in sig.output_fields.items()
        }
        self.system = adapter.format_system_message(sig)
        self.system_part = Part("system", "system", self.system)
        self.reminder = adapter.user_message_output_requirements(sig)
        self.all_inputs = tuple(name for name, _, _ in self.inputs)
        # Demo and history parts by content: they come back on every call.
        self.rendered = RenderCache()


class Adapter(abc.ABC):
    """Base class of adapters: the pieces every wire format shares.

    Subclasses define the field structure shown in the system message, the reminder that
    ends the user message, how an assistant message is written, and how a completion is
    parsed. Everything that depends only on the signature is computed once per signature.
    """

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

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
        return [
            {"role": p.role, "content": p.content} for p in self._parts(signature, demos, inputs)
        ]

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
        parts = self._parts(signature, demos, inputs)
        return Prompt(parts, encoding=encoding, encode_func=encode_func)

    def _parts(
        self,
        signature: SignatureLike,
        demos: Iterable[Mapping[str, Any]],
        inputs: Mapping[str, Any] | None,
    ) -> list[Part]:
        sig = as_signature(signature)
        plan = self._plan(sig)
        values = self._check_inputs(sig, plan, inputs)
        parts = [plan.system_part]
        if demos:
            parts.extend(self.demo_parts(sig, demos))
        for name in plan.history:
            if name in values:
                parts.extend(self.history_parts(sig, values[name]))
        request = self._user_content(sig, plan, values, "", main_request=True)
        parts.append(Part("user", "user", request))
        return parts

    def parse(self, signature: SignatureLike, completion: str) -> dict[str, Any]:
        """Read the signature's outputs from a completion.

        Reasoning drafts (``<think>...</think>``) and a code fence around everything are set
        aside, the adapter's `locate` finds each output's text, and the shared value rules
        turn it into the declared type, leniently only where exactly one reading exists.

        Returns:
            A dict of every output field (in signature order) to its typed value.

        Raises:
            ParseError: A required output is missing, cut off, or does not fit its type or
                constraints; the error lists every such field with the offending text.
        """
        values, _ = self._parse_located(as_signature(signature), completion)
        return values

    @abc.abstractmethod
    def locate(self, signature: type[Signature], text: str) -> Found | None:
        """Find where each output's text is in a (cleaned) completion, or ``None``."""

    def _parse_located(self, sig: type[Signature], completion: str) -> tuple[dict[str, Any], str]:
        """The typed outputs and which reader found them (``"sections"``, ``"JSON"``...)."""
        found = self.locate(sig, clean(completion))
        if found is None:
            problem = (
                "found no outputs: no [[ ## field ## ]] sections, JSON object or "
                "`Field: value` lines naming them"
            )
            return self._finish(sig, completion, {}, {}, problem), ""
        plan = self._plan(sig)
        values: dict[str, Any] = {}
        invalid: dict[str, tuple[str, str]] = {}
        for name in found.cut_off:
            invalid[name] = (
                _shown(found.texts.get(name, "")),
                "the completion is cut off here; the value may be incomplete",
            )
        for name, raw in found.texts.items():
            if name in found.cut_off or raw is None:  # JSON null: the output was not given
                continue
            try:
                values[name] = plan.output_infos[name].parse_json_value(raw)
            except ValueError as exc:
                invalid[name] = (_shown(raw), str(exc))
        return self._finish(sig, completion, values, invalid), found.how

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

    def __call__(
        self,
        lm: BaseLM,
        lm_kwargs: Mapping[str, Any],
        signature: SignatureLike,
        demos: Iterable[Mapping[str, Any]],
        inputs: Mapping[str, Any],
        *,
        max_prompt_tokens: int | None = None,
        truncation_step: TruncationStep = 0,
    ) -> AdapterResult:
        """Format, call the model, and parse every choice.

        With ``max_prompt_tokens`` the history is truncated to fit first. When the provider
        says the context window was exceeded, the prompt is truncated to the model's input
        limit (``lm.max_input_tokens``) and sent once more; the result's ``truncation`` says so.

        Raises:
            ParseError: A completion cannot be read (after the fallback, if any). When the
                model hit its token limit, the error says so (``truncated``).
            LMError: The provider failed; never answered with a fallback.
            TruncationError: The parts that cannot be dropped exceed the budget.
        """
        call = self._prepare_call(
            lm, lm_kwargs, signature, demos, inputs, max_prompt_tokens, truncation_step
        )
        try:
            response = lm(call.messages, **call.kwargs)
        except ContextWindowExceededError as exc:
            call = call.fitted_to_context(lm, exc)
            response = lm(call.messages, **call.kwargs)
        try:
            return self._read(call.sig, response, call.truncation)
        except _NeedsJSONRequestError as need:
            try:
                result = self._fallback_adapter()(
                    lm,
                    lm_kwargs,
                    call.sig,
                    call.demos,
                    inputs,
                    max_prompt_tokens=max_prompt_tokens,
                    truncation_step=truncation_step,
                )
            except ParseError as error:
                raise error from need.error
            return result.after(response)

    async def acall(
        self,
        lm: BaseLM,
        lm_kwargs: Mapping[str, Any],
        signature: SignatureLike,
        demos: Iterable[Mapping[str, Any]],
        inputs: Mapping[str, Any],
        *,
        max_prompt_tokens: int | None = None,
        truncation_step: TruncationStep = 0,
    ) -> AdapterResult:
        """Async form of calling the adapter."""
        call = self._prepare_call(
            lm, lm_kwargs, signature, demos, inputs, max_prompt_tokens, truncation_step
        )
        try:
            response = await lm.acall(call.messages, **call.kwargs)
        except ContextWindowExceededError as exc:
            call = call.fitted_to_context(lm, exc)
            response = await lm.acall(call.messages, **call.kwargs)
        try:
            return self._read(call.sig, response, call.truncation)
        except _NeedsJSONRequestError as need:
            try:
                result = await self._fallback_adapter().acall(
                    lm,
                    lm_kwargs,
                    call.sig,
                    call.demos,
                    inputs,
                    max_prompt_tokens=max_prompt_tokens,
                    truncation_step=truncation_step,
                )
            except ParseError as error:
                raise error from need.error
            return result.after(response)

    def _prepare_call(
        self,
        lm: BaseLM,
        lm_kwargs: Mapping[str, Any],
        signature: SignatureLike,
        demos: Iterable[Mapping[str, Any]],
        inputs: Mapping[str, Any],
        max_prompt_tokens: int | None,
        truncation_step: TruncationStep,
    ) -> _Call:
        sig = as_signature(signature)
        demo_list = list(demos)
        prompt = self.render(sig, demo_list, inputs)
        call = _Call(
            sig, demo_list, prompt, prompt, self.lm_kwargs(lm, sig, lm_kwargs), truncation_step
        )
        if max_prompt_tokens is not None:
            call = call.truncated("max_prompt_tokens", max_prompt_tokens)
        return call

    def lm_kwargs(
        self, lm: BaseLM, signature: type[Signature], lm_kwargs: Mapping[str, Any]
    ) -> dict[str, Any]:
        """The request parameters for this adapter (JSONAdapter adds ``response_format``)."""
        return dict(lm_kwargs)

    def _read(
        self, sig: type[Signature], response: LMResponse, truncation: Truncation | None = None
    ) -> AdapterResult:
        outputs: list[dict[str, Any]] = []
        path: Path = self._own_path
        for completion in response.completions:
            try:
                values, how = self._parse_located(sig, completion.text)
                outputs.append(values)
                if how == "JSON" and path == "chat":
                    path = "json_reparse"  # ChatAdapter read a JSON answer: no new request
                continue
            except ParseError as error:
                if completion.truncated:
                    raise error.with_truncation() from None
                values = self._recover(sig, completion.text, error)
            outputs.append(values)
            path = "json_reparse"
        return AdapterResult(outputs, path, [response], truncation)

    @property
    def _own_path(self) -> Path:
        return "chat"

    def _recover(self, sig: type[Signature], text: str, error: ParseError) -> dict[str, Any]:
        """Read a completion that `parse` refused, or raise; the base adapter cannot."""
        raise error

    def _fallback_adapter(self) -> Adapter:
        raise NotImplementedError(f"{type(self).__name__} has no fallback adapter")

    # -- pieces subclasses may override -----------------------------------------------------

    def format_system_message(self, signature: type[Signature]) -> str:
        """The system message: field descriptions, field structure and the task."""
        return "\n".join(
            [
                self.format_field_description(signature),
                self.format_field_structure(signature),
                self.format_task_description(signature),
            ]
        )

    def format_field_description(self, signature: type[Signature]) -> str:
        """The ``Your input fields are: ...`` block."""
        inputs = {n: f for n, f in signature.input_fields.items() if f.annotation is not History}
        return (
            f"Your input fields are:\n{_describe(inputs)}\n"
            f"Your output fields are:\n{_describe(signature.output_fields)}"
        )

    @abc.abstractmethod
    def format_field_structure(self, signature: type[Signature]) -> str:
        """The part of the system message that shows how messages are laid out."""

    def format_task_description(self, signature: type[Signature]) -> str:
        """``In adhering to this structure, your objective is:`` and the instructions."""
        lines = textwrap.dedent(signature.instructions).splitlines()
        body = "".join("\n        " + line for line in lines)
        return f"In adhering to this structure, your objective is: {body}"

    def format_input_structure(self, signature: type[Signature]) -> str:
        """One ``[[ ## name ## ]]`` / ``{name}`` block per input (`History` inputs excepted)."""
        return "\n\n".join(
            f"[[ ## {name} ## ]]\n{{{name}}}"
            for name, f in signature.input_fields.items()
            if f.annotation is not History
        )

    @staticmethod
    def format_type_requirement(field: SignatureField) -> str:
        """`` (must be formatted as a valid Python T)`` for a non-``str`` output, else ''."""
        if field.annotation is str:
            return ""
        return f" (must be formatted as a valid Python {type_info(field.annotation).name})"

    @abc.abstractmethod
    def user_message_output_requirements(self, signature: type[Signature]) -> str:
        """The reminder ending each request: which outputs to write, in which format."""

    def format_user_message_content(
        self,
        signature: type[Signature],
        inputs: Mapping[str, Any],
        *,
        prefix: str = "",
        main_request: bool = False,
    ) -> str:
        """A user message: the given inputs as sections, then the reminder on requests."""
        return self._user_content(signature, self._plan(signature), inputs, prefix, main_request)

    def _user_content(
        self,
        signature: type[Signature],
        plan: _Plan,
        inputs: Mapping[str, Any],
        prefix: str,
        main_request: bool,
    ) -> str:
        if type(self).format_user_message_content is not Adapter.format_user_message_content:
            # A subclass changed how user messages look: use its method.
            return self.format_user_message_content(
                signature, inputs, prefix=prefix, main_request=main_request
            )
        parts = [prefix]
        formats = plan.input_formats
        for name, _, is_str in plan.inputs:
            if name in inputs:
                value = inputs[name]
                text = (
                    value
                    if type(value) is str
                    else input_text(value, str_field=is_str, as_class=formats.get(name))
                )
                parts.append(f"[[ ## {name} ## ]]\n{text}")
        if main_request:
            parts.append(plan.reminder)
        return "\n\n".join(parts).strip()

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
        return [{"role": p.role, "content": p.content} for p in self.demo_parts(signature, demos)]

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
                user = self.format_user_message_content(signature, demo, prefix=prefix)
                assistant = self.format_assistant_message_content(signature, demo, missing)
                return (
                    Part(f"demo_{number}_user", "user", user),
                    Part(f"demo_{number}_assistant", "assistant", assistant),
                )

            key = partial(_demo_key, number, missing, demo)
            parts.extend(plan.rendered.get(key, render))
        return parts

    def format_history(self, signature: type[Signature], history: History) -> list[Message]:
        """The turns of a conversation history as messages (see `history_parts`)."""
        return [
            {"role": p.role, "content": p.content} for p in self.history_parts(signature, history)
        ]

    def history_parts(self, signature: type[Signature], history: History) -> list[Part]:
        """The turns of a conversation history, oldest first, as truncatable parts.

        A turn's inputs become a user part (with the reminder) and its outputs an assistant
        part; a turn without outputs gives only the user part, one without inputs only the
        assistant part. Nothing is padded with ``None``. Every part has truncation priority 1.
        """
        plan = self._plan(signature)
        parts: list[Part] = []
        for number, turn in enumerate(history.messages, 1):

            def render(turn: Mapping[str, Any] = turn, number: int = number) -> tuple[Part, ...]:
                rendered: list[Part] = []
                if any(name in turn for name, _, _ in plan.inputs):
                    content = self.format_user_message_content(signature, turn, main_request=True)
                    rendered.append(Part(f"history_{number}_user", "user", content, 1))
                if any(name in turn for name, _, _ in plan.outputs):
                    content = self.format_assistant_message_content(signature, turn)
                    rendered.append(Part(f"history_{number}_assistant", "assistant", content, 1))
                return tuple(rendered)

            parts.extend(plan.rendered.get(partial(_history_key, number, turn), render))
        return parts

    # -- shared machinery -------------------------------------------------------------------

    def _plan(self, sig: type[Signature]) -> _Plan:
        key = (type(self), "plan")
        cache = sig.__structio_cache__
        plan = cache.get(key)
        if plan is None:
            plan = cache[key] = _Plan(self, sig)
        return plan

    def _check_inputs(
        self, sig: type[Signature], plan: _Plan, inputs: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        if (
            type(inputs) is dict
            and not plan.history
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
            raise FormatError(_unknown_inputs_message(sig, unknown))
        missing = [name for name in plan.required_inputs if name not in values]
        if missing:
            names = ", ".join(f"`{n}`" for n in missing)
            raise FormatError(
                f"missing required input(s) {names} for {sig.__name__} ({sig.signature}); "
                f"its inputs are: {_names(sig.input_fields)}"
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
        return values

    def _check_outputs(self, sig: type[Signature], outputs: Mapping[str, Any]) -> dict[str, Any]:
        if not isinstance(outputs, Mapping):
            raise FormatError(
                f"outputs must be a dict of field name to value, not {type(outputs).__name__}"
            )
        unknown = [name for name in outputs if name not in sig.output_fields]
        if unknown:
            names = ", ".join(f"`{n}`" for n in unknown)
            raise FormatError(
                f"{names} {'is not an output' if len(unknown) == 1 else 'are not outputs'} of "
                f"{sig.__name__} ({sig.signature}); its outputs are: {_names(sig.output_fields)}"
            )
        values, missing = _fill_omitted_outputs(sig, outputs)
        if missing:
            raise FormatError(
                f"missing output(s) {', '.join(f'`{n}`' for n in missing)} for {sig.__name__} "
                f"({sig.signature}); a finetuning target needs every required output"
            )
        return values

    def _finish(
        self,
        sig: type[Signature],
        completion: str,
        values: Mapping[str, Any],
        invalid: Mapping[str, tuple[str, str]],
        problem: str | None = None,
    ) -> dict[str, Any]:
        """Fill defaults and ``None`` for omitted optional outputs, or raise ParseError."""
        result, missing = _fill_omitted_outputs(sig, values, skip=invalid)
        if missing or invalid or problem:
            if not completion.strip():
                problem = "the completion is empty"
            raise ParseError(
                adapter=type(self).__name__,
                signature=sig,
                completion=completion,
                parsed=values,
                missing=missing,
                invalid=invalid,
                problem=problem,
            )
        return result


def _fill_omitted_outputs(
    sig: type[Signature], values: Mapping[str, Any], skip: Mapping[str, Any] | None = None
) -> tuple[dict[str, Any], list[str]]:
    """Outputs in signature order, omitted ones filled from defaults or ``None``.

    Returns the filled values and the names of required outputs that are still missing;
    names in ``skip`` (outputs already known to be invalid) are neither filled nor missing.
    """
    result: dict[str, Any] = {}
    missing: list[str] = []
    for name, field in sig.output_fields.items():
        if name in values:
            result[name] = values[name]
        elif skip and name in skip:
            continue
        elif field.has_default:
            result[name] = field.get_default()
        elif field.admits_none:
            result[name] = None
        else:
            missing.append(name)
    return result, missing


def _shown(raw: Any) -> str:
    """A found value as the text an error quotes."""
    return raw if isinstance(raw, str) else json.dumps(jsonable(raw), ensure_ascii=False)


def bare_value(signature: type[Signature], text: str) -> Found | None:
    """The whole text as the value of a single non-``str`` output (``42``, ``Yes.``).

    A ``str`` output never takes the whole text this way: a refusal would become its value.
    """
    outputs = signature.output_fields
    if len(outputs) != 1 or not text.strip():
        return None
    name, field = next(iter(outputs.items()))
    if field.annotation is str:
        return None
    return Found(texts={name: text}, how="bare value")


def _demo_key(number: int, missing: str | None, demo: Mapping[str, Any]) -> Hashable:
    return ("demo", number, missing, freeze_fields(demo))


def _history_key(number: int, turn: Mapping[str, Any]) -> Hashable:
    return ("history", number, freeze_fields(turn))


def _describe(fields: Mapping[str, SignatureField]) -> str:
    lines = []
    for i, (name, field) in enumerate(fields.items(), 1):
        line = f"{i}. `{name}` ({type_info(field.annotation).name}): {field.desc or ''}"
        if field.constraints:
            line += f"\nConstraints: {field.constraints_text}"
        lines.append(line)
    return "\n".join(lines).strip()


def _names(fields: Mapping[str, Any]) -> str:
    return ", ".join(f"`{n}`" for n in fields) or "(none)"


def _unknown_inputs_message(sig: type[Signature], unknown: Sequence[str]) -> str:
    import difflib

    parts = []
    for name in unknown:
        if name in sig.output_fields:
            parts.append(f"`{name}` is an output of {sig.__name__}, not an input")
            continue
        close = difflib.get_close_matches(name, list(sig.input_fields), n=1)
        guess = f" (did you mean `{close[0]}`?)" if close else ""
        parts.append(f"`{name}` is not an input of {sig.__name__}{guess}")
    return "; ".join(parts) + f". Its inputs are: {_names(sig.input_fields)} ({sig.signature})"


@functools.lru_cache(maxsize=256)
def _from_spec(spec: str) -> type[Signature]:
    # Cached by the text alone, so only builtin, typing and structio names may resolve here;
    # a spec naming user classes must be built with Signature(...) where they are in scope.
    return _make_signature(spec, None, name=None, custom_types=None, caller_ns={}, base=Signature)


def as_signature(signature: SignatureLike) -> type[Signature]:
    """Accept a signature class or a string spec (specs are parsed once and cached)."""
    if isinstance(signature, SignatureMeta):
        return signature
    if isinstance(signature, str):
        return _from_spec(signature)
    raise TypeError(
        "expected a Signature class or a string spec such as 'question -> answer', "
        f"not {type(signature).__name__}"
    )
