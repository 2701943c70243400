"""Record DSPy 3.4.1's XMLAdapter prompts and parse results as a golden file.

Writes tests/golden/dspy-3.4.1/golden_xml.json: signatures with nested pydantic models, a
list of models, `list[str]`, `dict[str, int]`, `Optional`, `Literal`, `Enum` and `str` outputs
(`Shop`), and a `dspy.History` input (`ShopChat`), formatted by `dspy.XMLAdapter` with and
without demos and history turns; `format_finetune_data` with nested outputs; and parse examples:
the completions a model may write (nested elements, prose, JSON inside an element, escaped and
unescaped text, missing and unclosed elements) with the values DSPy reads or its error.

The signatures are defined by `SOURCE`, executed as it is and stored verbatim as the file's
`signature_source`. No model is called, and network access is blocked while recording. The output
is deterministic: fixed data, no timestamps. Values are stored as JSON data (pydantic models as
their fields, enums as their values, a History as ``{"messages": [...]}``).

Run from the repository root:

    LITELLM_LOCAL_MODEL_COST_MAP=True /tmp/bench/bin/python benchmarks/golden_xml.py
"""

from __future__ import annotations

import copy
import json
import os
import socket
import sys
import warnings
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
warnings.simplefilter("ignore")


def _no_network(*_args: Any, **_kwargs: Any) -> None:
    raise RuntimeError("network access is disabled while recording golden files")


socket.socket.connect = _no_network  # type: ignore[method-assign]
socket.create_connection = _no_network  # type: ignore[assignment]

import dspy  # noqa: E402
from pydantic_core import to_jsonable_python  # noqa: E402

OUT_DIR = Path(__file__).resolve().parent.parent / "tests" / "golden" / "dspy-3.4.1"

SOURCE = '''\
class Size(enum.Enum):
    SMALL = "small"
    LARGE = "large"


class Item(BaseModel):
    name: str = Field(description="What it is")
    qty: int = 1
    tags: list[str] = []


class Order(BaseModel):
    """One order."""

    id: int
    items: list[Item]
    gift: bool = False
    note: Optional[str] = None
    prices: dict[str, float] = {}


class Shop(dspy.Signature):
    """Turn the request into orders.

    Use one order per customer."""

    request: str = dspy.InputField()
    budget: int = dspy.InputField(desc="in euros")
    order: Order = dspy.OutputField(desc="the main order")
    orders: list[Order] = dspy.OutputField()
    labels: list[str] = dspy.OutputField()
    counts: dict[str, int] = dspy.OutputField()
    size: Size = dspy.OutputField()
    channel: Literal["web", "phone"] = dspy.OutputField()
    total: Optional[float] = dspy.OutputField()
    summary: str = dspy.OutputField()
    remark: str | None = dspy.OutputField()


class ShopChat(dspy.Signature):
    """Answer the customer, using the conversation so far."""

    question: str = dspy.InputField()
    history: dspy.History = dspy.InputField()
    answer: str = dspy.OutputField()
    items: list[Item] = dspy.OutputField()
'''


def namespace() -> dict[str, Any]:
    import enum
    from typing import Literal, Optional

    from pydantic import BaseModel, Field

    names: dict[str, Any] = {
        "dspy": dspy,
        "enum": enum,
        "Literal": Literal,
        "Optional": Optional,
        "BaseModel": BaseModel,
        "Field": Field,
        "__name__": "golden_source",
    }
    exec(compile(SOURCE, "golden_source", "exec", dont_inherit=True), names)
    return names


NS = namespace()

ORDER_1 = {
    "id": 1,
    "items": [
        {"name": "lamp", "qty": 2, "tags": ["desk", "led"]},
        {"name": "bulb", "qty": 1, "tags": []},
    ],
    "gift": True,
    "note": "leave at the door",
    "prices": {"lamp": 19.5, "bulb": 2.25},
}
ORDER_2 = {
    "id": 2,
    "items": [{"name": "chair", "qty": 4, "tags": ["oak"]}],
    "gift": False,
    "note": None,
    "prices": {},
}

OUTPUTS_1 = {
    "order": ORDER_1,
    "orders": [ORDER_1, ORDER_2],
    "labels": ["home", "lighting"],
    "counts": {"lamp": 2, "bulb": 1},
    "size": "small",
    "channel": "web",
    "total": 41.25,
    "summary": "Two orders for one customer.",
    "remark": "fragile",
}
OUTPUTS_2 = {
    "order": ORDER_2,
    "orders": [ORDER_2],
    "labels": ["furniture"],
    "counts": {"chair": 4},
    "size": "large",
    "channel": "phone",
    "total": None,
    "summary": "Four chairs.",
    "remark": "call first",
}

INPUTS = {"request": "Three lamps and a rug, gift wrapped, for Ana.", "budget": 120}
DEMOS = [
    {"request": "Two lamps and a bulb, as a gift.", "budget": 50, **OUTPUTS_1},
    {"request": "Four oak chairs by phone.", "budget": 400, **OUTPUTS_2},
    # Incomplete: no budget, and some outputs missing.
    {"request": "A rug.", "labels": ["rug"], "size": "large", "channel": "web"},
]

