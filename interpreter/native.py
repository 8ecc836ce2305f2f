"""The opt-in native path: the generated module of a Ruleset compiled by Cython into a C extension.

Off unless asked for (``RULELANG_NATIVE=1``, or ``--native`` on ``rulelang play`` / ``simulate``): it runs
a C compiler on source made from a rule file, so it never happens for untrusted input by default.

What is compiled is the generated source itself (interpreter/codegen: only the generator writes it, every
rule name mangled, every literal a repr or a constant of the table ``K``), wrapped in one factory function
``make(ns)``: the names the source reads from its namespace (constants ``k_N``, the run-time helpers) become
locals of ``make``, the generated functions its inner functions. Each Ruleset calls ``make`` with its own
namespace, so one compiled module serves every Ruleset of the same source in a process, and the inner
functions read their constants and each other as closure cells. Cython compiles plain Python here (no type
declarations: every value keeps Python's semantics, numbers their unbounded size), so the compiled
functions compute, charge work, look at the budget and the time limit, count the depth and fail with the
same messages as the Python ones; only the interpreter's dispatch between them is gone.

The functions handed out before (stubs held by ops, actions, the engine) keep their identity: each is
given a two-line body that calls its compiled twin (see _forwarder).

The extension is kept in ``<cache folder>/native/`` (the folder of rulelang/cache.py, private to the user)
under a name made of a SHA-256 of the wrapped source, the Cython version, the Python ABI, the compiler
command and this module's format; a later load of the same rules imports it without compiling. The
folder keeps at most MAX_NATIVE_BYTES of modules: beyond, the least recently used are removed. Cython and
the C compiler run as child processes bounded in CPU time (``RULELANG_NATIVE_CPU``, default 300 s), memory
and wall time. When Cython or a compiler is missing, or anything fails, the Python functions stay as they
are and ``Ruleset.native`` says why (one note; never a traceback).
"""
from __future__ import annotations

import builtins as _py_builtins
import contextlib
import keyword
import os
import re
import sys
import types

from rulelang import cache as _cache

FORMAT = "rulelang-native-1"
DEFAULT_CPU_SECONDS = 300  # Cython plus the C compiler, each: the largest shipped rulebook's 1.8 MB of generated source needs the most
MEMORY_BYTES = 4 << 30  # address space of each child process
CFLAGS = ("-O2", "-fPIC", "-shared", "-fno-strict-aliasing", "-DNDEBUG", "-w")
# a C file larger than this (a rulebook's generated source can make tens of MB of C) is compiled
# with -O1: half of gcc's time, some 5% slower than -O2 (a draughts-like example: 1.30x the Python path, against 1.41x)
LARGE_C_BYTES = 8 << 20
MAX_NATIVE_BYTES = 512 << 20  # compiled modules kept in all (0.3-9 MB each); the least recently used go first
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_loaded: dict = {}  # module name -> the imported extension (one import per process, shared by Rulesets)


def wanted() -> bool:
    """Whether the native path is asked for (``RULELANG_NATIVE`` set to anything but empty and ``0``)."""
    return os.environ.get("RULELANG_NATIVE", "") not in ("", "0")


def cpu_seconds() -> int:
    try:
        return max(1, min(int(os.environ.get("RULELANG_NATIVE_CPU", "")), 3600))
    except ValueError:
        return DEFAULT_CPU_SECONDS


class NativeUnavailable(Exception):
    """Why the native path was not taken (the note shown)."""


