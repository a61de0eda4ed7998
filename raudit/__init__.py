"""raudit: audit differentially private synthetic-data generators by measurement.

From Python: ``import raudit.api as ra`` (``ra.train``, ``ra.audit``, ``ra.utility``,
``ra.inspect``, ``ra.campaign``, ``ra.report``; docs/python-api.md). ``import raudit``
itself stays cheap: it imports nothing else.
"""

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    """``raudit.audit`` (and the other subpackages) after a bare ``import raudit``, imported
    on first use so ``import raudit`` stays cheap: ``help(raudit.audit)`` then names the
    Python function, ``raudit.api.audit``, instead of raising AttributeError."""
    import importlib

    if name.startswith("_"):  # dunder probes (copy, pickle, doctest) are no subpackages
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as err:
        if err.name != f"{__name__}.{name}":
            raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
