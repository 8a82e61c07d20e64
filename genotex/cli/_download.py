"""`genotex download geo|tcga|gene-info`: the benchmark's inputs, resumable, verified by sha256."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ._common import AsciiIntRange, common_options, handle_errors, main
from ._progress import progress_shown

#: Words of the errors a machine without a network (or without DNS) gives for every file.
_OFFLINE = (
    "name or service not known",
    "temporary failure in name resolution",
    "network is unreachable",
    "nodename nor servname",
    "no address associated",
)


@main.group("download")
def download_group() -> None:
    """Download the benchmark's inputs: resumable, verified by sha256.

    GEO files come from NCBI's GEO (over HTTPS), Xena files from the UCSC Xena
    TCGA hub, gene_info from NCBI Gene. Re-running resumes partial files and
    skips verified ones; the exit status is 1 when any file failed.

    \b
    Examples:
      genotex download geo --out BENCH/input/GEO --only Asthma
      genotex download tcga --out BENCH/input/TCGA
      genotex download gene-info --out metadata/Homo_sapiens.gene_info.gz
      genotex download verify BENCH
    """


def _transfer_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """What every kind takes: a mirror, parallel connections, progress, and the common options."""
    function = common_options(function)
    function = click.option(
        "-c",
        "--connections",
        type=AsciiIntRange(min=1, max=32),
        default=4,
        show_default=True,
        help="Files downloaded at once (network-bound, so several by default).",
    )(function)
    return click.option(
        "--base-url",
        default=None,
        help="Where the files are (default: the public sources; a mirror, a local server).",
    )(function)


def _accession_options(kind: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """`download geo`'s `--series` and `--platform` (no other kind has them)."""

    def add(function: Callable[..., Any]) -> Callable[..., Any]:
        if kind != "geo":
            return function
        function = click.option(
            "--platform", "platforms", multiple=True,
            help="A GEO platform by accession (GPL96), as GEO's accession viewer gives it, "
            "into OUT/platforms/; repeatable.",
        )(function)  # fmt: skip
        return click.option(
            "--series", multiple=True,
            help="A GEO series by accession, in or outside the benchmark: GSE14520 (matrix and "
            "family SOFT) or GSE14520-GPL571 (one platform's matrix), into OUT/<GSE>/; "
            "repeatable. No digest is published for it: checked against its length only.",
        )(function)  # fmt: skip

    return add


def _manifest_command(kind: str, only_what: str, out_what: str, example: str) -> click.Command:
    """`download geo` and `download tcga`: files listed by a benchmark manifest."""

    @download_group.command(kind)
    @click.option(
        "--manifest",
        type=click.Path(path_type=Path),
        default=None,
        help=f"A {kind}_manifest.json (each file's path and sha256); by default the "
        "benchmark's own, which genotex ships.",
    )
    @click.option("-o", "--out", type=click.Path(path_type=Path), required=True, help=out_what)
    @click.option("--only", multiple=True, help=f"Only this {only_what}; repeatable.")
    @_accession_options(kind)
    @_transfer_options
    @handle_errors
    def command(
        *,
        manifest: Path | None,
        out: Path,
        only: tuple[str, ...],
        base_url: str | None,
        connections: int,
        series: tuple[str, ...] = (),
        platforms: tuple[str, ...] = (),
    ) -> None:
        if series or platforms:
            if manifest is not None or only:
                raise click.UsageError(
                    "--series and --platform fetch by accession, not by a manifest: "
                    "leave out --manifest and --only"
                )
            accessions = {"series": series, "platforms": platforms}
            _download("accessions", out, base_url=base_url, connections=connections, **accessions)
            return
        _download(
            kind, out, manifest=manifest, only=only, base_url=base_url, connections=connections
        )

    what = (
        "a benchmark manifest, or series and platforms by accession,"
        if kind == "geo"
        else ("a benchmark manifest")
    )
    command.help = (
        f"Download the {kind.upper()} files of {what} into OUT.\n\n\b\nExample:\n  {example}"
    )
    return command


download_geo = _manifest_command(
    "geo",
    "trait (a folder of the manifest's GEO/<trait>/)",
    "The folder to write the series matrices and SOFT files into.",
    "genotex download geo --out BENCH/input/GEO --only Asthma\n"
    "  genotex download geo --out input/GEO/Liver_Cancer --series GSE14520-GPL571 --platform GPL96",
)
download_tcga = _manifest_command(
    "tcga",
    "Xena cohort folder",
    "The folder to write the Xena cohort folders into.",
    "genotex download tcga --out BENCH/input/TCGA",
)


