"""Writing a file whole or not at all: the text goes to a temporary file beside the target, which then
replaces it (`os.replace`), so a reader never sees half a file and a failure leaves the old one."""
from __future__ import annotations

import contextlib
import os
import tempfile


@contextlib.contextmanager
def open_atomic(path, mode: str = "w", **kwargs):
    """A file object (``mode`` "w" or "wb"; ``kwargs`` go to ``open``, text defaults to UTF-8) that
    becomes ``path`` only when the ``with`` block ends without an exception: then it is flushed, synced
    and moved over ``path``; otherwise it is removed and ``path`` is left as it was."""
    if mode not in ("w", "wb"):
        raise ValueError(f"open_atomic writes a new file: mode 'w' or 'wb', not {mode!r}")
    if mode == "w":
        kwargs.setdefault("encoding", "utf-8")
    target = os.path.abspath(path)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".", suffix=".tmp",
                               dir=os.path.dirname(target))
    try:
        with os.fdopen(fd, mode, **kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_text_atomic(path, text: str) -> None:
    with open_atomic(path, "w") as fh:
        fh.write(text)
