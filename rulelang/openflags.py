"""How rule files, rulebooks and cache entries are opened (rulelang/program.py, rulelang/cache.py): a
module of its own, so that a cache hit imports nothing heavy."""
import os


def open_flags(follow: bool = True) -> int:
    """os.open flags for reading a file that may be anything: never blocks on a FIFO, never becomes a
    terminal's controlling file; `follow=False` refuses a symbolic link as the last component."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    return flags
