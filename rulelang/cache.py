"""A cache of check results, keyed by content, so that checking an unchanged rule file again is quick.

An entry belongs to one top file checked with given variants and root (the key); it holds the
files that check read (the `extends` chain, the rulebook, and the paths it only looked at), each
with a fingerprint of what it found (a SHA-256 of the bytes, or what stood there instead), and the
diagnostics. An entry is used only when every one of those files still has the same fingerprint,
and when the rulelang code (a fingerprint of its source files), the grammar and the Python version
are the ones that wrote it: any edit misses.

Entries are plain JSON (never pickle: nothing in them is run) after a first line with a checksum of
it, read with a size limit from files owned by the current user (in a folder only they may enter),
and checked field by field before use: a corrupt, truncated, foreign or unreadable entry is
ignored and written again. Writes go to a temporary file renamed into place.
A cache folder that cannot be made or written only means nothing is cached.

Where: ``$RULELANG_CACHE_DIR``, else ``$XDG_CACHE_HOME/rulelang``, else ``~/.cache/rulelang``.
Off: ``RULELANG_NO_CACHE=1`` (or ``rulelang check --no-cache``).

Only the standard library is imported here: a cache hit must not pay for the parser or checker.
"""
from __future__ import annotations

import contextlib
import contextvars
import json
import os
import stat
import sys

TYPE_CHECKING = False  # (not typing's: a cache hit imports nothing it does not need)
if TYPE_CHECKING:
    from typing import Any, Iterable, Iterator, Optional

    from .diagnostics import Diagnostic

    Dep = list[str]  # one file a check read: [path, real path, fingerprint] (a list: what JSON gives back)
    Stored = dict[str, Any]  # one stored diagnostic: "fields", "text", "json"

try:  # the built-in SHA-256 loads in a fraction of the time of hashlib's OpenSSL module (the same digests)
    from _sha2 import sha256 as _sha256  # type: ignore[import-not-found]  # (CPython's own module: no stubs)
except ImportError:
    try:
        from _sha256 import sha256 as _sha256  # type: ignore[import-not-found]  # (before Python 3.12)
    except ImportError:
        from hashlib import sha256 as _sha256

FORMAT = "rulelang-check-cache"
FORMAT_VERSION = 1
MAX_ENTRY_BYTES = 16 * 1024 * 1024  # a check of a large game stores ~50 KB
MAX_DEPS = 64  # files one check may depend on (extends is at most 16 deep, plus the rulebook)
MAX_CHECK_BYTES = 64 * 1024 * 1024  # the check entries kept in all (the least recently used go first)
READ_LIMIT = 1_000_000  # program.MAX_FILE_BYTES: a file larger than this is not read, only noted as large

_DIAG_INT = ("line", "column", "end_line", "end_column")
_DIAG_STR = ("path", "code", "message", "severity", "hint", "source_line")
_SEVERITIES = ("error", "warning", "note")

_active = contextvars.ContextVar("rulelang_cache_active", default=False)
_reads: contextvars.ContextVar[Optional[list[Dep]]] = contextvars.ContextVar("rulelang_cache_reads", default=None)
_stamp: Optional[str] = None


# ---------------------------------------------------------------------------------------- switches
def disabled_by_env() -> bool:
    """Whether ``RULELANG_NO_CACHE`` turns the cache off (any value but empty and ``0``)."""
    return os.environ.get("RULELANG_NO_CACHE", "") not in ("", "0")


def active() -> bool:
    """Whether ``rulelang.check`` uses the cache now (the command line turns it on; see ``using``)."""
    return _active.get() and not disabled_by_env()


@contextlib.contextmanager
def using(on: bool = True) -> Iterator[None]:
    """Use the cache (or not) for checks made inside the block."""
    token = _active.set(bool(on))
    try:
        yield
    finally:
        _active.reset(token)


