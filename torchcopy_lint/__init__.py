"""torchcopy-lint: find PyTorch copy and aliasing bugs before they run."""

__version__ = "0.1.0"
