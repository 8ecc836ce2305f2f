"""STAND-IN (replaced by the runner branch): ``progress_bar(total, enabled)``, a context manager
giving a ``update(done, total)`` callback that draws a rich progress bar with an ETA on stderr
when ``enabled``."""
from __future__ import annotations

import contextlib

__all__ = ["progress_bar"]


@contextlib.contextmanager
def progress_bar(total, enabled):
    if not enabled:
        yield lambda done, total: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    bar = Progress(BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                   console=Console(stderr=True), transient=True)
    task = bar.add_task("games", total=total)
    started = False

    def update(done, total_now):
        nonlocal started
        if not started:
            bar.start()
            started = True
        bar.update(task, completed=done, total=total_now)

    try:
        yield update
    finally:
        if started:
            bar.stop()
