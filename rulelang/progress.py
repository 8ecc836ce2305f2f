"""The progress bar of long runs (``simulate``, ``validate``, ``compare``): done/total, elapsed time and an
estimate of the time left, drawn with rich on stderr.

``progress_bar(total, enabled, label="games")`` returns a ``ProgressBar``: call it as the runner's
``progress(done, total)`` callback, and close it (or use it as a context manager) when the run ends.
It draws only when ``enabled`` (callers pass ``not as_json``) and stderr is a terminal; otherwise it
does nothing at all (no output, no thread).  The bar starts at the first call, not before: the
runner calls ``progress(0, total)`` once its worker processes exist, so the bar's refresh thread is
never there when they are forked.  The bar is transient: it is gone once the run ends.
"""
from __future__ import annotations

__all__ = ["ProgressBar", "progress_bar"]


class ProgressBar:
    """A callable ``(done, total=None)``; see ``progress_bar``."""

    def __init__(self, total: int, show: bool, label: str, console=None):
        self.total = total
        self.show = show
        self.label = label
        self._console = console
        self._bar = None
        self._task = None

    def __call__(self, done: int, total: int | None = None) -> None:
        if not self.show:
            return
        if total is not None:
            self.total = total
        if self._bar is None:
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                                       TimeRemainingColumn)

            self._bar = Progress(TextColumn(self.label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                 TextColumn("eta"), TimeRemainingColumn(), console=self._console, transient=True)
            self._task = self._bar.add_task(self.label, total=self.total)
            self._bar.start()
        self._bar.update(self._task, completed=done, total=self.total)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def progress_bar(total: int, enabled: bool = True, label: str = "games", console=None) -> ProgressBar:
    """A progress bar for ``total`` steps, drawn on stderr only if ``enabled`` and stderr is a terminal
    (``console``: a rich ``Console`` to draw on instead, for tests)."""
    if not enabled:
        return ProgressBar(total, False, label)
    if console is None:
        from rich.console import Console

        console = Console(stderr=True)
    return ProgressBar(total, bool(console.is_terminal), label, console)
