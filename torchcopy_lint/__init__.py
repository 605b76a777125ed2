"""torchcopy-lint: find PyTorch copy and aliasing bugs before they run."""

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    """``torchcopy_lint.sanitize`` loads on first use (it needs torch only when called)."""
    if name == "sanitize":
        import importlib

        return importlib.import_module("torchcopy_lint.sanitize")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
