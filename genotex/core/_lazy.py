"""A package's names imported when first used (PEP 562 `__getattr__`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

__all__ = ["lazy_names"]


def lazy_names(package: str, where: Mapping[str, str]) -> Callable[[str], object]:
    """The `__getattr__` of `package` that imports `where[name]` (a module relative to the
    package) when `name` is first asked for, so that importing one of the package's modules
    never imports the others' dependencies (scikit-learn, Inspect).
    """

    def __getattr__(name: str) -> object:
        if name in where:
            from importlib import import_module

            return getattr(import_module(where[name], package), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
