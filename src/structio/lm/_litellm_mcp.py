"""litellm's MCP gateway and the optional ``mcp`` package: when a request with tools needs it.

Used by `structio.lm._litellm` only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from structio.exceptions import ConfigurationError
from structio.lm._errors import exception_chain

__all__ = ["is_mcp_tool", "mcp_error", "missing_mcp", "reads_skip_mcp"]

# -- litellm's MCP gateway and the optional `mcp` package ------------------------------------
#
# litellm (1.106: ``litellm.main.completion``, at ``if not skip_mcp_handler and tools:``)
# imports its MCP gateway on *every* call with ``tools=``, only to ask whether one of the
# tools is an MCP tool served by a litellm proxy (``{"type": "mcp", "server_url":
# "litellm_proxy..."}``); ``acompletion`` runs ``completion``, so it does the same. That
# import chain (``litellm.responses.mcp.chat_completions_handler``
# -> ``litellm_proxy_mcp_handler`` -> ``litellm.proxy._experimental.mcp_server.catalog``)
# imports the optional ``mcp`` package, so without it every call with tools failed with
# ``ModuleNotFoundError: No module named 'mcp'`` before any request (as a connection error
# from ``acompletion``, which would even have been retried).
#
# litellm's own gateway passes ``_skip_mcp_handler=True`` on the calls it makes, to keep from
# calling itself. When no tool is of type "mcp" the gateway's answer is "not mine" and
# litellm goes on exactly as if it had skipped the check, so passing the flag then takes
# that very path, with or without ``mcp`` installed, and with no dependence on what the
# package's import happens to do. Tools of type "mcp" keep litellm's path (they need the
# package). The flag is passed only to a litellm that reads it: an unknown keyword could
# reach the provider. A litellm that does not read it and fails that import gets a
# `ConfigurationError` that says what to install, never a connection error to retry.


def reads_skip_mcp(litellm: Any) -> bool:
    """Whether ``litellm.completion`` reads the ``_skip_mcp_handler`` keyword."""
    import inspect

    try:  # under litellm's dispatch and decorators, each of which sets __wrapped__
        function = inspect.unwrap(litellm.completion)
    except ValueError:  # a cycle of __wrapped__: nothing to read
        return False
    code = getattr(function, "__code__", None)
    return code is not None and "_skip_mcp_handler" in code.co_consts


def is_mcp_tool(tool: Any) -> bool:
    """Whether a tool is an MCP tool (``{"type": "mcp", ...}``), which litellm's gateway serves."""
    kind = tool.get("type") if isinstance(tool, Mapping) else getattr(tool, "type", None)
    return kind == "mcp"


def missing_mcp(exc: BaseException) -> ModuleNotFoundError | None:
    """The failed import of the ``mcp`` package behind ``exc``, however litellm wrapped it."""
    for cause in exception_chain(exc):
        if isinstance(cause, ModuleNotFoundError) and (cause.name or "").split(".")[0] in (
            "mcp",
            "mcp_types",
        ):
            return cause
    return None


def mcp_error(args: Mapping[str, Any], missing: ModuleNotFoundError) -> ConfigurationError:
    from importlib.metadata import version

    if any(is_mcp_tool(tool) for tool in args.get("tools") or ()):
        return ConfigurationError(
            f"tools of type 'mcp' go through litellm's MCP gateway, which needs the optional "
            f"package {missing.name!r} ({missing}): pip install mcp"
        )
    return ConfigurationError(
        f"litellm {version('litellm')} imports its MCP gateway for every request with tools=, "
        f"and with it the optional package {missing.name!r} ({missing}), and offers no way "
        "to skip it: pip install mcp, or use transport='direct' for an OpenAI-compatible model"
    )
