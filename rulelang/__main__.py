"""``rulelang`` and ``python -m rulelang``: the command line (see ``rulelang.cli``).

Two commands are answered here without loading the command-line library (click): ``rulelang
--version``, and ``rulelang check FILE...`` (with ``--json``, ``--variant``, ``--root``,
``--no-cache``) on readable files; when the check cache (rulelang/cache.py) has the answer, neither
the parser nor the checker is loaded either. The output is the one ``rulelang.cli`` prints, byte for
byte; in every other case (another option, a folder, an unreadable file, an unknown variant, any
error) the full command line runs and answers.
"""
import os
import sys


def main(argv=None):
    """Console entry point (``rulelang = rulelang.__main__:main``)."""
    args = sys.argv[1:] if argv is None else [str(a) for a in argv]
    code = _quick(args)
    if code is not None:
        sys.exit(code)
    from rulelang.cli import main as full

    return full(argv)


def _quick(args):
    """The exit code after answering the command, or None when the full command line must answer."""
    try:
        if args == ["--version"]:
            from rulelang import __version__

            return _write(f"rulelang {__version__}\n")
        if args[:1] == ["check"]:
            import gc

            # A check allocates objects by the hundred thousand (modules, the AST, types) that mostly
            # live until it ends: collecting the young ones every 700 allocations is wasted work (some
            # 10% of a cold check). As mypy does, collect far less often while checking.
            thresholds = gc.get_threshold()
            gc.set_threshold(200_000, 30, 30)
            try:
                return _check(args[1:])
            finally:
                gc.set_threshold(*thresholds)
    except Exception:  # never worse than the full command line: it answers instead
        return None
    return None


def _check(args):
    files, variants, root, as_json, use_cache = [], [], None, False, True
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--json":
            as_json = True
        elif a == "--no-cache":
            use_cache = False
        elif a in ("--variant", "--root"):
            if i + 1 >= len(args):
                return None
            i += 1
            if a == "--variant":
                variants.append(args[i])
            else:
                root = args[i]
        elif a.startswith("--variant="):
            variants.append(a[len("--variant="):])
        elif a.startswith("--root="):
            root = a[len("--root="):]
        elif a.startswith("-"):
            return None  # --explore, --placeholders, --help, "--", "-": the full command line
        else:
            files.append(a)
        i += 1
    if not files or (root is not None and (not root or not os.path.isdir(root))):
        return None
    from rulelang import cache

    use_cache = use_cache and not cache.disabled_by_env()
    out, items, failed = [], [], False
    for path in files:
        if not path.isprintable() or not os.path.isfile(path) or not os.access(path, os.R_OK):
            return None  # a folder, an unreadable file: the full command line says so in its own way
        found = _diagnostics(path, tuple(variants), root, use_cache)
        if found is None or any(code == "E106" for _, code, _, _ in found):
            return None  # E106 (an unknown variant) is a usage error on the command line
        sev = [severity for severity, _, _, _ in found]
        errors = sev.count("error")
        failed = failed or errors > 0
        if as_json:
            items.extend(js for _, _, _, js in found)
            continue
        out.extend(text for _, _, text, _ in found)
        parts = [_plural(errors, "error"), _plural(sev.count("warning"), "warning")]
        if sev.count("note"):
            parts.append(_plural(sev.count("note"), "note"))
        out.append(f"{path}: {', '.join(parts)}")
    if as_json:
        import json

        out = [json.dumps(items, indent=2)]
    text = "".join(line + "\n" for line in out)
    if "\x1b" in text:
        return None  # click strips terminal escapes when not writing to a terminal: let it
    return _write(text, 1 if failed else 0)


def _diagnostics(path, variants, root, use_cache):
    """(severity, code, rendered text, JSON form) of each diagnostic of ``path``: from the cache when it
    has them, else from rulelang.check (which stores them)."""
    from rulelang import cache

    key = tuple(variants) or ("<every variant>",)  # (rulelang.api.EVERY_VARIANT, without importing it)
    stored = cache.lookup(path, key, root) if use_cache else None
    if stored is not None:
        return [(d["fields"]["severity"], d["fields"]["code"], d["text"], d["json"]) for d in stored]
    from rulelang import api

    kw = {"root": root} if root else {}
    diags = api.check(path, variants=variants, cache=use_cache, every_variant=True, **kw)
    return [(d.severity, d.code, d.render(), d.to_dict()) for d in diags]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _write(text: str, code: int = 0):
    """Write ``text`` to stdout as click.echo would (a UTF-8 stream only), or None to leave it to click."""
    stream = sys.stdout
    if stream is None or (getattr(stream, "encoding", "") or "").lower().replace("_", "-") not in ("utf-8", "utf8"):
        return None
    try:
        stream.write(text)
        stream.flush()
    except BrokenPipeError:  # `rulelang check ... | head`: stop quietly, as the full command line does
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 1
    except OSError:
        return 1
    return code


if __name__ == "__main__":
    main()
