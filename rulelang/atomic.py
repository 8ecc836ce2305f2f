"""Writing a file whole or not at all: the text goes to a temporary file beside the target, which then
replaces it (`os.replace`), so a reader never sees half a file and a failure leaves the old one.

The new file gets the mode a plain ``open(path, "w")`` would leave: the target's own mode (and, for
root, its owner) when it exists, else 0666 less the umask. A temporary file alone would be 0600."""
from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from typing import IO, Any, Iterator


def current_umask() -> int:
    """The process's umask, read without changing it where Linux tells it (/proc), else set and put back."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _mode_for(target: str) -> tuple[int, tuple[int, int] | None]:
    """(mode, owner or None) the written file should have."""
    try:
        st = os.stat(target)
    except OSError:
        return 0o666 & ~current_umask(), None
    if not stat.S_ISREG(st.st_mode):
        return 0o666 & ~current_umask(), None
    return stat.S_IMODE(st.st_mode), (st.st_uid, st.st_gid)


@contextlib.contextmanager
def open_atomic(path: str | os.PathLike[str], mode: str = "w", **kwargs: Any) -> Iterator[IO[Any]]:
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
            file_mode, owner = _mode_for(target)
            os.fchmod(fh.fileno(), file_mode)
            if owner is not None and os.geteuid() == 0 and owner != (os.geteuid(), os.getegid()):
                with contextlib.suppress(OSError):
                    os.fchown(fh.fileno(), *owner)
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    with open_atomic(path, "w") as fh:
        fh.write(text)
