"""Tokenizers that work offline, with token counts cached per text.

``o200k_base`` (the default) and ``cl100k_base`` load from the files litellm ships inside its
package, so counting tokens needs no network. Any other tiktoken encoding works when tiktoken
has its file (``TIKTOKEN_CACHE_DIR``); any callable ``str -> list[int]`` works too.

A chat is counted by one function, `count_chat`, whose framing is a parameter: a prompt's
``token_count`` is its contents alone (`NO_FRAMING`, the budget truncation works with),
while fine-tuning limits count as OpenAI does (`OPENAI_FRAMING`, 3 tokens a message and 3
for the reply), so the same chat of 4 messages counts 15 more there.

A tokenizer remembers the *count* of each text it counted (truncation and limits need no
more), least recently used out first, within `DEFAULT_COUNT_CACHE_BYTES`. The tokens
`Tokenizer.encode` returns are kept apart, in a smaller cache (`DEFAULT_TOKEN_CACHE_BYTES`):
they cost about 40 bytes a token, where a count costs one entry.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from structio._util.lru import ENTRY_OVERHEAD, LRU
from structio.exceptions import TokenizerError

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "DEFAULT_COUNT_CACHE_BYTES",
    "DEFAULT_ENCODING",
    "DEFAULT_TOKEN_CACHE_BYTES",
    "NO_FRAMING",
    "OPENAI_FRAMING",
    "ChatFraming",
    "EncodeFunc",
    "Tokenizer",
    "content_text",
    "count_chat",
    "get_tokenizer",
]

DEFAULT_ENCODING = "o200k_base"
EncodeFunc = Callable[[str], list[int]]

#: What a tokenizer's cache of counts may hold, approximately: each text (as if the cache
#: alone kept it alive) and about 200 bytes for its entry; some 100,000 chat messages of a
#: few hundred characters.
DEFAULT_COUNT_CACHE_BYTES = 64 * 1024 * 1024
#: What a tokenizer's cache of token lists may hold: about 40 bytes a token (a tuple slot
#: and an int), so some 400,000 tokens.
DEFAULT_TOKEN_CACHE_BYTES = 16 * 1024 * 1024
_TOKEN_BYTES = 40

# tiktoken names its cached files after the SHA-1 of the download URL; litellm ships these.
_LITELLM_FILES = {
    "o200k_base": "fb374d419588a4632f3f557e76b4b70aebbca790",
    "cl100k_base": "9b5ad71b2ce5302211f9c61530b329a4922fc6a4",
}
_LOAD_LOCK = threading.Lock()
_TOKENIZERS: dict[str, Tokenizer] = {}


class Tokenizer:
    """Encodes text into tokens, remembering the token counts of texts it has seen.

    A long chat re-renders the same messages turn after turn; with the cache each message
    is encoded once. Both caches are bounded by bytes, least recently used out first, and
    safe to share between threads.

    Args:
        encode: The function that turns text into token ids.
        name: A name for messages and repr (the encoding's, or the function's).
        count_cache_bytes: The budget of the cache of counts (texts and entries).
        token_cache_bytes: The budget of the cache of token lists (`encode`).
    """

    def __init__(
        self,
        encode: EncodeFunc,
        name: str,
        *,
        count_cache_bytes: int = DEFAULT_COUNT_CACHE_BYTES,
        token_cache_bytes: int = DEFAULT_TOKEN_CACHE_BYTES,
    ) -> None:
        self._encode = encode
        self.name = name
        self._counts: LRU[str, int] = LRU(count_cache_bytes)
        self._tokens: LRU[str, tuple[int, ...]] = LRU(token_cache_bytes)

    def __repr__(self) -> str:
        return f"Tokenizer({self.name!r})"

    def encode(self, text: str, *, cache: bool = True) -> tuple[int, ...]:
        """The tokens of ``text`` (from the cache when it was seen before).

        Args:
            text: The text to encode.
            cache: Remember the result (its tokens, and its count). Pass ``False`` for text
                that will not come again (a stream of distinct rows), so the cache keeps
                the texts that do.
        """
        cached = self._tokens.get(text)
        if cached is not None:
            return cached
        tokens = tuple(self._encode(text))
        if cache:
            entry = ENTRY_OVERHEAD + sys.getsizeof(text)
            self._tokens.put(text, tokens, entry + _TOKEN_BYTES * len(tokens))
            self._counts.put(text, len(tokens), entry)
        return tokens

    def count(self, text: str, *, cache: bool = True) -> int:
        """How many tokens ``text`` has (``cache`` as in `encode`; only the count is kept)."""
        counted = self._counts.get(text)
        if counted is not None:
            return counted
        counted = len(self._encode(text))
        if cache:
            self._counts.put(text, counted, ENTRY_OVERHEAD + sys.getsizeof(text))
        return counted

    @property
    def cache_bytes(self) -> int:
        """The approximate bytes its caches hold (counts and token lists together)."""
        return self._counts.nbytes + self._tokens.nbytes

    def clear(self) -> None:
        """Forget every cached count and encoding (to free memory, or to measure cold)."""
        self._counts.clear()
        self._tokens.clear()


def get_tokenizer(
    encoding: str = DEFAULT_ENCODING, encode_func: EncodeFunc | None = None
) -> Tokenizer:
    """The tokenizer for a tiktoken encoding name, or one wrapping ``encode_func``.

    Tokenizers for encoding names are shared, so their caches serve every prompt.

    Raises:
        TokenizerError: The encoding is unknown or its file is not available offline.
    """
    if encode_func is not None:
        if not callable(encode_func):
            raise TokenizerError(
                f"encode_func must be callable (str -> list[int]), not {encode_func!r}"
            )
        name = getattr(encode_func, "__qualname__", None) or repr(encode_func)
        return Tokenizer(encode_func, name)
    tokenizer = _TOKENIZERS.get(encoding)
    if tokenizer is None:
        with _LOAD_LOCK:
            tokenizer = _TOKENIZERS.get(encoding)
            if tokenizer is None:
                tokenizer = _TOKENIZERS[encoding] = _load(encoding)
    return tokenizer


def _load(encoding: str) -> Tokenizer:
    import tiktoken

    try:
        with _cache_dir_for(encoding):
            loaded: Any = tiktoken.get_encoding(encoding)
    except ValueError as exc:  # tiktoken: "Unknown encoding ..."
        raise TokenizerError(
            f"unknown tiktoken encoding {encoding!r} ({exc}); use 'o200k_base' (GPT-4o and later), "
            "'cl100k_base' (GPT-4, GPT-3.5), or pass encode_func=your_tokenizer.encode"
        ) from None
    except Exception as exc:
        raise TokenizerError(
            f"the tiktoken encoding {encoding!r} is not available offline and could not be "
            f"downloaded ({type(exc).__name__}: {exc}). Put its file in a folder named by "
            "TIKTOKEN_CACHE_DIR, use 'o200k_base' or 'cl100k_base' (shipped with litellm), or "
            "pass encode_func=your_tokenizer.encode"
        ) from exc

    def encode(text: str) -> list[int]:
        tokens: list[int] = loaded.encode(text, disallowed_special=())
        return tokens

    return Tokenizer(encode, encoding)


class _cache_dir_for:  # noqa: N801 - used as a context manager, like contextlib's helpers
    """Point tiktoken at litellm's bundled files for this load, when they hold the encoding."""

    def __init__(self, encoding: str) -> None:
        self.directory = _litellm_tokenizer_dir() if encoding in _LITELLM_FILES else None
        if self.directory is not None and not (self.directory / _LITELLM_FILES[encoding]).is_file():
            self.directory = None
        self.previous: str | None = None

    def __enter__(self) -> None:
        if self.directory is not None:
            self.previous = os.environ.get("TIKTOKEN_CACHE_DIR")
            os.environ["TIKTOKEN_CACHE_DIR"] = str(self.directory)

    def __exit__(self, *exc: object) -> None:
        if self.directory is None:
            return
        if self.previous is None:
            os.environ.pop("TIKTOKEN_CACHE_DIR", None)
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = self.previous


