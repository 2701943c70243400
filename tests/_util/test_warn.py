"""Process-wide warning filters: added once, ahead of errors, matching by who caused them."""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from typing import Any

import pytest

from structio._util.warn import CausedBy, ensure_filter

ENTRY = ("ignore", None, Warning, CausedBy("fakepkg", within="structio"), 0)


def module_function(name: str, source: str, function: str) -> Callable[..., Any]:
    """A function whose frames say they run in module ``name`` (its globals' __name__)."""
    namespace: dict[str, Any] = {"__name__": name, "warnings": warnings}
    exec(compile(source, f"<{name}>", "exec"), namespace)  # noqa: S102 - test's own code
    function_object: Callable[..., Any] = namespace[function]
    return function_object


# A third-party library that warns (pydantic, say), called by the package, called by us.
library_warns = module_function(
    "otherlib.schema",
    "def build():\n    warnings.warn('about a type', UserWarning)\n",
    "build",
)
package_calls = module_function("fakepkg.types", "def load(then):\n    return then()\n", "load")
structio_calls = module_function("structio.fake", "def call(then):\n    return then()\n", "call")
structio_warns = module_function(
    "structio.own", "def warn():\n    warnings.warn('structio speaking', UserWarning)\n", "warn"
)


def test_a_warning_raised_while_the_package_runs_is_matched() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ensure_filter(ENTRY)
        structio_calls(lambda: package_calls(library_warns))  # ignored: no error


def test_warnings_of_structio_and_of_code_outside_the_package_stay_errors() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ensure_filter(ENTRY)
        with pytest.raises(UserWarning, match="about a type"):
            structio_calls(library_warns)
        with pytest.raises(UserWarning, match="about a type"):
            library_warns()
        # structio's own code, even when the package called it back.
        with pytest.raises(UserWarning, match="structio speaking"):
            package_calls(lambda: structio_calls(structio_warns))


def test_the_entry_is_added_once_and_again_only_when_the_filters_lost_it() -> None:
    with warnings.catch_warnings():
        warnings.resetwarnings()
        ensure_filter(ENTRY)
        ensure_filter(ENTRY)
        assert warnings.filters.count(ENTRY) == 1
        assert warnings.filters[0] == ENTRY
        warnings.simplefilter("ignore", DeprecationWarning)  # a program's own filter stays
        ensure_filter(ENTRY)
        assert warnings.filters.count(ENTRY) == 1
        assert warnings.filters[0][2] is DeprecationWarning
        # An "error" filter put in front of it: the entry goes before that too.
        warnings.simplefilter("error")
        ensure_filter(ENTRY)
        assert warnings.filters[0] == ENTRY
        structio_calls(lambda: package_calls(library_warns))
    assert ENTRY not in warnings.filters  # catch_warnings put the test's list back


def test_threads_adding_it_at_once_add_it_once() -> None:
    with warnings.catch_warnings():
        warnings.resetwarnings()
        barrier = threading.Barrier(8)

        def add() -> None:
            barrier.wait()
            for _ in range(200):
                ensure_filter(ENTRY)

        threads = [threading.Thread(target=add) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        # Racing threads may each insert before seeing the other's entry; never more than
        # one per thread, and every later call finds it.
        assert 1 <= warnings.filters.count(ENTRY) <= 8
        before = list(warnings.filters)
        ensure_filter(ENTRY)
        assert warnings.filters == before


def test_the_matcher_compares_by_value() -> None:
    assert CausedBy("a", within="b") == CausedBy("a", within="b")
    assert CausedBy("a", within="b") != CausedBy("a", within="c")
    assert hash(CausedBy("a", within="b")) == hash(CausedBy("a", within="b"))
    assert repr(CausedBy("litellm", within="structio")) == (
        "CausedBy('litellm', within='structio')"
    )