# ============================================================================ the source compiled
def wrap(source, ns, safe_builtins):
    """(the module source, the names of its functions): ``source`` (top-level defs only) inside
    ``def make(ns)``, each name it reads from ns bound first. Raises NativeUnavailable on a name the
    Python path could not reach (a built-in outside safe_builtins), so the compiled code can reach no more."""
    import ast
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
        raise NativeUnavailable(f"the generated source does not parse ({type(e).__name__})") from None
    defined = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            raise NativeUnavailable("the generated source holds more than function definitions")
        defined.append(node.name)
    names = set()
    try:
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                names.add(node.id)
    except RecursionError:
        raise NativeUnavailable("the generated source is nested too deeply") from None
    bound = []
    for n in sorted(names):
        if not _IDENT.match(n) or keyword.iskeyword(n) or n.startswith("__") or n in ("ns", "make", "cython"):
            raise NativeUnavailable(f"the generated source names {n!r}")
        if n in defined:
            continue
        if n in ns and n != "__builtins__":
            bound.append(n)
        elif hasattr(_py_builtins, n) and n not in safe_builtins:
            raise NativeUnavailable(f"the generated source names the built-in {n!r}")
    lines = ["def make(ns):"]
    lines += [f"    {n} = ns[{n!r}]" for n in bound]
    lines += [("    " + line) if line.strip() else "" for line in source.splitlines()]
    lines.append("    return {" + ", ".join(f"{n!r}: {n}" for n in defined) + "}")
    return "\n".join(lines) + "\n", defined


def _compiler():
    import shlex
    import sysconfig
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    return shlex.split(cc)


def _key(text):
    import sysconfig
    try:
        import Cython
    except ImportError:
        raise NativeUnavailable("Cython is not installed (pip install 'rulelang[native]')") from None
    parts = [FORMAT, Cython.__version__, sys.version, sysconfig.get_config_var("EXT_SUFFIX") or "",
             " ".join(_compiler()), " ".join(CFLAGS), f"-O1 above {LARGE_C_BYTES}", text]
    return _cache._sha256("\0".join(parts).encode()).hexdigest()


def _folder():
    top = _cache.cache_dir()
    if top is None:
        raise NativeUnavailable("no cache folder to keep the compiled module in")
    folder = os.path.join(top, "native")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
    except (OSError, ValueError) as e:
        raise NativeUnavailable(f"cannot make {folder}: {e.strerror or e}") from None
    if not (_cache._private(top) and _cache._private(folder)):  # a module loaded from here runs as this user
        raise NativeUnavailable(f"{folder} is not private to this user")
    return folder


def _limits(cpu):
    def apply():
        import resource
        for which, want in ((resource.RLIMIT_CPU, cpu), (resource.RLIMIT_AS, MEMORY_BYTES)):
            try:  # never above a limit this process has already (a hard limit cannot be raised)
                _, hard = resource.getrlimit(which)
                if hard != resource.RLIM_INFINITY:
                    resource.setrlimit(which, (min(want, hard), hard))
                elif which == resource.RLIMIT_CPU:  # SIGXCPU at the soft limit, SIGKILL a second later
                    resource.setrlimit(which, (want, want + 1))
                else:
                    resource.setrlimit(which, (want, hard))
            except (ValueError, OSError):
                pass
    return apply


def _run(cmd, what, cpu, cwd):
    import subprocess
    try:
        done = subprocess.run(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, preexec_fn=_limits(cpu), timeout=cpu * 3 + 30)
    except FileNotFoundError:
        raise NativeUnavailable(f"{what} not found ({cmd[0]})") from None
    except subprocess.TimeoutExpired:
        raise NativeUnavailable(f"{what} took too long") from None
    except OSError as e:
        raise NativeUnavailable(f"{what} could not start: {e.strerror or e}") from None
    if done.returncode != 0:
        tail = done.stdout.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        why = f"exit status {done.returncode}" if done.returncode > 0 else f"stopped by signal {-done.returncode}"
        raise NativeUnavailable(f"{what} failed ({why}){': ' + tail[0][:200] if tail[0] else ''}")


def _sweep(folder, age):
    """Remove the build folders of compiles that were killed (older than any compile may run)."""
    import shutil
    import time
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.name.startswith("build-") and entry.is_dir(follow_symlinks=False) and \
                    time.time() - entry.stat(follow_symlinks=False).st_mtime > age:
                shutil.rmtree(entry.path, ignore_errors=True)
        except OSError:
            pass