CHAT_INPUTS = {
    "question": "And the bulbs?",
    "history": {
        "messages": [
            {
                "question": "What lamps do you have?",
                "answer": "Two desk lamps.",
                "items": [
                    {"name": "lamp", "qty": 2, "tags": ["desk"]},
                ],
            },
            {"question": "Is the rug in stock?"},
            {
                "question": "Any chairs?",
                "answer": "Oak chairs.",
                "items": [
                    {"name": "chair", "qty": 4, "tags": []},
                ],
            },
        ]
    },
}

NESTED = (
    "<order><id>7</id><items><item><name>lamp</name><qty>3</qty><tags><item>desk</item>"
    "</tags></item><item><name>rug</name><qty>1</qty><tags /></item></items><gift>True</gift>"
    "<note>wrap it</note><prices><lamp>19.5</lamp><rug>60.0</rug></prices></order>"
)
ORDERS = (
    "<orders><item><id>7</id><items><item><name>lamp</name><qty>3</qty><tags /></item></items>"
    "<gift>False</gift><note /><prices /></item></orders>"
)
REST = (
    "<labels><item>home</item><item>rugs</item></labels>\n"
    "<counts><lamp>3</lamp><rug>1</rug></counts>\n"
    "<size>\nsmall\n</size>\n<channel>\nweb\n</channel>\n<total>\n118.5\n</total>\n"
    "<summary>\nThree lamps and a rug for Ana.\n</summary>\n<remark>\nNone\n</remark>"
)

PARSE = {
    "nested": f"{NESTED}\n\n{ORDERS}\n\n{REST}",
    "prose_and_newlines": (
        "Here is the answer.\n\n<order>\n  <id>7</id>\n  <items>\n    <item>\n      <name>lamp"
        "</name>\n    </item>\n  </items>\n</order>\n<orders>\n</orders>\n"
        f"{REST}\nThanks!"
    ),
    "json_inside_elements": (
        '<order>\n{"id": 7, "items": [{"name": "lamp", "qty": 3}]}\n</order>\n'
        '<orders>\n[]\n</orders>\n<labels>\n["home", "rugs"]\n</labels>\n'
        '<counts>\n{"lamp": 3}\n</counts>\n'
        "<size>\nsmall\n</size>\n<channel>\nweb\n</channel>\n<total>\nNone\n</total>\n"
        "<summary>\nok\n</summary>\n<remark>\n</remark>"
    ),
    "repeated_siblings": (
        "<order><id>7</id><items><name>lamp</name><tags>desk</tags><tags>led</tags></items>"
        "<items><name>rug</name></items></order>\n"
        f"{ORDERS}\n<labels>home</labels>\n<counts><lamp>3</lamp></counts>\n"
        "<size>small</size><channel>web</channel><total>1</total><summary>s</summary>"
        "<remark>r</remark>"
    ),
    "entry_keys": (
        f"{NESTED}\n{ORDERS}\n<labels />\n"
        '<counts><entry key="desk lamp">3</entry><entry key="a&amp;b">1</entry></counts>\n'
        "<size>large</size><channel>phone</channel><total /><summary>s</summary><remark />"
    ),
    "escaped_text": (
        f"{NESTED}\n{ORDERS}\n<labels><item>a &lt; b</item><item>R&amp;D</item></labels>\n"
        "<counts></counts>\n<size>small</size><channel>web</channel><total>2</total>"
        "<summary>\nx &lt; y &amp;&amp; y &gt; z\n</summary><remark>&lt;none&gt;</remark>"
    ),
    "unescaped_text": (
        f"{NESTED}\n{ORDERS}\n<labels><item>home</item></labels>\n<counts></counts>\n"
        "<size>small</size><channel>web</channel><total>2</total>"
        "<summary>\nx < y && y > z\n</summary><remark>r</remark>"
    ),
    "cdata": (
        f"{NESTED}\n{ORDERS}\n<labels><item>home</item></labels>\n<counts></counts>\n"
        "<size>small</size><channel>web</channel><total>2</total>"
        "<summary><![CDATA[if a < b && c: </summary>]]></summary><remark>r</remark>"
    ),
    "tag_inside_text": (
        f"{NESTED}\n{ORDERS}\n<labels><item>home</item></labels>\n<counts></counts>\n"
        "<size>small</size><channel>web</channel><total>2</total>"
        "<summary>Use <b>bold</b> here</summary><remark>r</remark>"
    ),
    "enum_by_name": (
        f"{NESTED}\n{ORDERS}\n<labels><item>home</item></labels>\n<counts></counts>\n"
        "<size>SMALL</size><channel>web</channel><total>2</total>"
        "<summary>s</summary><remark>r</remark>"
    ),
    "missing_element": (
        f"{NESTED}\n{ORDERS}\n<labels><item>home</item></labels>\n<counts></counts>\n"
        "<size>small</size><channel>web</channel><total>2</total><remark>r</remark>"
    ),
    "unclosed_element": (
        f"{NESTED}\n{ORDERS}\n<labels><item>home</item></labels>\n<counts></counts>\n"
        "<size>small</size><channel>web</channel><total>2</total><remark>r</remark>"
        "<summary>Three lamps and"
    ),
    "invalid_value": (
        f"{NESTED}\n{ORDERS}\n<labels><item>home</item></labels>\n<counts></counts>\n"
        "<size>medium</size><channel>web</channel><total>2</total>"
        "<summary>s</summary><remark>r</remark>"
    ),
    "missing_model_field": (
        "<order><items /></order>\n"
        f"{ORDERS}\n<labels><item>home</item></labels>\n<counts></counts>\n"
        "<size>small</size><channel>web</channel><total>2</total>"
        "<summary>s</summary><remark>r</remark>"
    ),
}

