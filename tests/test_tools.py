"""Tools, tool calls and their execution: DSPy's text and schemas, validation, lenient input."""

from __future__ import annotations

import asyncio
import copy
import functools
import json
import pickle
import sys
from typing import Annotated, Any

import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field, TypeAdapter

from structio.exceptions import ToolCallError, UsageError
from structio.tools import Tool, ToolCall, ToolCalls

# --- tools used below (module level: their hints resolve under `from __future__`) ----------


def get_weather(city: str, unit: str = "C") -> str:
    """Get the weather for a city."""
    return f"{city}:{unit}"


def search(query: str, limit: int = 3) -> list[str]:
    """Search the web.

    Args:
        query: What to look for,
            in plain words.
        limit (int): How many results.

    Returns:
        The titles found.
    """
    return [f"{query}-{i}" for i in range(limit)]


def noargs() -> str:
    return "done"


class Location(BaseModel):
    city: str
    zip_code: int = 0


def locate(where: Location, tags: list[str] | None = None) -> str:
    """Describe a location.

    Args:
        where: The place.
    """
    assert isinstance(where, Location)
    return f"{where.city}/{where.zip_code}/{tags}"


def reserved_names(json: int, model_name: str = "m", _hidden: bool = False) -> tuple[Any, ...]:
    """Parameters whose names pydantic reserves."""
    return (json, model_name, _hidden)


def annotated(
    n: Annotated[int, Field(ge=0, description="A count.")],
    loose=None,
) -> Any:
    """Annotated parameters."""
    return (n, loose)


async def fetch(url: str, retries: int = 0) -> str:
    """Fetch a page."""
    await asyncio.sleep(0)
    return f"page {url} {retries}"


def broken(x: int) -> None:
    """Always fails."""
    raise KeyError(x)


def needs_opaque(value: Opaque) -> None:
    """A parameter of a type pydantic cannot validate."""


class Opaque:
    pass


WEATHER_TEXT = (
    "get_weather, whose description is <desc>Get the weather for a city.</desc>. It takes "
    "arguments {'city': {'type': 'string'}, 'unit': {'type': 'string', 'default': 'C'}}."
)
WEATHER_OPENAI = (
    '{"type": "function", "function": {"name": "get_weather", "description": "Get the weather '
    'for a city.", "parameters": {"type": "object", "properties": {"city": {"type": "string"}, '
    '"unit": {"type": "string", "default": "C"}}, "required": ["city"]}}}'
)


def message(exc: pytest.ExceptionInfo[BaseException]) -> str:
    return str(exc.value)


# --- Tool: DSPy's golden text and schemas -------------------------------------------------


def test_str_and_format_are_dspys_text() -> None:
    tool = Tool(get_weather)
    assert str(tool) == WEATHER_TEXT
    assert format(tool, "") == WEATHER_TEXT
    assert f"{tool}" == WEATHER_TEXT


def test_to_openai_is_dspys_function_call_byte_for_byte() -> None:
    tool = Tool(get_weather)
    assert json.dumps(tool.to_openai()) == WEATHER_OPENAI
    assert tool.to_openai() == json.loads(WEATHER_OPENAI)


def test_args_and_parameters_of_get_weather() -> None:
    tool = Tool(get_weather)
    assert tool.args == {"city": {"type": "string"}, "unit": {"type": "string", "default": "C"}}
    assert list(tool.args["unit"]) == ["type", "default"]
    assert json.dumps(tool.parameters) == (
        '{"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": '
        '"string", "default": "C"}}, "required": ["city"]}'
    )


def test_args_is_a_copy() -> None:
    tool = Tool(get_weather)
    tool.args["city"]["type"] = "integer"
    tool.parameters["properties"].clear()
    assert str(tool) == WEATHER_TEXT


def test_basic_attributes() -> None:
    tool = Tool(get_weather)
    assert tool.func is get_weather
    assert tool.name == "get_weather"
    assert tool.description == "Get the weather for a city."
    assert tool.is_async is False
    assert Tool(fetch).is_async is True
    assert repr(tool) == "Tool(get_weather)"
    assert tool.args_model.__name__ == "get_weather_args"


