"""Hot loops compare LibCST node types exactly (``type(node) is cst.Call``) instead of calling
``isinstance``, which goes through ``ABCMeta.__instancecheck__`` for every LibCST class. That is
only equivalent for classes nothing derives from: this checks the assumption on the installed
LibCST, so an upgrade that subclasses one of them fails here instead of silently missing nodes."""

from __future__ import annotations

import libcst as cst
import pytest

from torchcopy_lint.analysis.binder import _descended_types
from torchcopy_lint.checkers.tcl003_graph_attached_snapshot import _keeping_parents
from torchcopy_lint.checkers.tcl009_graph_accumulation import _accumulation_types, _nested_scope_types

EXACT = sorted(
    {*_descended_types(), *_keeping_parents(), *_accumulation_types(), *_nested_scope_types(), cst.ClassDef, cst.SimpleStatementLine, cst.Assign, cst.Call, cst.Name, cst.Attribute, cst.With, cst.If, cst.UnaryOperation, cst.Not},
    key=lambda cls: cls.__name__,
)


@pytest.mark.parametrize("node_class", EXACT, ids=lambda cls: cls.__name__)
def test_classes_compared_by_exact_type_have_no_subclasses(node_class: type) -> None:
    assert node_class.__subclasses__() == []