def cache_dir() -> Optional[str]:
    """The cache folder (it may not exist yet), or None when no usable one is named."""
    try:
        explicit = os.environ.get("RULELANG_CACHE_DIR", "")
        if explicit:
            return os.path.abspath(os.path.expanduser(explicit))
        xdg = os.environ.get("XDG_CACHE_HOME", "")
        if xdg and os.path.isabs(xdg):  # a relative XDG_CACHE_HOME is invalid and ignored (XDG spec)
            return os.path.join(xdg, "rulelang")
        home = os.path.expanduser("~")
        if not home or home == "~":
            return None
        return os.path.join(home, ".cache", "rulelang")
    except (ValueError, OSError, RuntimeError):
        return None


# ---------------------------------------------------------------------------------------- fingerprints
def code_stamp() -> str:
    """A fingerprint of the code that checks: every source file of rulelang and the interpreter (name,
    size, modification time), the grammar, the Python version. Computed once per process."""
    global _stamp
    if _stamp is None:
        here = os.path.dirname(os.path.abspath(__file__))
        parts = [f"{sys.version_info[0]}.{sys.version_info[1]}", _version()]
        for top in (here, os.path.join(os.path.dirname(here), "interpreter")):
            for folder, dirs, files in os.walk(top):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
                for name in sorted(files):
                    if name.endswith((".py", ".lark")):
                        try:
                            st = os.stat(os.path.join(folder, name))
                        except OSError:
                            continue
                        parts.append(f"{os.path.relpath(os.path.join(folder, name), top)}:{st.st_size}:{st.st_mtime_ns}")
        _stamp = _sha256("\n".join(parts).encode("utf-8", "surrogateescape")).hexdigest()
    return _stamp


def _version() -> str:
    from rulelang import __version__

    return __version__


def file_state(path: str, follow: bool = True) -> str:
    """What stands at ``path``, as far as reading it as a rule file or rulebook can tell: ``sha256:...``
    of the bytes of a regular file up to the read limit, else what is there instead."""
    from .openflags import open_flags

    flags = open_flags(follow)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return "missing"
    except OSError as e:
        return f"error:{e.errno}"
    except ValueError:
        return "bad-name"
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            return "folder"
        if not stat.S_ISREG(st.st_mode):
            return "special"
        if st.st_size > READ_LIMIT:
            return f"large:{st.st_size}"
        chunks: list[bytes] = []
        got = 0
        while got <= READ_LIMIT:
            chunk = os.read(fd, min(1 << 16, READ_LIMIT + 1 - got))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        if got > READ_LIMIT:
            return "large"
        return digest(b"".join(chunks))
    except OSError as e:
        return f"error:{e.errno}"
    finally:
        os.close(fd)


def digest(data: bytes) -> str:
    return "sha256:" + _sha256(data).hexdigest()


def _real(path: str) -> str:
    try:
        return os.path.realpath(path)
    except (ValueError, OSError):
        return ""


# ---------------------------------------------------------------------------------------- recording reads
@contextlib.contextmanager
def recording() -> Iterator[list[Dep]]:
    """Collect the files looked at inside the block (see ``note``); yields the list."""
    found: list[Dep] = []
    token = _reads.set(found)
    try:
        yield found
    finally:
        _reads.reset(token)


def note(path: str | bytes, data: Optional[bytes] = None, follow: bool = True) -> None:
    """Record that checking looked at ``path`` (``data``: the bytes read from it, if it was read)."""
    found = _reads.get()
    if found is None:
        return
    try:
        path = os.fsdecode(path)
        state = digest(data) if data is not None else file_state(path, follow)
        found.append([path, _real(path), state])
    except (ValueError, TypeError, UnicodeError):
        found.append(["", "", "bad-name"])  # a name that cannot be looked at again: never a hit


# ---------------------------------------------------------------------------------------- entries
def _key(path: str, variants: Iterable[str], root: Optional[str]) -> dict[str, Any]:
    return {
        "path": path,
        "abspath": os.path.abspath(path),
        "cwd": os.getcwd(),
        "variants": list(variants),
        "root": os.path.abspath(os.fspath(root)) if root is not None else None,
        "code": code_stamp(),
    }


