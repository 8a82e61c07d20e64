"""`genotex cache info|clear`: the table cache's contents and its removal."""

from __future__ import annotations

from pathlib import Path

import click

from ._common import cache_dir_option, common_options, handle_errors, main, table_cache
from ._progress import say, size


@main.group("cache")
def cache_group() -> None:
    """The cache of parsed tables (eval's reference side, regress's linked tables).

    Entries are keyed by the sha256 of each CSV's content, so a changed file is
    never read from the cache; the least recently used go first once the folder
    passes its bound ($GENOTEX_CACHE_SIZE, default 8G).
    """


@cache_group.command("info")
@cache_dir_option
@common_options
@handle_errors
def cache_info_command(*, cache_dir: Path | None) -> None:
    """Where the table cache is, how many entries it holds and their size.

    \b
    Examples:
      genotex cache info
      genotex cache info --cache-dir /scratch/genotex-cache
    """
    info = table_cache(cache_dir).info()
    click.echo(f"folder:  {info.folder}")
    click.echo(f"entries: {info.entries:,}")
    click.echo(f"size:    {size(info.bytes)} of {size(info.max_bytes)}")
    if info.other_versions:
        click.echo(f"entries of another genotex version: {info.other_versions:,} (never read)")


@cache_group.command("clear")
@cache_dir_option
@common_options
@handle_errors
def cache_clear_command(*, cache_dir: Path | None) -> None:
    """Remove every entry of the table cache and the sha256 it remembers of each CSV
    (only files named as its entries and digests).

    \b
    Examples:
      genotex cache clear
    """
    cache = table_cache(cache_dir)
    removed = cache.clear()
    say(f"removed {removed:,} entr{'y' if removed == 1 else 'ies'} from {cache.tables}")