CHAT_PARSE = {
    "items": (
        "<answer>\nWe have bulbs.\n</answer>\n\n"
        "<items><item><name>bulb</name><qty>10</qty><tags><item>e27</item></tags></item></items>"
    ),
    "no_items": "<answer>\nNo.\n</answer>\n\n<items />",
}


def jsonable(value: Any) -> Any:
    if isinstance(value, dspy.History):
        return {"messages": jsonable(value.messages)}
    return to_jsonable_python(value, fallback=str)


def error_of(exc: Exception) -> dict[str, Any]:
    return {"error_type": type(exc).__name__, "error": str(exc)}


def shop_values(values: dict[str, Any]) -> dict[str, Any]:
    """Golden data as DSPy's values: models for the model fields, the enum for `size`."""
    sig = NS["Shop"]
    out = dict(values)
    for name in ("order", "orders", "size"):
        if name in out and out[name] is not None:
            annotation = sig.output_fields[name].annotation
            out[name] = dspy.adapters.utils.parse_value(out[name], annotation)
    return out


def chat_inputs() -> dict[str, Any]:
    data = copy.deepcopy(CHAT_INPUTS)
    data["history"] = dspy.History(messages=data["history"]["messages"])
    return data


def parse_examples(sig_name: str, completions: dict[str, str]) -> list[dict[str, Any]]:
    adapter = dspy.XMLAdapter()
    examples = []
    for label, completion in completions.items():
        example: dict[str, Any] = {
            "adapter": "XMLAdapter",
            "signature": sig_name,
            "label": label,
            "completion": completion,
        }
        try:
            example["parsed"] = jsonable(adapter.parse(NS[sig_name], completion))
        except Exception as exc:
            example.update(error_of(exc))
        examples.append(example)
    return examples


def build() -> dict[str, Any]:
    adapter = dspy.XMLAdapter()
    shop, chat = NS["Shop"], NS["ShopChat"]
    demos = [shop_values(demo) for demo in DEMOS]
    cases = [
        {
            "adapter": "XMLAdapter",
            "signature": "Shop",
            "note": "with demos",
            "messages": adapter.format(shop, demos, INPUTS),
        },
        {
            "adapter": "XMLAdapter",
            "signature": "Shop",
            "note": "no demos",
            "messages": adapter.format(shop, [], INPUTS),
        },
        {
            "adapter": "XMLAdapter",
            "signature": "ShopChat",
            "note": "history, no demos",
            "messages": adapter.format(chat, [], chat_inputs()),
        },
    ]
    finetune = adapter.format_finetune_data(shop, demos[:1], INPUTS, shop_values(OUTPUTS_2))
    return {
        "dspy_version": dspy.__version__,
        "title": (
            "XMLAdapter: nested pydantic models, lists of models, list[str], dict[str, int], "
            "Optional, Literal, Enum outputs; demos; a History input; finetune data; parsing"
        ),
        "signature_source": SOURCE,
        "inputs": INPUTS,
        "demos": DEMOS,
        "chat_inputs": CHAT_INPUTS,
        "cases": cases,
        "format_finetune_data": {"outputs": OUTPUTS_2, "XMLAdapter": finetune},
        "assistant_messages": [
            {
                "signature": "Shop",
                "outputs": outputs,
                "content": adapter.format_assistant_message_content(shop, shop_values(outputs)),
            }
            for outputs in (OUTPUTS_1, OUTPUTS_2)
        ],
        "parse_examples": parse_examples("Shop", PARSE) + parse_examples("ShopChat", CHAT_PARSE),
    }


def main() -> int:
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    data = build()
    # The same layout as the other golden files: indent=2, ensure_ascii=False, no final newline.
    text = json.dumps(data, indent=2, ensure_ascii=False)
    (OUT_DIR / "golden_xml.json").write_text(text, encoding="utf-8")
    print(f"wrote {OUT_DIR / 'golden_xml.json'} ({len(data['cases'])} cases)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
