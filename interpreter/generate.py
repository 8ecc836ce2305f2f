"""The generated backend's old single module: it now lives in the package interpreter/codegen/ (helpers,
module, expressions with hoisting and loops, statements). These names stay importable from here."""
from __future__ import annotations

from .codegen.expressions import ExprGenerator  # noqa: F401
from .codegen.helpers import (_NO_REPEATS, SAFE_BUILTINS, GenerationFailed, _runtime_names,  # noqa: F401
                              distinct_items)
from .codegen.statements import StmtGenerator, _statement_names, make_stmt_generator  # noqa: F401
