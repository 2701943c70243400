"""Adapters: signatures, demos and inputs to chat messages, and completions back to values."""

from structio.adapters.base import Adapter, AdapterResult, Message, SignatureLike
from structio.adapters.chat_adapter import ChatAdapter
from structio.adapters.json_adapter import JSONAdapter

__all__ = ["Adapter", "AdapterResult", "ChatAdapter", "JSONAdapter", "Message", "SignatureLike"]
