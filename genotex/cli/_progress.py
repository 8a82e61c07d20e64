"""How much a command says, and where it is in a long run.

`-q` says only what went wrong and the final count; `-v` adds the library's
debug log. Long runs (`regress --all`, `preprocess --all`) number each item as
it finishes, `[k/N]`, with the time elapsed and an estimate of the time left:
a progress bar on a terminal, plain lines in a log.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

import click

__all__ = [
    "ItemProgress",
    "stage_line",
    "progress_shown",
    "quiet",
    "say",
    "size",
    "verbosity",
    "verbosity_options",
]

T = TypeVar("T")
_LEVELS = {-1: logging.WARNING, 0: logging.INFO, 1: logging.DEBUG}
_KEY = "genotex.verbosity"
_NO_PROGRESS = "genotex.no_progress"


def verbosity() -> int:
    """-1 with `-q`, 1 with `-v`, else 0 (also outside a command: a library call)."""
    ctx = click.get_current_context(silent=True)
    return ctx.meta.get(_KEY, 0) if ctx is not None else 0


def quiet() -> bool:
    return verbosity() < 0


def _no_progress_asked() -> bool:
    ctx = click.get_current_context(silent=True)
    return ctx is not None and bool(ctx.meta.get(_NO_PROGRESS, False))


def progress_shown() -> bool:
    """False under `--no-progress` or `-q`: no bar, no `[k/N]` count, no time left."""
    return not _no_progress_asked() and not quiet()


def say(message: str, *, err: bool = True) -> None:
    """An informational line (on stderr unless `err=False`), silent under `-q`."""
    if not quiet():
        click.echo(message, err=err)


class _EchoHandler(logging.Handler):
    """The `genotex` log on the stderr of the moment (a test's runner swaps it)."""

    def emit(self, record: logging.LogRecord) -> None:
        click.echo(self.format(record), err=True)


def _configure(ctx: click.Context, level: int) -> None:
    if ctx.meta.get(_KEY, 0) not in (0, level):
        raise click.UsageError("-q and -v contradict each other: give one")
    ctx.meta[_KEY] = level
    logger = logging.getLogger("genotex")
    if not any(isinstance(h, _EchoHandler) for h in logger.handlers):
        logger.addHandler(_EchoHandler())
        logger.propagate = False  # said once, whatever the root logger has
    logger.setLevel(_LEVELS[level])


def _no_progress(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        ctx.meta[_NO_PROGRESS] = True


def verbosity_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """`-q/--quiet`, `-v/--verbose` and `--no-progress`, on every command (one meaning each)."""

    def setter(level: int) -> Callable[[click.Context, click.Parameter, bool], None]:
        def callback(ctx: click.Context, param: click.Parameter, value: bool) -> None:
            _configure(ctx, level if value else ctx.meta.get(_KEY, 0))

        return callback

    function = click.option(
        "--no-progress",
        is_flag=True,
        expose_value=False,
        callback=_no_progress,
        help="Never show progress (a bar, a [k/N] count, the time left); results and "
        "failures are still said.",
    )(function)
    function = click.option(
        "-v",
        "--verbose",
        is_flag=True,
        expose_value=False,
        callback=setter(1),
        help="Say more: the library's debug log.",
    )(function)
    return click.option(
        "-q",
        "--quiet",
        is_flag=True,
        expose_value=False,
        callback=setter(-1),
        help="Say only what went wrong and the final count.",
    )(function)


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def stage_line(items: Iterable[T], description: str, total: int) -> Iterator[T]:
    """The items, and on stderr one line when the stage is done, `description: N done in
    TIME`: where a long internal stage went, in a log (where a bar, or a line every few
    items, would be noise).
    """
    started = time.monotonic()
    done = 0
    for done, item in enumerate(items, 1):  # noqa: B007 - the count is said after the loop
        yield item
    click.echo(f"{description}: {done} of {total} done in {_clock(time.monotonic() - started)}",
               err=True)  # fmt: skip


class ItemProgress:
    """Numbered lines, `[k/N] item: status`, as each of N items finishes.

    On a terminal a tqdm bar below the lines shows the count, the time elapsed
    and the time left; in a log (stderr not a terminal) each line ends with
    them instead. Under `--no-progress` a line is only `item: status (seconds)`:
    no count, no bar, no time left. Under `-q` only failures are printed. Lines go to stdout when
    they are the command's results (`preprocess`), to stderr otherwise.
    """

    def __init__(self, total: int | None = None, *, unit: str, err: bool = True) -> None:
        self.unit, self.err, self.done, self.total = unit, err, 0, 0
        self.bar: Any = None
        self.counted = True
        self.started = time.monotonic()
        if total is not None:
            self.start(total)

    def start(self, total: int) -> None:
        """Set N (when it is known only once the work is planned) and start the clock."""
        self.total, self.started = total, time.monotonic()
        self.counted = not _no_progress_asked()
        if self.counted and not quiet() and total > 1 and sys.stderr.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit=f" {self.unit}", file=sys.stderr, dynamic_ncols=True)

    def eta(self) -> str:
        """`elapsed 0:01:05, ETA 0:10:00` (the rate so far times what is left)."""
        elapsed = time.monotonic() - self.started
        left = elapsed / self.done * (self.total - self.done) if self.done else float("nan")
        eta = _clock(left) if left == left else "?"
        return f"elapsed {_clock(elapsed)}, ETA {eta}"

    def __call__(
        self, item: str, status: str, *, failed: bool = False, seconds: float | None = None
    ) -> None:
        """One item finished: `item` (with its separator) ended with `status`, in `seconds`."""
        self.done += 1
        took = [] if seconds is None else [f"{seconds:.1f} s"]
        line = f"[{self.done}/{self.total}] {item}{status}"
        if not self.counted:
            if failed or not quiet():
                click.echo(f"{item}{status}" + (f" ({took[0]})" if took else ""), err=self.err)
            return
        if self.bar is not None:
            self.bar.update(1)
            if failed or not quiet():
                suffix = f" ({took[0]})" if took else ""
                self.bar.write(line + suffix, file=sys.stderr if self.err else sys.stdout)
        elif failed or not quiet():
            click.echo(f"{line} ({'; '.join([*took, self.eta()])})", err=self.err)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()

    def __enter__(self) -> ItemProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def size(n: float) -> str:
    """A byte count as a reader reads it: `512 B`, `1.5 KiB`, ... up to GiB."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    raise AssertionError  # pragma: no cover