def test_name_and_description_can_be_given() -> None:
    tool = Tool(get_weather, name="weather", description="Weather now.")
    assert tool.to_openai()["function"]["name"] == "weather"
    assert str(tool).startswith("weather, whose description is <desc>Weather now.</desc>.")


def test_a_tool_without_docstring_reads_as_dspy_writes_it() -> None:
    tool = Tool(noargs)
    assert tool.description == ""
    assert str(tool) == "noargs. It takes arguments {}."
    assert tool.parameters == {"type": "object", "properties": {}, "required": []}
    assert tool() == "done"


# --- docstrings -------------------------------------------------------------------------


def test_the_docstring_is_the_description_as_written_as_dspy_shows_it() -> None:
    tool = Tool(search)
    assert tool.description == search.__doc__
    # The model reads what each argument means in the docstring; the schemas stay bare.
    assert tool.args == {"query": {"type": "string"}, "limit": {"type": "integer", "default": 3}}
    assert list(tool.args["limit"]) == ["type", "default"]
    # Python 3.13 strips a docstring's indentation when it compiles it; DSPy shows the
    # docstring as the running Python gives it, and so does structio.
    assert search.__doc__ is not None
    one_line = search.__doc__.replace("\n", "  ")
    assert str(tool).startswith(f"search, whose description is <desc>{one_line}</desc>. ")
    assert one_line.startswith("Search the web.  ")
    assert "\n" not in str(tool)
    assert tool.to_openai()["function"]["description"] == search.__doc__
    # The Args section still documents the arguments model, for validation messages.
    assert tool.args_model.model_fields["query"].description == "What to look for, in plain words."


def test_a_multi_line_docstring_is_one_line_in_the_prompt() -> None:
    def spread() -> None:
        """First line
        goes on here."""

    tool = Tool(spread)
    # Indented as written before Python 3.13, which strips the indentation at compile time.
    indent = " " * 8 if sys.version_info < (3, 13) else ""
    assert tool.description == spread.__doc__ == f"First line\n{indent}goes on here."
    assert str(tool) == (
        f"spread, whose description is <desc>First line  {indent}goes on here.</desc>. "
        "It takes arguments {}."
    )


def test_annotated_field_descriptions_and_constraints() -> None:
    tool = Tool(annotated)
    assert tool.args["n"] == {"type": "integer", "minimum": 0, "description": "A count."}
    assert tool.args["loose"] == {"default": None}  # no annotation: any value
    assert tool(n=2, loose=[1]) == (2, [1])
    with pytest.raises(ToolCallError) as exc:
        tool(n=-1)
    assert "argument `n`: Input should be greater than or equal to 0 (got -1)" in message(exc)


# --- pydantic-model parameters and reserved names -----------------------------------------


def test_a_model_parameter_is_inlined_with_its_titles_and_arrives_as_an_instance() -> None:
    tool = Tool(locate)
    location = {
        "properties": {
            "city": {"title": "City", "type": "string"},
            "zip_code": {"default": 0, "title": "Zip Code", "type": "integer"},
        },
        "required": ["city"],
        "title": "Location",
        "type": "object",
    }
    assert tool.args["where"] == location
    params = tool.parameters
    assert params["required"] == ["where"]
    assert "$defs" not in params
    assert params["properties"]["tags"] == {
        "anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "null"}],
        "default": None,
    }
    assert tool(where={"city": "Paris"}) == "Paris/0/None"
    assert tool.validate_args({"where": {"city": "Oslo", "zip_code": "7"}}) == {
        "where": Location(city="Oslo", zip_code=7)
    }


def test_a_nested_model_in_a_list_is_inlined() -> None:
    class Book(BaseModel):
        title: str

    def shelve(books: list[Book]) -> None:
        """Shelve books."""

    shelve.__annotations__ = {"books": list[Book], "return": None}
    schema = Tool(shelve).parameters
    assert schema["properties"]["books"] == {
        "items": {
            "properties": {"title": {"title": "Title", "type": "string"}},
            "required": ["title"],
            "title": "Book",
            "type": "object",
        },
        "type": "array",
    }