def build(text, name, folder):
    """Compile the module source `text` as extension `name` in folder; returns its path."""
    import sysconfig
    import tempfile
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    final = os.path.join(folder, name + suffix)
    if os.path.exists(final):
        with contextlib.suppress(OSError):
            os.utime(final)  # used now: the last to go when the folder is pruned
        return final
    cpu = cpu_seconds()
    _sweep(folder, cpu * 3 + 60)
    with tempfile.TemporaryDirectory(dir=folder, prefix="build-") as tmp:
        py = os.path.join(tmp, name + ".py")
        with open(py, "w", encoding="utf-8") as f:
            f.write(text)
        _run([sys.executable, "-m", "cython", "-3", "-o", name + ".c", name + ".py"], "Cython", cpu, tmp)
        include = sysconfig.get_paths()["include"]
        flags = list(CFLAGS)
        if os.path.getsize(os.path.join(tmp, name + ".c")) > LARGE_C_BYTES:
            flags = ["-O1" if f == "-O2" else f for f in flags]
        _run(_compiler() + flags + [f"-I{include}", "-o", name + suffix, name + ".c"], "the C compiler", cpu, tmp)
        os.replace(os.path.join(tmp, name + suffix), final)
    _cache.prune(folder, MAX_NATIVE_BYTES, skip=("build-",))  # (not the compiles under way)
    return final


def load(path, name):
    import importlib.machinery
    import importlib.util
    module = _loaded.get(name)
    if module is None:
        loader = importlib.machinery.ExtensionFileLoader(name, path)
        spec = importlib.util.spec_from_file_location(name, path, loader=loader)
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
        _loaded[name] = module
    return module


# ============================================================================ the functions handed out
_forwarders: dict = {}


def _forwarder(params):
    """The code of `def f(<params>, _native=None): return _native(<params>)`."""
    code = _forwarders.get(params)
    if code is None:
        args = ", ".join(params)
        src = f"def forward({args}{', ' if args else ''}_native=None):\n    return _native({args})\n"
        module = compile(src, "<rulelang native>", "exec")
        code = _forwarders[params] = next(c for c in module.co_consts if isinstance(c, types.CodeType))
    return code


def use(rs):
    """Run the generated code of Ruleset rs compiled (see apply), and hand the compiled functions themselves
    to the engine's hot places (the ops of every code, the legality functions, the endings' conditions), so
    that no forwarding call is left there. Returns None when done, else the note saying why not."""
    from .codegen.helpers import SAFE_BUILTINS
    note, twins = apply(rs._xc.source, rs._xc.mod.ns, SAFE_BUILTINS)
    if note is None:
        rebind(rs, twins)
    return note


def rebind(rs, twins):
    """Replace the forwarding functions (id -> compiled twin) where the engine calls them most."""
    def swap(f):
        return twins.get(id(f), f) if f.__class__ is types.FunctionType else f
    for code in rs.codes.values():
        code.ops[:] = [swap(op) for op in code.ops]
        if code.whole is not None:
            code.whole = swap(code.whole)
    for act in rs.actions.values():
        if getattr(act, "fast_legal", None) is not None:
            act.fast_legal = swap(act.fast_legal)
    rs.ending_checks = [(name, swap(cond), span) for name, cond, span in rs.ending_checks]


def apply(source, ns, safe_builtins):
    """Compile (or find in the cache) the generated `source` and point every function of ns it defines at
    its compiled twin. Returns (None, {id of a function handed out: its compiled twin}) when done, else
    (the note saying why the Python functions stay, {})."""
    try:
        text, defined = wrap(source, ns, safe_builtins)
        name = "rulelang_native_" + _key(text)[:32]
        module = load(build(text, name, _folder()), name)
        made = module.make(ns)
    except NativeUnavailable as e:
        return str(e), {}
    except Exception as e:  # noqa: BLE001 - an import or the factory failing: the Python path stays
        return f"the compiled module could not be used ({type(e).__name__}: {str(e)[:200]})", {}
    twins = {}
    for fname in defined:
        stub = ns.get(fname)
        if not isinstance(stub, types.FunctionType):
            continue
        code = stub.__code__
        params = code.co_varnames[:code.co_argcount]
        if code.co_flags & (0x04 | 0x08) or code.co_kwonlyargcount or stub.__defaults__:
            continue  # (*args, **kws or defaults: never written by the generator) left as Python
        stub.__code__ = _forwarder(params)
        stub.__defaults__ = (made[fname],)
        twins[id(stub)] = made[fname]
    return None, twins
