"""What every command shares: error handling, `--debug`, progress bars, multi-value options."""

from __future__ import annotations

import contextlib
import functools
import math
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import click

from .._version import __version__
from ..core import (
    CACHE_ENV,
    CACHE_SIZE_ENV,
    GenotexError,
    TableCache,
    extra_hint,
    printable,
    temporary_environment,
)
from ._progress import progress_shown, stage_line, verbosity_options

__all__ = [
    "GreedyCommand",
    "cache_options",
    "common_options",
    "handle_errors",
    "main",
    "scheduler_option",
    "tqdm_progress",
]

# Options that take several values after one flag (`-t selection analysis`), as the
# published evaluator's argparse `nargs="+"` options do; repeating the flag works too.
_GREEDY_OPTIONS = {"-t", "--tasks", "-s", "--subtasks"}


def _expand_greedy(args: Sequence[str], greedy: set[str]) -> list[str]:
    """Rewrite `-t a b` as `-t a -t b` so that Click's `multiple=True` options collect them."""
    out: list[str] = []
    flag: str | None = None  # the greedy flag whose values are being collected
    has_value = False
    for position, arg in enumerate(args):
        if arg == "--":
            out.extend(args[position:])
            return out
        if flag is not None and not arg.startswith("-"):
            out += [flag, arg]
            has_value = True
            continue
        if flag is not None and not has_value:
            out.append(flag)  # a greedy flag without a value: Click reports it
        flag = None
        if arg in greedy:
            flag, has_value = arg, False
        else:
            out.append(arg)
    if flag is not None and not has_value:
        out.append(flag)
    return out


class GreedyCommand(click.Command):
    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, _expand_greedy(args, _GREEDY_OPTIONS))


def _fail(message: str, code: int = 1) -> None:
    """The error's one sentence, names in it escaped (`printable`: no control, bidi or
    line-separator character reaches the terminal raw), and the exit status.
    """
    click.echo(f"genotex: error: {printable(message)}", err=True)
    sys.exit(code)


class Terminated(KeyboardInterrupt):
    """SIGTERM (what `timeout` and schedulers send), raised like Ctrl-C so that clean-up runs."""


@contextlib.contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """While a command runs, SIGTERM unwinds it: workers are ended, finished work recorded."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can be set from the main thread only (a test's runner thread)
        return

    def _raise(signum: int, frame: object) -> None:
        raise Terminated

    previous = signal.signal(signal.SIGTERM, _raise)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


#: Which extra brings a package a command may need (for the install hint).
_EXTRAS = {
    "inspect_ai": "harness",
    "mcp": "mcp",
    "huggingface_hub": "hub",
    "anndata": "anndata",
    "inmoose": "limma",
    "dask": "dask",
    "distributed": "dask",
    "mygene": "mygene",
}


def handle_errors(function: Callable[..., Any]) -> Callable[..., Any]:
    """Turn errors into one sentence and a non-zero exit; `--debug` shows the traceback."""

    @functools.wraps(function)
    def wrapper(*args: Any, debug: bool = False, **kwargs: Any) -> Any:
        try:
            with _terminate_as_interrupt():
                return function(*args, **kwargs)
        except click.ClickException:
            raise  # usage errors: Click prints them with the usage line (exit 2)
        except Terminated:
            _fail("terminated", 128 + signal.SIGTERM)
        except KeyboardInterrupt:
            _fail("interrupted", 130)
        except Exception as exc:
            if debug:
                raise
            if isinstance(exc, GenotexError):
                _fail(str(exc))
            if isinstance(exc, OSError):
                _fail(f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": "))
            if isinstance(exc, ModuleNotFoundError) and exc.name:
                extra = _EXTRAS.get(exc.name.split(".")[0])
                hint = extra_hint(extra) if extra else f"pip install {exc.name}"
                _fail(f"this needs the {exc.name.split('.')[0]} package: {hint}")
            _fail(
                f"unexpected {exc.__class__.__name__}: {exc} "
                "(run again with --debug for the traceback)"
            )

    return wrapper


def common_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """`--debug`, `-q/--quiet`, `-v/--verbose` and `--no-progress`: what every command takes."""
    function = verbosity_options(function)
    return click.option("--debug", is_flag=True, help="Show the full traceback of an error.")(
        function
    )


class FiniteFloatRange(click.FloatRange):
    """A FloatRange that also refuses nan (which every comparison with a bound lets through)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if math.isnan(number):
            self.fail(f"{value!r} is not a number.", param, ctx)
        return number


class AsciiIntRange(click.IntRange):
    """An IntRange of ASCII digits only: Python's `int` also reads `٣` (3) and `３`, which a
    seed, a count or a port typed by mistake must not silently become (issue #72).
    """

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str):
            digits = value.strip().removeprefix("-").removeprefix("+")
            if not (digits.isascii() and digits.isdigit()):
                self.fail(f"{value!r} is not a whole number written in ASCII digits.", param, ctx)
        return super().convert(value, param, ctx)


#: A size limit in MB: positive and finite.
MEGABYTES = FiniteFloatRange(min=0, min_open=True, max=1_000_000)

#: A seed: what NumPy's generators take (a negative one is refused by them, not by Click).
SEED = AsciiIntRange(min=0, max=2**32 - 1)