def test_parameters_named_like_pydantic_attributes() -> None:
    tool = Tool(reserved_names)
    assert list(tool.args) == ["json", "model_name", "_hidden"]
    assert tool.parameters["required"] == ["json"]
    assert tool(json="4", _hidden=True) == (4, "m", True)
    assert tool.validate_args({"json": 1, "model_name": "x"}) == {"json": 1, "model_name": "x"}
    with pytest.raises(ToolCallError) as exc:
        tool(_hidden=True)
    assert message(exc) == "reserved_names: argument `json`: Field required"


# --- validation and calling ---------------------------------------------------------------


def test_calling_validates_then_calls_with_defaults() -> None:
    tool = Tool(search)
    assert tool(query="cats") == ["cats-0", "cats-1", "cats-2"]
    assert tool(query="cats", limit="1") == ["cats-0"]


def test_validate_args_gives_only_the_arguments_given() -> None:
    tool = Tool(get_weather)
    assert tool.validate_args({"city": "Paris"}) == {"city": "Paris"}
    assert tool.validate_args({"unit": "F", "city": "Rome"}) == {"city": "Rome", "unit": "F"}


def test_a_missing_argument_is_named() -> None:
    with pytest.raises(ToolCallError) as exc:
        Tool(get_weather)()
    assert message(exc) == "get_weather: argument `city`: Field required"
    assert exc.value.tool == "get_weather"


def test_each_bad_argument_is_named_with_pydantics_reason() -> None:
    with pytest.raises(ToolCallError) as exc:
        Tool(get_weather)(unit=5)
    text = message(exc)
    assert "argument `city`: Field required" in text
    assert "argument `unit`: Input should be a valid string (got 5)" in text


def test_an_unknown_argument_lists_the_real_ones() -> None:
    with pytest.raises(ToolCallError) as exc:
        Tool(get_weather).validate_args({"city": "Paris", "units": "F"})
    assert message(exc) == (
        "get_weather: argument `units`: Extra inputs are not permitted; "
        "get_weather takes `city`, `unit`"
    )
    with pytest.raises(ToolCallError, match="noargs takes no arguments"):
        Tool(noargs)(x=1)


def test_a_nested_bad_value_is_located() -> None:
    with pytest.raises(ToolCallError) as exc:
        Tool(locate)(where={"city": 3})
    assert "argument `where.city`: Input should be a valid string (got 3)" in message(exc)


@pytest.mark.parametrize("args", [None, [("city", "x")], "city=Paris", 3])
def test_arguments_that_are_not_a_mapping(args: Any) -> None:
    with pytest.raises(ToolCallError, match="must be an object"):
        Tool(get_weather).validate_args(args)


def test_non_string_keys_are_refused() -> None:
    with pytest.raises(ToolCallError, match="Keys should be strings"):
        Tool(get_weather).validate_args({"city": "x", 1: 2})


def test_the_functions_own_exceptions_propagate_unchanged() -> None:
    with pytest.raises(KeyError):
        Tool(broken)(x=1)


def test_tool_call_error_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="argument `x`"):
        Tool(broken)(x="no")


# --- async tools --------------------------------------------------------------------------


def test_an_async_tool_is_awaited() -> None:
    tool = Tool(fetch)
    assert asyncio.run(tool.acall(url="a", retries="2")) == "page a 2"


def test_an_async_tool_called_synchronously_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match=r"fetch is async: use await tool\.acall") as info:
        Tool(fetch)(url="a")
    assert "configure(allow_tool_async_sync_conversion=True)" in str(info.value)


