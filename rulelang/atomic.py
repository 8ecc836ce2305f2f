"""Writing a file whole or not at all: the text goes to a temporary file beside the target, which then
replaces it (`os.replace`), so a reader never sees half a file and a failure leaves the old one."""
from __future__ import annotations

import os
import tempfile


def write_text_atomic(path, text: str) -> None:
    target = os.path.abspath(path)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".", suffix=".tmp",
                               dir=os.path.dirname(target))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