@download_group.command("verify")
@click.argument("bench", type=click.Path(path_type=Path))
@click.option("--only", multiple=True, help="Only this GEO trait or TCGA folder; repeatable.")
@common_options
@handle_errors
def download_verify(bench: Path, only: tuple[str, ...]) -> None:
    """Check BENCH against what was fetched, or BENCH/input against the manifests.

    A folder `genotex download benchmark` wrote (it holds genotex-benchmark.json)
    is checked file by file against the digests it was fetched with; any other
    bundle's inputs against the benchmark's GEO and TCGA manifests.

    Says what is verified, what differs, what is missing, and what cannot be
    checked because it was unpacked (Kaggle unpacks every .gz; genotex's readers
    take both forms). The exit status is 1 when a file is missing or differs.

    \b
    Example:
      genotex download verify BENCH --only Asthma
    """
    from ..core import MARKER_NAME, GenotexError
    from ..preprocessing import UnknownSelection, verify_inputs, verify_marker

    marked = (bench / MARKER_NAME).is_file()
    if not (bench / "input").is_dir() and not marked:
        raise GenotexError("holds no input/ folder (is it a benchmark root?)", path=bench)
    if marked:  # what the download fetched (of --only's traits), each against its digest
        try:
            fetched = verify_marker(bench, only=only)
        except UnknownSelection as exc:
            raise click.BadParameter(str(exc), param_hint="--only") from None
        click.echo(
            f"{MARKER_NAME}: {len(fetched.verified)} verified, {len(fetched.differ)} differ, "
            f"{len(fetched.missing)} missing"
        )
        _name_failures(fetched, "")
        if not fetched.ok:
            sys.exit(1)
        return  # its inputs were checked against the manifests when they were fetched
    try:
        check = verify_inputs(bench, only=only)
    except UnknownSelection as exc:
        raise click.BadParameter(str(exc), param_hint="--only") from None
    click.echo(
        f"{len(check.verified)} verified, {len(check.differ)} differ, {len(check.missing)} "
        f"missing, {len(check.unpacked)} cannot be checked (unpacked)"
    )
    _name_failures(check, "input/")
    if check.unpacked:
        click.echo(
            f"  {len(check.unpacked)} files are there unpacked, without their .gz (as Kaggle "
            "gives them): their sha256 cannot be rebuilt (gzip again gives other bytes); "
            "genotex's readers take them as they are"
        )
    if not check.ok:
        sys.exit(1)


def _name_failures(check: Any, prefix: str) -> None:
    """The files that differ or are missing, 20 of each at most, then how many more."""
    for what, names in (("DIFFERS", check.differ), ("MISSING", check.missing)):
        for name in names[:20]:
            click.echo(f"  {what} {prefix}{name}")
        if len(names) > 20:
            click.echo(f"  ... and {len(names) - 20:,} more {what.lower()}")


