"""The files below a folder that a folder command (`fmt DIR`, `check DIR`, `test DIR`) works on.

A folder command stays inside its folder: a symbolic link to a folder is not descended into, and a
symbolic link to a file outside the folder is skipped (and reported), so that `rulelang fmt games`
never rewrites, and `rulelang test games` never runs, a file that lies elsewhere."""
from __future__ import annotations

import os
from typing import Callable, Optional

from .program import within


def files_below(folder: str, take: Callable[[str], bool],
                prune: Optional[Callable[[str, str], bool]] = None) -> tuple[list[str], list[str]]:
    """(files, skipped): the files below ``folder`` whose name ``take`` accepts, sorted folder by folder;
    ``prune(dirpath, name)`` drops a sub-folder. ``skipped`` lists the symbolic links out of the folder."""
    files: list[str] = []
    skipped: list[str] = []
    for dirpath, dirnames, filenames in os.walk(folder):  # never follows a symbolic link to a folder
        dirnames[:] = sorted(d for d in dirnames if not (prune and prune(dirpath, d)))
        for name in sorted(filenames):
            if not take(name):
                continue
            full = os.path.join(dirpath, name)
            if os.path.islink(full) and not within(full, folder):
                skipped.append(full)
            else:
                files.append(full)
    return files, skipped
