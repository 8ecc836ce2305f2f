"""Where the language server finds the text of a rulebook section, for hovering a citation `@rule "S-7"`.

A rulebook is a Markdown file whose sections start with headings `## [ID] title` (the form the
citation lint W306 reads, lints.SECTION_RE). The section's text runs from its heading to the next
heading of level 1 or 2. The Markdown files looked at, in this order (the first that has the section
answers):

1. the rulebook the file's header names (`rulebook "../rulebooks/x.md"`, relative to the file that
   declares the header; read as `rulelang check` reads it: program.read_rulebook);
2. the folders of the setting `rulebooks` (the server's initialization options or the workspace
   setting `rulelang.rulebooks`), then of the environment variable ``RULELANG_RULEBOOKS`` (folders
   separated by ``os.pathsep``): in each, a file of the same name as the header's rulebook first, then
   every ``*.md`` file of the folder;
3. ``../shared/rulebooks/`` next to the repository that holds the rule file (the first folder above it
   with ``.git`` or ``pyproject.toml``), and next to the checkout rulelang itself runs from.

Nothing is copied: the text is read when asked, at most ``MAX_FILES`` files of at most 1 MB each.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Optional

ENV = "RULELANG_RULEBOOKS"
MAX_FILES = 40  # Markdown files looked at for one citation
MAX_SECTION_CHARS = 6000  # text shown in a hover
_NEXT_HEADING = re.compile(r"^#{1,2} ", re.M)

_cache = {}  # path -> ((mtime_ns, size), text or None)


def section_text(markdown: str, section: str) -> Optional[str]:
    """The text of section ``section`` (its heading included), or None when the rulebook has no such
    heading."""
    m = re.search(r"^## \[" + re.escape(section) + r"\][^\n]*", markdown, re.M)
    if m is None:
        return None
    end = _NEXT_HEADING.search(markdown, m.end())
    text = markdown[m.start():end.start() if end else len(markdown)].strip()
    if len(text) > MAX_SECTION_CHARS:
        text = text[:MAX_SECTION_CHARS].rstrip() + "\n\n..."
    return text


def _read(path: str) -> Optional[str]:
    from .program import FileProblem, read_limited

    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    key = (st.st_mtime_ns, st.st_size)
    hit = _cache.get(path)
    if hit is not None and hit[0] == key:
        return hit[1]
    try:
        text = read_limited(path).decode("utf-8")
    except (FileProblem, UnicodeDecodeError, OSError):
        text = None
    if len(_cache) > 64:
        _cache.clear()
    _cache[path] = (key, text)
    return text


def _repository(path: str) -> Optional[Path]:
    try:
        here = Path(os.path.abspath(path)).parent
    except (OSError, ValueError):
        return None
    for folder in [here, *here.parents]:
        if (folder / ".git").exists() or (folder / "pyproject.toml").exists():
            return folder
    return None


def folders(doc_path: str, setting=()) -> list:
    """The folders searched after the header's rulebook, in order (see the module's doc)."""
    out = [str(f) for f in setting or () if isinstance(f, str) and f]
    env = os.environ.get(ENV, "")
    out += [f for f in env.split(os.pathsep) if f]
    repo = _repository(doc_path)
    if repo is not None:
        out.append(str(repo.parent / "shared" / "rulebooks"))
    out.append(str(Path(__file__).resolve().parents[1].parent / "shared" / "rulebooks"))
    seen, result = set(), []
    for f in out:
        f = os.path.expanduser(f)
        if f not in seen:
            seen.add(f)
            result.append(f)
    return result


def candidates(doc_path: str, program=None, setting=()) -> list:
    """(kind, path or text) pairs to look in: the header's rulebook text first, then Markdown files."""
    out = []
    name = ""
    if program is not None and program.game is not None and program.game.rulebook:
        from .program import read_rulebook

        name = os.path.basename(program.game.rulebook)
        try:
            text, _ = read_rulebook(program)
        except Exception:  # noqa: BLE001 - an unreadable rulebook: look elsewhere
            text = None
        if text is not None:
            out.append(("text", text, os.path.normpath(os.path.join(
                os.path.dirname(program.game.span.path) or ".", program.game.rulebook))))
    files = []
    for folder in folders(doc_path, setting):
        try:
            entries = sorted(e for e in os.listdir(folder) if e.lower().endswith(".md"))
        except (OSError, ValueError):
            continue
        if name in entries:
            entries.remove(name)
            entries.insert(0, name)
        files += [os.path.join(folder, e) for e in entries]
        if len(files) >= MAX_FILES:
            break
    out += [("file", f, f) for f in files[:MAX_FILES]]
    return out


def find_section(section: str, doc_path: str, program=None, setting=()) -> Optional[tuple]:
    """(rulebook path, section text) for a cited section id, or None when no rulebook found has it."""
    if not section or len(section) > 100:
        return None
    for kind, what, where in candidates(doc_path, program, setting):
        text = what if kind == "text" else _read(what)
        if text is None:
            continue
        found = section_text(text, section)
        if found is not None:
            return where, found
    return None
