"""Adapters: pure wire formats, from signatures to chat messages and from completions back."""

from structio.adapters.base import Adapter, Message, ModelCapabilities, Reading, SignatureLike
from structio.adapters.chat_adapter import ChatAdapter
from structio.adapters.compact_adapter import CompactAdapter
from structio.adapters.json_adapter import JSONAdapter
from structio.adapters.tool_output import ToolOutputAdapter
from structio.adapters.xml_adapter import XMLAdapter

__all__ = [
    "Adapter",
    "ChatAdapter",
    "CompactAdapter",
    "JSONAdapter",
    "Message",
    "ModelCapabilities",
    "Reading",
    "SignatureLike",
    "ToolOutputAdapter",
    "XMLAdapter",
]
