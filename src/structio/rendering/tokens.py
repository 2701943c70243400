"""Tokenizers that work offline, with token counts cached per text.

``o200k_base`` (the default) and ``cl100k_base`` are built from the files litellm ships inside
its package (read here, checked against tiktoken's published hashes, never through
``TIKTOKEN_CACHE_DIR``), so counting tokens needs no network and changes no environment
variable. Any other tiktoken encoding works when tiktoken has its file (``TIKTOKEN_CACHE_DIR``);
any callable ``str -> list[int]`` works too.

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


class _Bundled(NamedTuple):
    """An encoding whose file litellm ships, and what tiktoken builds it with.

    Attributes:
        file: The file's name in litellm's folder (tiktoken's cache key: the SHA-1 of its
            download URL).
        sha256: The SHA-256 of the file, as tiktoken checks it after a download.
        pat_str: The pattern that splits text into pieces before byte-pair merging.
        special_tokens: The encoding's special tokens and their ids.
    """

    file: str
    sha256: str
    pat_str: str
    special_tokens: dict[str, int]


# The encodings' definitions are tiktoken's (tiktoken_ext.openai_public): the same pattern
# and special tokens give the same tokens, which the tests check against tiktoken itself.
_BUNDLED = {
    "o200k_base": _Bundled(
        file="fb374d419588a4632f3f557e76b4b70aebbca790",
        sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        pat_str="|".join(
            [
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""\p{N}{1,3}""",
                r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
                r"""\s*[\r\n]+""",
                r"""\s+(?!\S)""",
                r"""\s+""",
            ]
        ),
        special_tokens={"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    ),
    "cl100k_base": _Bundled(
        file="9b5ad71b2ce5302211f9c61530b329a4922fc6a4",
        sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        pat_str=(
            r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|"""
            r""" ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
        ),
        special_tokens={
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
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
    loaded: Any = _encoding(encoding)

    def encode(text: str) -> list[int]:
        tokens: list[int] = loaded.encode(text, disallowed_special=())
        return tokens

    return Tokenizer(encode, encoding)


def _encoding(encoding: str) -> Any:
    """The tiktoken ``Encoding`` named ``encoding``: a bundled one, or tiktoken's own."""
    import tiktoken

    bundled = _BUNDLED.get(encoding)
    if bundled is not None:
        return tiktoken.Encoding(
            name=encoding,
            pat_str=bundled.pat_str,
            mergeable_ranks=_bundled_ranks(encoding, bundled),
            special_tokens=dict(bundled.special_tokens),
        )
    try:
        return tiktoken.get_encoding(encoding)
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


def _bundled_ranks(encoding: str, bundled: _Bundled) -> dict[bytes, int]:
    """The byte-pair ranks of a bundled encoding, read from litellm's file and checked.

    The file has one token a line: the token's bytes in base64, a space, its rank.
    """
    import base64
    import hashlib

    folder = _litellm_tokenizer_dir()
    path = folder / bundled.file if folder is not None else None
    try:
        if path is None:
            raise FileNotFoundError("litellm is not installed")
        data = path.read_bytes()
    except OSError as exc:
        where = str(path) if path is not None else "litellm's package (not installed)"
        raise TokenizerError(
            f"the {encoding} tokenizer file was not found at {where} ({exc}). structio reads it "
            "from the litellm package: install it (pip install 'litellm>=1.83,<2'), or pass "
            f"encode_func=tiktoken.get_encoding({encoding!r}).encode to let tiktoken find or "
            "download the file itself"
        ) from exc
    if hashlib.sha256(data).hexdigest() != bundled.sha256:
        raise TokenizerError(
            f"the {encoding} tokenizer file at {path} is not the one tiktoken publishes (its "
            "SHA-256 differs): reinstall litellm (pip install --force-reinstall "
            f"'litellm>=1.83,<2'), or pass encode_func=tiktoken.get_encoding({encoding!r}).encode"
        )
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


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