def _litellm_tokenizer_dir() -> Path | None:
    # Found without importing litellm (which costs seconds).
    from pathlib import Path

    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"


class ChatFraming(NamedTuple):
    """Tokens a chat adds around its messages' contents.

    Attributes:
        per_message: Tokens each message adds (role and separators).
        per_reply: Tokens that prime the model's reply.
    """

    per_message: int = 0
    per_reply: int = 0


#: The contents alone: what `Prompt.token_count` reports and truncation budgets.
NO_FRAMING = ChatFraming()
#: OpenAI's count for chat models (3 tokens per message, 3 to prime the reply): what
#: fine-tuning limits are checked against.
OPENAI_FRAMING = ChatFraming(per_message=3, per_reply=3)


def content_text(content: Any) -> str:
    """The text of a message's content: a string, or the text of its content parts.

    Media parts (images, audio, files) have no text here and so are not counted: their
    token cost depends on the provider (an image's size and detail, audio's length) and
    is not estimated. ``None`` (an assistant message with only tool calls) is empty.
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Iterable):
        return "".join(
            part["text"]
            for part in content
            if isinstance(part, Mapping)
            and part.get("type") == "text"
            and isinstance(part.get("text"), str)
        )
    return str(content)


def _calls_text(calls: Any) -> str:
    """The text a model wrote for its tool calls (names and arguments), to count it."""
    pieces = []
    for call in calls if isinstance(calls, Iterable) else ():
        function = call.get("function") if isinstance(call, Mapping) else None
        if isinstance(function, Mapping):
            pieces.append(f"{function.get('name', '')}{function.get('arguments', '')}")
    return "".join(pieces)


def count_chat(
    messages: Iterable[Mapping[str, Any]],
    tokenizer: Tokenizer,
    framing: ChatFraming = NO_FRAMING,
    *,
    cached_roles: Collection[str] | None = None,
) -> int:
    """How many tokens a chat has: its contents plus ``framing``. The one chat count.

    Args:
        messages: Chat messages (``role``, ``content``).
        tokenizer: The tokenizer.
        framing: `NO_FRAMING` (contents only) or `OPENAI_FRAMING`.
        cached_roles: Roles whose contents go through the tokenizer's cache (all by
            default); pass ``{"system"}`` for a stream of distinct rows.
    """
    total = framing.per_reply
    for message in messages:
        content = message.get("content", "")
        text = content if type(content) is str else content_text(content)
        calls = message.get("tool_calls")
        if calls:
            text += _calls_text(calls)
        cache = cached_roles is None or message.get("role") in cached_roles
        total += framing.per_message + tokenizer.count(text, cache=cache)
    return total