@download_group.command("benchmark")
@click.option(
    "-o", "--out", type=click.Path(path_type=Path), required=True,
    help="The benchmark folder (BENCH): input/, output/, metadata/, code/ are written in it.",
)  # fmt: skip
@click.option(
    "--parts", default=",".join(["metadata", "reference", "inputs", "code"]), show_default=True,
    help="Which parts, comma-separated: metadata, reference (output/), inputs (input/), code.",
)  # fmt: skip
@click.option(
    "--only", multiple=True,
    help="Only this trait's files (with its two-step conditions' inputs); repeatable.",
)  # fmt: skip
@click.option(
    "--all-tcga", is_flag=True,
    help="With --only: every TCGA (Xena) folder, as the paper's task gives them (-T tcga=all).",
)  # fmt: skip
@click.option(
    "--revision", default=None,
    help="The Hub revision (branch, tag or commit); by default the one genotex pins.",
)  # fmt: skip
@click.option("--dry-run", is_flag=True, help="List the files and their sizes; fetch nothing.")
@common_options
@handle_errors
def download_benchmark_command(
    *, out: Path, parts: str, only: tuple[str, ...], all_tcga: bool, revision: str | None,
    dry_run: bool,
) -> None:  # fmt: skip
    """Download the benchmark from its Hugging Face Hub copy into OUT, verified.

    Real files in OUT (no links into a cache), resumed when run again, each
    checked against the Hub's sha256 (large files) or git blob id (others), and
    the inputs against the benchmark's GEO and TCGA manifests; OUT/genotex-
    benchmark.json names the revision and what was fetched, and runs record it.
    HF_ENDPOINT and HF_TOKEN are honoured. Needs genotex's [hub] extra.

    \b
    Examples:
      genotex download benchmark --out BENCH --parts metadata,reference
      genotex download benchmark --out BENCH --only Asthma --dry-run
      genotex download benchmark --out BENCH --only Asthma --all-tcga
    """
    from ..preprocessing import (
        UnknownSelection,
        check_benchmark_folder,
        download_benchmark,
        plan_benchmark,
    )

    chosen = [p.strip() for p in parts.split(",") if p.strip()]
    if not chosen:  # `--parts ""` downloaded nothing, exit 0, and wrote a marker
        raise click.BadParameter(
            "names no part: metadata, reference, inputs, code", param_hint="--parts"
        )
    if any(not t.strip() for t in only):  # `--only ""` selected the whole benchmark
        raise click.BadParameter(
            "an empty trait name selects nothing: name a trait", param_hint="--only"
        )
    if not dry_run:  # before the Hub is asked anything
        check_benchmark_folder(out)
    try:
        plan = plan_benchmark(parts=chosen, only=only, revision=revision, all_tcga=all_tcga)
    except UnknownSelection as exc:
        raise click.BadParameter(str(exc), param_hint="--only") from None
    where = f"{plan.repo} at {plan.commit[:12]} ({plan.revision})"
    if dry_run:
        for file in plan.files:
            click.echo(f"{file.size:>15,}  {file.path}")
        click.echo(f"{len(plan.files):,} files, {plan.total_bytes / 1e6:,.1f} MB, from {where}")
        return
    done = download_benchmark(out, plan, progress=_progress if progress_shown() else None)
    click.echo(
        f"{len(done.fetched):,} files fetched ({done.bytes_fetched / 1e6:,.1f} MB), "
        f"{len(done.kept):,} already there and verified, from {where}; marker {done.marker}"
    )


def _progress(index: int, total: int, file: Any, done: int, whole: int) -> None:
    click.echo(
        f"[{index}/{total}] {done / 1e6:,.1f} of {whole / 1e6:,.1f} MB  {file.path} "
        f"({file.size / 1e6:,.1f} MB, verified)",
        err=True,
    )


@download_group.command("gene-info")
@click.option(
    "-o",
    "--out",
    type=click.Path(path_type=Path),
    required=True,
    help="The file to write (Homo_sapiens.gene_info.gz).",
)
@click.option("--sha256", default=None, help="The expected sha256, if known (else not checked).")
@_transfer_options
@handle_errors
def download_gene_info(
    out: Path, sha256: str | None, base_url: str | None, connections: int
) -> None:
    """Download NCBI's Homo_sapiens.gene_info.gz (the synonym table's source).

    \b
    Example:
      genotex download gene-info --out metadata/Homo_sapiens.gene_info.gz
    """
    _download("gene-info", out, sha256=sha256, base_url=base_url, connections=connections)


def _download(kind: str, out: Path, *, connections: int, **options: Any) -> None:
    from ..preprocessing import UnknownSelection, download_accessions, download_inputs

    try:
        if kind == "accessions":
            results = download_accessions(
                out, jobs=connections, progress=progress_shown(), **options
            )
        else:
            results = download_inputs(
                kind, out, jobs=connections, progress=progress_shown(), **options
            )
    except UnknownSelection as exc:
        raise click.BadParameter(str(exc), param_hint="--only") from None
    counts: dict[str, int] = {}
    for result in results:
        key = result.outcome.kind
        counts[key] = counts.get(key, 0) + 1
    total_mb = sum(r.size for r in results if r.ok) / 1e6
    summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    count = f"{len(results)} file{'' if len(results) == 1 else 's'}"
    click.echo(f"{count}: {summary}; {total_mb:.1f} MB in place")
    failed = [r for r in results if not r.ok]
    by_reason: dict[str, list[Path]] = {}
    for result in failed:  # one line per reason, not per file
        by_reason.setdefault(result.outcome.reason, []).append(result.download.path)
    for reason, paths in by_reason.items():
        if len(paths) == 1:
            click.echo(f"  FAILED {paths[0]}: {reason}")
        elif any(word in reason.lower() for word in _OFFLINE):
            click.echo(f"  FAILED all {len(paths)} files: the network is unreachable ({reason})")
        else:
            click.echo(f"  FAILED {len(paths)} files ({paths[0].name}, ...): {reason}")
    if failed:
        click.echo(
            "Re-run the same command to retry: finished files are kept, partial ones resumed."
        )
        sys.exit(1)