def test_a_sync_call_runs_an_async_tool_when_the_reader_allows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The hook the settings register (`set_sync_conversion_reader`), read on each call."""
    from structio.tools import tool as tool_module

    allowed = [True]
    monkeypatch.setattr(tool_module, "_sync_conversion", lambda: allowed[0])
    tool = Tool(fetch)
    assert tool(url="a", retries="2") == "page a 2"  # validated, then run to its end
    call = ToolCall(name="fetch", args={"url": "u"})
    assert call.execute([fetch]) == "page u 0"
    assert call.result == "page u 0"
    with pytest.raises(ToolCallError, match="url"):
        tool(retries=1)
    allowed[0] = False
    with pytest.raises(UsageError, match="fetch is async"):
        tool(url="a")


def test_a_sync_call_inside_a_running_loop_runs_the_tool_in_another_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import contextvars
    import threading

    from structio.tools import tool as tool_module

    monkeypatch.setattr(tool_module, "_sync_conversion", lambda: True)
    seen = contextvars.ContextVar("seen", default="unset")
    threads: list[int] = []

    async def probe() -> str:
        threads.append(threading.get_ident())
        await asyncio.sleep(0)
        return seen.get()

    async def main() -> str:
        seen.set("caller's")
        return Tool(probe)()  # a sync call from async code: asyncio.run cannot nest

    assert asyncio.run(main()) == "caller's"  # the caller's context goes with it
    assert threads != [threading.get_ident()]


def test_acall_calls_a_sync_tool_directly_and_validates() -> None:
    tool = Tool(get_weather)
    assert asyncio.run(tool.acall(city="Oslo")) == "Oslo:C"
    with pytest.raises(ToolCallError, match="argument `city`"):
        asyncio.run(tool.acall())


def test_a_callable_object_with_async_call_is_async() -> None:
    class Pager:
        async def __call__(self, page: int) -> int:
            return page + 1

    tool = Tool(Pager())
    assert tool.is_async
    assert tool.name == "Pager"
    assert asyncio.run(tool.acall(page="1")) == 2


def test_a_partial_keeps_its_functions_name_and_docs() -> None:
    tool = Tool(functools.partial(search, limit=1))
    assert tool.name == "search"
    assert tool.description == search.__doc__
    assert tool(query="q") == ["q-0"]


# --- functions that cannot be tools -------------------------------------------------------


def test_var_args_kwargs_and_positional_only_are_refused() -> None:
    def star(*items: int) -> None: ...

    def stars(**options: int) -> None: ...

    def positional(a: int, /, b: int) -> None: ...

    with pytest.raises(UsageError, match=r"`items` \(\*items\)"):
        Tool(star)
    with pytest.raises(UsageError, match=r"`options` \(\*\*options\)"):
        Tool(stars)
    with pytest.raises(UsageError, match=r"`a` \(positional-only\)"):
        Tool(positional)


def test_hints_that_cannot_be_resolved_are_a_usage_error() -> None:
    class Local(BaseModel):
        x: int

    def uses_local(value: Local) -> None: ...

    with pytest.raises(UsageError, match="cannot resolve its type hints"):
        Tool(uses_local)


def test_a_type_pydantic_cannot_validate_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="needs_opaque: its arguments cannot be validated"):
        Tool(needs_opaque)


def test_not_a_callable() -> None:
    with pytest.raises(UsageError, match="needs a callable"):
        Tool(3)  # type: ignore[arg-type]


# --- identity, copies, pickling -----------------------------------------------------------


def test_equality_and_hash() -> None:
    assert Tool(get_weather) == Tool(get_weather)
    assert hash(Tool(get_weather)) == hash(Tool(get_weather))
    assert Tool(get_weather) != Tool(get_weather, name="other")
    assert Tool(get_weather) != Tool(get_weather, description="Other.")
    assert Tool(get_weather) != Tool(search)
    assert len({Tool(get_weather), Tool(get_weather), Tool(search)}) == 2
    assert Tool(get_weather) != "get_weather"


def test_copies_and_pickles() -> None:
    tool = Tool(get_weather, name="w")
    assert copy.deepcopy(tool) is tool
    again = pickle.loads(pickle.dumps(tool))  # noqa: S301  # bytes this test just wrote
    assert again == tool
    assert str(again) == str(tool)


# --- Tool as a pydantic type --------------------------------------------------------------


def test_type_adapter_wraps_functions_and_dumps_text_in_json() -> None:
    adapter = TypeAdapter(list[Tool])
    tools = adapter.validate_python([Tool(get_weather), search])
    assert tools == [Tool(get_weather), Tool(search)]
    assert json.loads(adapter.dump_json(tools)) == [str(Tool(get_weather)), str(Tool(search))]
    assert adapter.dump_python(tools) == tools
    assert adapter.dump_python(tools, mode="json") == [str(t) for t in tools]
    assert adapter.json_schema() == {"type": "array", "items": {"type": "string"}}


def test_type_adapter_refuses_what_is_not_callable() -> None:
    with pytest.raises(pydantic.ValidationError, match="expected a Tool or a function"):
        TypeAdapter(list[Tool]).validate_python(["get_weather"])


def test_a_model_with_tools() -> None:
    class Request(BaseModel):
        tools: list[Tool]

    request = Request(tools=[get_weather])
    assert request.tools[0] == Tool(get_weather)
    assert json.loads(request.model_dump_json()) == {"tools": [WEATHER_TEXT]}


# --- ToolCalls: schema and description ----------------------------------------------------


def test_toolcalls_json_schema_is_dspys() -> None:
    schema = ToolCalls.model_json_schema()
    assert set(schema) == {"$defs", "properties", "required", "title", "type"}
    assert schema["type"] == "object"
    assert schema["$defs"] == {
        "ToolCall": {
            "type": "object",
            "properties": {
                "args": {"type": "object", "additionalProperties": True, "title": "Args"},
                "name": {"type": "string", "title": "Name"},
            },
            "required": ["name", "args"],
            "title": "ToolCall",
        }
    }
    assert schema["properties"] == {
        "tool_calls": {
            "type": "array",
            "items": {"$ref": "#/$defs/ToolCall"},
            "title": "Tool Calls",
        }
    }
    assert schema["required"] == ["tool_calls"]
    assert schema["title"] == "ToolCalls"


def test_prompt_description_is_dspys() -> None:
    assert ToolCalls.prompt_description() == (
        "Tool calls must be a JSON object with `tool_calls`, a list of calls. Each call must "
        'include `name` and `args`. Example: {"tool_calls": [{"name": "search", "args": '
        '{"query": "cats"}}]}'
    )


# --- ToolCalls: lenient input --------------------------------------------------------------

EXPECTED = ToolCalls(tool_calls=[ToolCall(name="get_weather", args={"city": "Paris"})])


@pytest.mark.parametrize(
    "data",
    [
        {"tool_calls": [{"name": "get_weather", "args": {"city": "Paris"}}]},
        [{"name": "get_weather", "args": {"city": "Paris"}}],
        ({"name": "get_weather", "args": {"city": "Paris"}},),
        {"name": "get_weather", "args": {"city": "Paris"}},
        {"name": "get_weather", "arguments": {"city": "Paris"}},
        {"name": "get_weather", "args": '{"city": "Paris"}'},
        {"tool_calls": [{"name": "get_weather", "arguments": '{"city": "Paris"}'}]},
        {"function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}},
        {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
    ],
)
def test_every_lenient_form_reads_the_same(data: Any) -> None:
    assert ToolCalls.model_validate(data) == EXPECTED


def test_openai_form_keeps_the_id() -> None:
    calls = ToolCalls.model_validate(
        [
            {
                "id": "call_abc",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            }
        ]
    )
    assert calls[0] == ToolCall(name="get_weather", args={"city": "Paris"}, id="call_abc")


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ("get_weather(city='Paris')", "valid dictionary or instance of ToolCalls"),
        (3, "valid dictionary"),
        (None, "valid dictionary"),
        ({}, "Field required"),
        ({"calls": []}, "Field required"),
        ({"tool_calls": [], "extra": 1}, "not `extra`"),
        ({"tool_calls": "get_weather"}, "valid list"),
        ({"tool_calls": {"name": "a", "args": {}}}, "valid list"),
        ([{"name": "a"}], "Field required"),
        ([{"args": {}}], "Field required"),
        ([{"name": "a", "args": {}, "kwargs": {}}], "not `kwargs`"),
        ([{"name": "a", "args": {}, "arguments": {}}], "both `args` and `arguments`"),
        ([{"name": "a", "args": "[1, 2]"}], "must be a JSON object, got list"),
        ([{"name": "a", "args": "{city: Paris}"}], "are not valid JSON"),
        ([{"name": "a", "args": None}], "valid dictionary"),
        ([{"name": 3, "args": {}}], "valid string"),
        ([{"name": "a", "args": {1: 2}}], "valid string"),
        ([{"type": "tool", "function": {"name": "a", "arguments": "{}"}}], "type 'function'"),
        ([{"function": "a"}], "`function` must be an object"),
        ([{"function": {"name": "a", "arguments": "{}", "x": 1}}], "not `x`"),
        ([{"function": {"name": "a"}}], "has no `arguments`"),
        ([{"function": {"name": "a", "arguments": "1"}}], "must be a JSON object, got int"),
        ([{"function": {"name": "a", "arguments": "{}"}, "name": "a"}], "not `name`"),
        ([{"id": 3, "function": {"name": "a", "arguments": "{}"}}], "valid string"),
        (["a"], "valid dictionary or instance of ToolCall"),
    ],
)
def test_anything_else_is_a_validation_error(data: Any, reason: str) -> None:
    with pytest.raises(pydantic.ValidationError) as exc:
        ToolCalls.model_validate(data)
    assert reason in str(exc.value)


def test_an_empty_list_is_no_calls() -> None:
    calls = ToolCalls.model_validate([])
    assert not calls
    assert len(calls) == 0
    assert calls.execute() == []


JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
CALL_KEYS = st.sampled_from(["tool_calls", "name", "args", "arguments", "id", "type", "function"])
JSON_DATA = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(CALL_KEYS | st.text(max_size=5), inner, max_size=4)
        | st.builds(json.dumps, inner)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(JSON_DATA)
def test_any_json_like_data_reads_or_is_a_validation_error(data: Any) -> None:
    try:
        calls = ToolCalls.model_validate(data)
    except pydantic.ValidationError:
        return
    assert all(isinstance(call, ToolCall) for call in calls)


# --- ToolCalls: construction and sequence behaviour ---------------------------------------


def test_the_ways_to_construct() -> None:
    calls = [{"name": "get_weather", "args": {"city": "Paris"}}]
    assert ToolCalls(calls) == EXPECTED
    assert ToolCalls(tool_calls=calls) == EXPECTED
    assert ToolCalls.from_calls(calls) == EXPECTED
    assert ToolCalls.from_calls([ToolCall(name="get_weather", args={"city": "Paris"})]) == EXPECTED
    with pytest.raises(UsageError):
        ToolCalls(calls, tool_calls=calls)


def test_sequence_behaviour() -> None:
    calls = ToolCalls([{"name": "a", "args": {}}, {"name": "b", "args": {"x": 1}}])
    assert len(calls) == 2
    assert [call.name for call in calls] == ["a", "b"]
    assert calls[1].args == {"x": 1}
    assert calls[-1].name == "b"
    assert [call.name for call in calls[1:]] == ["b"]
    assert isinstance(calls[1:], ToolCalls)
    assert bool(calls)
    assert not ToolCalls([])


def test_calls_dump_as_the_model_writes_them_without_ids() -> None:
    calls = ToolCalls([{"id": "c", "name": "a", "args": {"x": 1}}])
    assert calls.model_dump() == {"tool_calls": [{"name": "a", "args": {"x": 1}}]}
    assert calls[0].id == "c"  # kept on the call, and in to_openai()
    assert calls.to_openai()[0]["id"] == "c"


# --- OpenAI's wire form -------------------------------------------------------------------

OPENAI_CALLS = [
    {
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
    },
    {"id": "call_2", "type": "function", "function": {"name": "noargs", "arguments": "{}"}},
]


def test_from_openai_and_back() -> None:
    calls = ToolCalls.from_openai(OPENAI_CALLS)
    assert [(c.id, c.name, c.args) for c in calls] == [
        ("call_1", "get_weather", {"city": "Paris"}),
        ("call_2", "noargs", {}),
    ]
    assert calls.to_openai() == OPENAI_CALLS


def test_from_openai_reads_pydantic_objects() -> None:
    class Function(BaseModel):
        name: str
        arguments: str

    class Call(BaseModel):
        id: str
        type: str
        function: Function

    raw = Call(id="x", type="function", function=Function(name="a", arguments='{"q": 1}'))
    assert ToolCalls.from_openai([raw])[0] == ToolCall(id="x", name="a", args={"q": 1})


def test_to_openai_numbers_calls_without_ids_and_leaves_them_alone() -> None:
    calls = ToolCalls([{"name": "a", "args": {"x": "é"}}, {"id": "mine", "name": "b", "args": {}}])
    assert calls.to_openai() == [
        {
            "id": "call_0",
            "type": "function",
            "function": {"name": "a", "arguments": '{"x": "\\u00e9"}'},
        },
        {"id": "mine", "type": "function", "function": {"name": "b", "arguments": "{}"}},
    ]
    assert calls[0].id is None


def test_to_openai_writes_validated_python_values_as_json() -> None:
    calls = ToolCalls([{"name": "locate", "args": {"where": {"city": "Oslo"}}}]).bind([locate])
    assert calls[0].args == {"where": Location(city="Oslo")}
    assert json.loads(calls.to_openai()[0]["function"]["arguments"]) == {
        "where": {"city": "Oslo", "zip_code": 0}
    }


def test_from_openai_bad_json_names_the_tool_and_shows_the_text() -> None:
    bad = [{"id": "c", "type": "function", "function": {"name": "search", "arguments": "{'q': 1"}}]
    with pytest.raises(ToolCallError) as exc:
        ToolCalls.from_openai(bad)
    assert exc.value.tool == "search"
    assert "`search`" in message(exc)
    assert "{'q': 1" in message(exc)


@pytest.mark.parametrize(
    "raw",
    [
        {"name": "search", "args": {}},
        "search",
        {"id": "c", "type": "function", "function": {"name": "search", "arguments": "[]"}},
    ],
)
def test_from_openai_refuses_other_shapes(raw: Any) -> None:
    with pytest.raises(ToolCallError, match="tool call 0"):
        ToolCalls.from_openai([raw])


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.text(min_size=1, max_size=10),
            st.dictionaries(st.text(max_size=5), JSON_SCALARS.filter(lambda v: v == v)),
            st.none() | st.text(min_size=1, max_size=6),
        ),
        max_size=4,
    )
)
def test_openai_round_trip(items: list[tuple[str, dict[str, Any], str | None]]) -> None:
    calls = ToolCalls([ToolCall(name=n, args=a, id=i) for n, a, i in items])
    again = ToolCalls.from_openai(calls.to_openai())
    assert [(c.name, c.args) for c in again] == [(n, a) for n, a, _ in items]
    assert [c.id for c in again] == [
        i if i is not None else f"call_{k}" for k, (_, _, i) in enumerate(items)
    ]


# --- bind and execute ---------------------------------------------------------------------


def test_bind_validates_and_binds_so_execute_needs_no_tools() -> None:
    calls = ToolCalls(
        [
            {"id": "1", "name": "search", "args": {"query": "cats", "limit": "2"}},
            {"name": "get_weather", "args": {"city": "Paris"}},
        ]
    )
    bound = calls.bind([Tool(get_weather), search])
    assert bound is not calls
    assert bound[0].args == {"query": "cats", "limit": 2}
    assert bound[0].id == "1"
    assert bound[0].tool == Tool(search)
    assert calls[0].tool is None  # the original is unchanged
    assert calls[0].args == {"query": "cats", "limit": "2"}
    assert bound.execute() == [["cats-0", "cats-1"], "Paris:C"]
    assert [c.result for c in bound] == [["cats-0", "cats-1"], "Paris:C"]
    assert all(c.executed for c in bound)
    assert not calls[0].executed


def test_bind_to_an_unknown_tool_lists_the_tools() -> None:
    calls = ToolCalls([{"name": "weather", "args": {}}])
    with pytest.raises(ToolCallError) as exc:
        calls.bind([get_weather, search])
    assert message(exc) == "no tool named `weather`; the tools are: `get_weather`, `search`"
    assert exc.value.tool == "weather"
    with pytest.raises(ToolCallError, match="the tools are: none"):
        calls.bind([])


def test_bind_with_bad_arguments() -> None:
    calls = ToolCalls([{"name": "get_weather", "args": {"town": "Paris"}}])
    with pytest.raises(ToolCallError) as exc:
        calls.bind([get_weather])
    assert "argument `city`: Field required" in message(exc)
    assert "argument `town`: Extra inputs are not permitted" in message(exc)


def test_bind_by_name() -> None:
    calls = ToolCalls([{"name": "weather", "args": {"city": "Rome"}}])
    assert calls.bind({"weather": get_weather}).execute() == ["Rome:C"]
    assert calls.bind({"weather": Tool(get_weather)}).execute() == ["Rome:C"]


def test_execute_with_a_tools_list() -> None:
    calls = ToolCalls([{"name": "get_weather", "args": {"city": "Rome", "unit": "F"}}])
    assert calls.execute([get_weather]) == ["Rome:F"]
    assert calls[0].result == "Rome:F"
    assert calls[0].execute({"get_weather": Tool(get_weather)}) == "Rome:F"


def test_execute_with_an_unknown_tool_or_none_at_all() -> None:
    call = ToolCall(name="nope", args={})
    with pytest.raises(ToolCallError, match="no tool named `nope`; the tools are: `get_weather`"):
        call.execute([get_weather])
    with pytest.raises(UsageError, match="bound to no tool"):
        call.execute()
    with pytest.raises(UsageError, match="has not been executed"):
        _ = call.result


def test_execute_validates_the_arguments() -> None:
    call = ToolCall(name="search", args={"query": "x", "limit": "many"})
    with pytest.raises(ToolCallError, match=r"argument `limit`: Input should be a valid integer"):
        call.execute([search])
    assert not call.executed


def test_a_failing_tool_keeps_its_error_and_propagates_it() -> None:
    call = ToolCall(name="broken", args={"x": 1})
    with pytest.raises(KeyError):
        call.execute([broken])
    assert call.executed
    assert isinstance(call.error, KeyError)
    assert call.result is None


@pytest.mark.parametrize("tools", ["get_weather", 3, None])
def test_tools_of_the_wrong_kind(tools: Any) -> None:
    call = ToolCall(name="get_weather", args={"city": "x"})
    with pytest.raises(UsageError):
        call.bind(tools)


def test_two_different_tools_with_one_name() -> None:
    with pytest.raises(UsageError, match="two different tools are named `get_weather`"):
        ToolCalls([]).bind([get_weather, Tool(search, name="get_weather")])


def test_aexecute_awaits_async_tools_and_runs_sync_ones() -> None:
    calls = ToolCalls(
        [{"name": "fetch", "args": {"url": "u"}}, {"name": "get_weather", "args": {"city": "P"}}]
    )
    assert asyncio.run(calls.aexecute([fetch, get_weather])) == ["page u 0", "P:C"]
    assert calls[0].result == "page u 0"
    bound = calls.bind([fetch, get_weather])
    assert asyncio.run(bound.aexecute()) == ["page u 0", "P:C"]


def test_executing_an_async_tool_synchronously_is_a_usage_error() -> None:
    call = ToolCall(name="fetch", args={"url": "u"})
    with pytest.raises(UsageError, match="fetch is async"):
        call.execute([fetch])
    assert not call.executed


def test_aexecute_runs_calls_one_after_another() -> None:
    events: list[str] = []

    async def step(label: str) -> str:
        """Record a step."""
        events.append(f"start {label}")
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        events.append(f"end {label}")
        return label

    step.__annotations__ = {"label": str, "return": str}
    calls = ToolCalls(
        [{"name": "step", "args": {"label": "a"}}, {"name": "step", "args": {"label": "b"}}]
    )
    assert asyncio.run(calls.aexecute([step])) == ["a", "b"]
    assert events == ["start a", "end a", "start b", "end b"]


def test_calls_compare_by_their_fields() -> None:
    call = ToolCall(name="get_weather", args={"city": "Oslo"})
    bound = ToolCalls([call]).bind([get_weather])[0]
    assert bound == call
    assert ToolCall(name="get_weather", args={"city": "Oslo"}, id="x") != call