def _entry_path(key: dict[str, Any]) -> Optional[str]:
    folder = cache_dir()
    if folder is None:
        return None
    name = _sha256(json.dumps(key, sort_keys=True, ensure_ascii=True).encode("ascii")).hexdigest()
    return os.path.join(folder, "check", name[:2], name + ".json")


def _read_entry(file: str) -> Any:
    """The JSON of an entry file, or None (see _read_sealed)."""
    body = _read_sealed(file, FORMAT, MAX_ENTRY_BYTES)
    if body is None:
        return None
    try:
        return json.loads(body.decode("ascii"))
    except (ValueError, RecursionError, UnicodeError):
        return None


def _read_sealed(file: str, fmt: str, limit: int) -> Optional[bytes]:
    """The body of a file written by _seal(fmt, ...), or None: only a regular file owned by this user and
    not writable by others, at most ``limit`` bytes, never through a symbolic link, whose checksum
    line matches its body."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(file, flags)
    except (OSError, ValueError):
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit or st.st_mode & 0o022:
            return None
        if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
            return None
        chunks: list[bytes] = []
        got = 0
        while got <= limit:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        if got > limit:
            return None
        head, _, body = b"".join(chunks).partition(b"\n")
        if head != _header(body, fmt):  # damaged (a bit flipped, a part cut off): a miss
            return None
        return body
    except OSError:
        return None
    finally:
        os.close(fd)


def _header(body: bytes, fmt: str = FORMAT) -> bytes:
    """The first line of an entry: the format and a checksum of the JSON that follows it."""
    version = FORMAT_VERSION if fmt == FORMAT else 1
    return f"{fmt} {version} {_sha256(body).hexdigest()}".encode("ascii")


def _valid_diag(d: Any) -> bool:
    if not isinstance(d, dict) or set(d) != {"fields", "text", "json"}:
        return False
    f, text, js = d["fields"], d["text"], d["json"]
    if not (isinstance(f, dict) and set(f) == set(_DIAG_INT) | set(_DIAG_STR)):
        return False
    if not all(type(f[k]) is int and 0 <= f[k] < 1 << 62 for k in _DIAG_INT):
        return False
    if not all(isinstance(f[k], str) for k in _DIAG_STR) or f["severity"] not in _SEVERITIES:
        return False
    if not isinstance(text, str) or not isinstance(js, dict):
        return False
    return all(isinstance(k, str) and (isinstance(v, str) or type(v) is int) for k, v in js.items())


def _valid(entry: Any, key: dict[str, Any]) -> bool:
    if not isinstance(entry, dict) or entry.get("format") != FORMAT or entry.get("version") != FORMAT_VERSION:
        return False
    if entry.get("key") != key:
        return False
    deps, diags = entry.get("deps"), entry.get("diagnostics")
    if not isinstance(deps, list) or not deps or len(deps) > MAX_DEPS:
        return False
    if not all(isinstance(x, list) and len(x) == 3 and all(isinstance(s, str) for s in x) for x in deps):
        return False
    return isinstance(diags, list) and all(_valid_diag(d) for d in diags)


def _current(deps: list[Dep]) -> bool:
    """Whether every file the entry depends on still looks the same."""
    for path, real, state in deps:
        if not path or _real(path) != real or file_state(real) != state:
            return False
    return True


def lookup(path: str, variants: Iterable[str] = (), root: Optional[str] = None) -> Optional[list[Stored]]:
    """The stored diagnostics of checking ``path`` (a list of dicts with ``fields``, ``text`` (the
    rendered diagnostic) and ``json`` (``Diagnostic.to_dict()``)), or None."""
    try:
        key = _key(os.fspath(path), variants, root)
        file = _entry_path(key)
        if file is None:
            return None
        entry = _read_entry(file)
        if entry is None or not _valid(entry, key) or not _current(entry["deps"]):
            return None
        with contextlib.suppress(OSError):
            os.utime(file)  # used now: the last to go when the cache is pruned
        return entry["diagnostics"]
    except (OSError, ValueError, TypeError, RecursionError):
        return None


def store(path: str, variants: Iterable[str], root: Optional[str], deps: list[Dep],
          diagnostics: list[Diagnostic]) -> bool:
    """Store the diagnostics of a check (Diagnostic objects) that read ``deps`` (from ``recording``).
    Returns whether an entry was written; never raises for a problem with the cache folder."""
    try:
        path = os.fspath(path)
        if not deps or len(deps) > MAX_DEPS or deps[0][0] != path or not deps[0][2].startswith("sha256:"):
            return False  # only a check that read its top file is worth keeping
        if sum(len(d.source_line) + len(d.message) + len(d.hint) for d in diagnostics) > MAX_ENTRY_BYTES // 4:
            return False  # (thousands of diagnostics on one huge line: kept, it would fill the memory)
        key = _key(path, variants, root)
        file = _entry_path(key)
        if file is None:
            return False
        entry = {
            "format": FORMAT, "version": FORMAT_VERSION, "key": key, "deps": deps,
            "diagnostics": [{"fields": {k: getattr(d, k) for k in _DIAG_STR + _DIAG_INT},
                             "text": d.render(), "json": d.to_dict()} for d in diagnostics],
        }
        if not _valid(entry, key):
            return False
        body = json.dumps(entry, separators=(",", ":")).encode("ascii")
        data = _header(body) + b"\n" + body
        if len(data) > MAX_ENTRY_BYTES:
            return False
        _write_atomic(file, data)
        prune(os.path.dirname(os.path.dirname(file)), MAX_CHECK_BYTES)
        return True
    except (OSError, ValueError, TypeError, UnicodeError, RecursionError):
        return False


def prune(folder: str, max_bytes: int, skip: tuple[str, ...] = ()) -> int:
    """Keep the regular files below ``folder`` (this cache's own: a subfolder of the cache folder) at
    most ``max_bytes`` in all: when they are more, remove the least recently used (by modification
    time, which a hit renews) until they are at most three quarters of it, so that pruning is rare.
    Symbolic links, and folders whose names start with one of ``skip`` (work in progress), are neither
    followed nor counted. Returns the number of files removed; a file that
    cannot be looked at or removed is left (never raises)."""
    files: list[tuple[float, int, str]] = []
    total = 0
    stack = [folder]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if not entry.name.startswith(skip):
                        stack.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    st = entry.stat(follow_symlinks=False)
                    files.append((st.st_mtime, st.st_size, entry.path))
                    total += st.st_size
            except OSError:
                continue
    if total <= max_bytes:
        return 0
    removed = 0
    for _, size, file in sorted(files):
        if total <= max_bytes * 3 // 4:
            break
        try:
            os.unlink(file)
        except OSError:
            continue
        total -= size
        removed += 1
    return removed


def _write_atomic(file: str, data: bytes) -> None:
    top = cache_dir()
    if top is None:  # (the environment named no cache folder after all)
        raise FileNotFoundError("no cache folder")
    os.makedirs(top, mode=0o700, exist_ok=True)  # the cache itself is private (its subfolders too)
    os.makedirs(os.path.dirname(file), mode=0o700, exist_ok=True)
    if not _private(top) or not _private(os.path.dirname(file)):
        raise PermissionError("the cache folder is not this user's own")
    tmp = f"{file}.{os.getpid()}-{os.urandom(6).hex()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(tmp, flags, 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, file)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def diagnostics_of(stored: list[Stored]) -> list[Diagnostic]:
    """Diagnostic objects from the stored form (see ``lookup``)."""
    from .diagnostics import Diagnostic

    return [Diagnostic(**d["fields"]) for d in stored]


def _private(folder: str) -> bool:
    """Whether ``folder`` belongs to this user and nobody else may write in it."""
    try:
        st = os.stat(folder)
    except (OSError, ValueError):
        return False
    if not stat.S_ISDIR(st.st_mode) or st.st_mode & 0o022:
        return False
    return not hasattr(os, "geteuid") or st.st_uid == os.geteuid()
