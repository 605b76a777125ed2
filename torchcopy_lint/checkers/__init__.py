"""One module per rule; each defines a Checker subclass (see base.py)."""
