"""Autofix: what a fix is (model), how checkers build one (builders), how fixes are applied (apply)."""
