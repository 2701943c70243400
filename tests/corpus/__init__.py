"""The parsing corpus: realistic completions with the values they hold or the fields they fail on."""

from tests.corpus.case import Case
from tests.corpus.chat_cases import CHAT_CASES
from tests.corpus.json_cases import JSON_CASES
from tests.corpus.signatures import CUSTOM_TYPES, SPECS

CASES: dict[str, list[Case]] = {"chat": CHAT_CASES, "json": JSON_CASES}

__all__ = ["CASES", "CUSTOM_TYPES", "SPECS", "Case"]
