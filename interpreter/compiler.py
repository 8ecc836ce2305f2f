"""Old import paths: the compiler was split into runtime.py (ops, places, decision ops, value helpers),
closures.py (the reference backend and the op layout) and generate.py (the generated backend)."""
from .builtins import WORK_BUDGET, too_much  # noqa: F401
from .closures import ExprCompiler, StmtCompiler, _constant, _guarded, _jump, _jump_unless  # noqa: F401
from .runtime import (  # noqa: F401
    DONE_ID, END, MAX_ACTION_CHOICES, MAX_ACTION_ID, MAX_FIXED_ITEMS, MAX_FUNCTION_DEPTH, MAX_INT, MAX_ITEMS,
    MAX_PICKS, RETURN, SUSPEND, ChooseOp, Code, CompiledAction, CompiledFunction, Located, OfferOp, Pending, Place,
    RandomOp, _arith, _arith_raw, _builtin_error, _check_map, _check_root, _choice_options, _contains, _copy_cost,
    _Done, _DONE, _equal, _expr_text, _Fixed, _get, _items, _long_id, _refresh_choose, _set, _set_path, _short,
    _size, add_item, distinct, index_chain, range_check, remove_item)