def geo_limits_option(function: Callable[..., Any]) -> Callable[..., Any]:
    """`--max-line-mb` and `--max-text-mb`: the GEO readers' limits (passed to worker processes
    through the environment variables the readers read).
    """

    def _set(variable: str) -> Callable[[click.Context, click.Parameter, Any], None]:
        def callback(ctx: click.Context, param: click.Parameter, value: Any) -> None:
            if value is not None:
                # for this command only: a notebook or test calling `main` again starts clean
                ctx.with_resource(temporary_environment({variable: repr(value)}))

        return callback

    for flag, variable, what in (
        ("--max-text-mb", "GENOTEX_MAX_TEXT_MB", "Most decompressed text of a GEO file (32,768)"),
        ("--max-line-mb", "GENOTEX_MAX_LINE_MB", "Longest line of a GEO file (64)"),
    ):
        function = click.option(
            flag,
            type=MEGABYTES,
            default=None,
            expose_value=False,
            callback=_set(variable),
            help=f"{what}, in MB.",
        )(function)
    return function


def jobs_option(
    help: str = "Worker processes (results do not depend on it).",
) -> Callable[..., Any]:
    """`-j/--jobs N`: how many worker processes, at least 1, one by default in every command."""
    return click.option(
        "-j", "--jobs", type=AsciiIntRange(min=1), default=1, show_default=True, help=help
    )


def scheduler_option(help: str) -> Callable[..., Any]:
    """`--scheduler ADDRESS`: run on an existing Dask distributed scheduler instead of --jobs."""
    return click.option("--scheduler", default=None, metavar="ADDRESS", help=help)


def cache_dir_option(function: Callable[..., Any]) -> Callable[..., Any]:
    """`--cache-dir PATH` (or `$GENOTEX_CACHE`): genotex's cache folder."""
    return click.option(
        "--cache-dir",
        type=click.Path(path_type=Path, file_okay=False),
        envvar=CACHE_ENV,
        default=None,
        help="genotex's cache folder (default: $GENOTEX_CACHE, else ~/.cache/genotex); its "
        "size bound is $GENOTEX_CACHE_SIZE (default 8G).",
    )(function)


def table_cache(cache_dir: Path | None) -> TableCache:
    """The `TableCache` in `cache_dir` (None: the default folder).

    Raises `click.UsageError` when `$GENOTEX_CACHE_SIZE` is not a size.
    """
    try:
        return TableCache.default(cache_dir)
    except ValueError as exc:
        raise click.UsageError(f"${CACHE_SIZE_ENV}: {exc}") from None


def cache_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """`--cache-dir PATH` and `--no-cache`, given to the command as one `cache` argument."""

    @functools.wraps(function)
    def wrapper(*args: Any, cache_dir: Path | None, no_cache: bool, **kwargs: Any) -> Any:
        return function(*args, cache=None if no_cache else table_cache(cache_dir), **kwargs)

    wrapper = click.option(
        "--no-cache",
        is_flag=True,
        help="Parse every table instead of reading parsed tables from the cache "
        "(the results are the same).",
    )(wrapper)
    return cache_dir_option(wrapper)


def resamples_option(help: str) -> Callable[..., Any]:
    """`--resamples N`: bootstrap resamples, at least 100, by default 10,000 (BootstrapSettings)."""
    return click.option(
        "--resamples", type=AsciiIntRange(min=100), default=10_000, show_default=True, help=help
    )


#: `genotex.evaluation.FIGURE_FORMATS`, spelled here so that `--help` need not import evaluation.
FIGURE_FORMATS = ("png", "svg", "pdf")


def figure_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """`--figure-format` (repeatable) and `--dpi`: the figure files a report writes."""
    function = click.option(
        "--dpi",
        type=AsciiIntRange(min=50, max=1200),
        default=300,
        show_default=True,
        help="Resolution of the PNG figures (the page shows them too).",
    )(function)
    return click.option(
        "--figure-format",
        "figure_formats",
        multiple=True,
        type=click.Choice(FIGURE_FORMATS),
        help="Figure files to write into figures/, repeat for several; default: png, svg "
        "(text kept as text) and pdf.",
    )(function)


def tqdm_progress() -> Callable[[Iterable[Any], str, int], Iterable[Any]]:
    """Progress of long stages on stderr: a bar on a terminal, one line a stage when it is
    done in a log (none under `--no-progress` or `-q`).
    """

    def progress(items: Iterable[Any], description: str, total: int) -> Iterable[Any]:
        if total < 20 or not progress_shown():
            return items
        if not sys.stderr.isatty():
            return stage_line(items, description, total)
        from tqdm import tqdm

        return tqdm(items, desc=description, total=total, file=sys.stderr, leave=False)

    return progress


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="genotex")
def main() -> None:
    """genotex: the GenoTEX benchmark toolkit.

    Evaluate a submission with `genotex eval -p PRED -r REF`; try it on a
    generated example with `genotex demo`.
    """


def check_file_target(path: Path | None, what: str) -> None:
    """Before any work: the folder a single file goes to can be written, and the file would
    not land in a benchmark's reference (core's rule, as for every output folder).
    """
    from ..core import prepare_output_folder

    if path is not None:
        if path.is_dir():
            raise GenotexError(f"{what} names a folder, not a file", path=path)
        prepare_output_folder(path.parent, what=f"{what} file's folder", for_file=True)
