"""Warning filters that hold for the whole process without swapping its filters.

`warnings.catch_warnings` swaps the process's filter list on entry and puts it back on exit:
two threads inside it at once can leave either one's filters behind, and a program's own
filters made meanwhile are lost. The filters here are instead added, once, to the list in
force, and added again only when that list lacks them (it may have been reset, or swapped
by `warnings.catch_warnings`, as pytest does around each test).
"""

from __future__ import annotations

import sys
import warnings
from types import FrameType
from typing import Any, cast

__all__ = ["CausedBy", "ensure_filter"]

# A filter entry as `warnings.filters` holds it: (action, message, category, module, lineno).
FilterEntry = tuple[str, Any, type[Warning], Any, int]


def ensure_filter(entry: FilterEntry) -> None:
    """Put ``entry`` in the process's warning filters, ahead of any filter that raises.

    Nothing changes when the entry is already there before every ``"error"`` filter, so
    the cost of a call that finds it is a walk over the first few entries.
    """
    # A list at run time (typeshed says Sequence, for the read-only view it documents).
    filters = cast("list[Any]", warnings.filters)
    for present in filters:
        if present == entry:
            return
        if present[0] == "error":
            break
    # A list insert is atomic under the GIL. The registries of warnings already shown are
    # left as they are: they only keep a warning from showing again, which this entry's
    # "ignore" would do too.
    filters.insert(0, entry)


class CausedBy:
    """A filter's module matcher that matches warnings raised while a package's code runs.

    `warnings` matches a filter's module by calling ``.match(module_name)``; this object
    answers from the raising thread's stack instead of the name: walking outward from the
    code that raised the warning, a frame of ``package`` comes before any frame of
    ``within``. Such a warning is the package's doing (pydantic warning about a type the
    package defines as the package imports it, say), whichever module raised it, while a
    warning raised by ``within``'s own code, or by code it calls outside the package, is
    not.

    Args:
        package: The top-level name of the package whose warnings are matched.
        within: The top-level name of the package that calls it (structio).
    """

    def __init__(self, package: str, within: str) -> None:
        self.package = package
        self.within = within

    def match(self, module: str) -> bool:
        """Whether the warning being filtered was raised while ``package``'s code ran."""
        frame: FrameType | None = sys._getframe(1)
        while frame is not None:
            name = frame.f_globals.get("__name__")
            if isinstance(name, str):
                top = name.partition(".")[0]
                if top == self.package:
                    return True
                if top == self.within:
                    return False
            frame = frame.f_back
        return False

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CausedBy) and (other.package, other.within) == (
            self.package,
            self.within,
        )

    def __hash__(self) -> int:
        return hash((CausedBy, self.package, self.within))

    def __repr__(self) -> str:
        return f"CausedBy({self.package!r}, within={self.within!r})"
