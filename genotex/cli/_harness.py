"""`genotex harness export` (an Inspect run of a genotex task as a genotex run folder),
`replay` (a GenoAgent log run again from its replies), `image`, and `genotex mcp`.
"""

from __future__ import annotations

from pathlib import Path

import click

from ..core import extra_hint
from ._common import AsciiIntRange, common_options, handle_errors, main
from ._progress import say


@main.group("harness")
def harness_group() -> None:
    """Runs of agents on GenoTEX made with Inspect (genotex's [harness] extra)."""


@harness_group.command("export")
@click.argument("logs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--out",
    type=click.Path(path_type=Path),
    required=True,
    help="The run folder to write: OUT/output (the agents' tree) and OUT/eval.json.",
)
@click.option(
    "-r",
    "--reference",
    type=click.Path(path_type=Path),
    required=True,
    help="The reference output/ folder the run was scored against (checked against the log).",
)
@click.option(
    "--max-output-mb",
    type=AsciiIntRange(min=1),
    default=4096,
    show_default=True,
    help="The largest output tree taken from one sample of the log.",
)
@click.option(
    "--price-in",
    type=click.FloatRange(min=0),
    default=None,
    help="Dollars per million input tokens, when the log has no cost.",
)
@click.option(
    "--price-out",
    type=click.FloatRange(min=0),
    default=None,
    help="Dollars per million output tokens, when the log has no cost.",
)
@click.option(
    "--prices",
    type=click.Path(path_type=Path),
    default=None,
    help='A price table per model, JSON: {"provider/model": {"input": $, "output": $}} per '
    "million tokens (models it lacks take --price-in/--price-out, or the log's cost).",
)
@click.option(
    "--diagnose",
    "diagnose_mode",
    type=click.Choice(["standard", "reference"]),
    default=None,
    help="Also say where the run lost its points (genotex diagnose), with this mode.",
)
@common_options
@handle_errors
def export_command(
    *,
    logs: tuple[Path, ...],
    out: Path,
    reference: Path,
    max_output_mb: int,
    price_in: float | None,
    price_out: float | None,
    prices: Path | None,
    diagnose_mode: str | None,
) -> None:
    """Score LOGS' samples from the logs alone; write the run's tree, eval report and costs.

    The outputs come from the log (each sample's tree, per epoch), never from
    disk; REFERENCE must be the reference the run was scored against, file for
    file (the log holds each file's sha256), or nothing is written. Several logs
    of one model and setting over disjoint traits (a run made trait by trait)
    are exported as one run, one leaderboard row; logs of different tasks,
    solvers, models or settings (each differing field is named), or two holding
    one trait, are refused.

    \b
    Examples:
      genotex harness export logs/2026-11-23T12-00-00_e2e_abc.eval \\
          --reference bench/reference/output --out runs/mymodel
      genotex harness export logs/*_e2e_*.eval --reference bench/reference/output \\
          --out runs/mymodel          # one log per trait, one row
    """
    if (price_in is None) != (price_out is None):
        raise click.UsageError("--price-in and --price-out go together")
    try:
        from ..core import check_mode
        from ..harness import export_run
    except ImportError:
        raise click.UsageError(f"the harness needs Inspect: {extra_hint('harness')}") from None
    path = export_run(
        list(logs),
        out,
        reference=reference,
        price_in=price_in,
        price_out=price_out,
        prices=prices,
        max_output_mb=max_output_mb,
        diagnose=check_mode(diagnose_mode) if diagnose_mode else None,
    )
    say(f"genotex eval report with the run's runtime: {path}")


@harness_group.command("replay")
@click.argument("log", type=click.Path(path_type=Path))
@click.option(
    "--root",
    "-r",
    "root",
    type=click.Path(path_type=Path, file_okay=False),
    required=True,
    help="The benchmark root to replay over, on this machine (never the log's).",
)
@click.option(
    "--sandbox",
    type=click.Choice(["bwrap", "podman", "docker", "local"]),
    default=None,
    help="Run the log's code in this sandbox (default: this machine's strongest isolated "
    "one, never the log's; local needs --trust-log).",
)
@click.option(
    "--trust-log",
    is_flag=True,
    help="With --sandbox local: run the log's code on this machine as you, unconfined (it can "
    "read and write every file you can). Only for a log you made or trust.",
)
@click.option(
    "--log-dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Keep the replay's own log here (default: a temporary folder, removed).",
)
@click.option(
    "--allow-log-limits",
    is_flag=True,
    help="Take the log's limits past a replay's caps (a sample's time 4 h, 1,000 messages, "
    "the default sandbox limits, cohort_seconds 3,600, time_scale 10, review_rounds and "
    "max_retract 4, output_chars 100,000): the log then may ask for this machine's all.",
)
@common_options
@handle_errors
def replay_command(
    *,
    log: Path,
    root: Path,
    sandbox: str | None,
    trust_log: bool,
    log_dir: Path | None,
    allow_log_limits: bool,
) -> None:
    """Run a GenoAgent log again, offline, its logged replies as the model.

    The log's task arguments and team options, over the benchmark root you name; the
    log's code runs in an isolated sandbox (the log's own sandbox is never used: it may
    say local). Every message sent is compared with the log's. Exits 0 when every
    message, output file and score is the same, 1 otherwise, naming the first difference.

    From the log: its task arguments (traits, tcga, conditions, tools, time and message
    limits, sandbox limits) and the team's options, each up to a replay's cap (see
    --allow-log-limits); a log asking for more is refused before any code runs, naming
    each value. Never from the log: the root, the reference, the sandbox and its image.

    \b
    Example:
      genotex harness replay logs/2026-11-27T09-00-00_e2e_x.eval -r BENCH --sandbox bwrap
    """
    import os

    if sandbox == "local" and not trust_log:  # before any code runs, or the log is read
        raise click.UsageError(
            "--sandbox local runs the log's code on this machine as you, unconfined: add "
            "--trust-log if you trust whoever made the log, or leave --sandbox out for an "
            "isolated sandbox"
        )
    from ..harness import ReplayLimitsError, replay_run

    os.environ.setdefault("INSPECT_DISABLE_MODEL_API", "1")  # no call leaves the machine
    try:
        result = replay_run(log, root=root, sandbox=sandbox, trust_log=trust_log,
                            log_dir=log_dir, allow_log_limits=allow_log_limits)  # fmt: skip
    except ReplayLimitsError as exc:
        said = exc.reason.replace("allow_log_limits=True runs", "pass --allow-log-limits to run")
        raise ReplayLimitsError(said, path=exc.path) from None
    counted = f"{result.samples} samples, {result.calls} model calls"
    if result.same:
        say(f"replayed {counted}: every message, output file and score as logged")
        return
    say(f"replayed {counted}: {len(result.differences)} differences; the first: "
        f"{result.differences[0]}")  # fmt: skip
    raise SystemExit(1)


@main.command("mcp")
@click.option(
    "--root",
    "roots",
    type=click.Path(path_type=Path),
    multiple=True,
    required=True,
    help="A folder the tools may read (repeatable; a tool's `root` is its index).",
)
@click.option(
    "--write",
    "writable",
    type=click.Path(path_type=Path, file_okay=False),
    multiple=True,
    help="A folder the tools may write in (repeatable; none by default).",
)
@click.option(
    "--allow-reference",
    is_flag=True,
    help="Serve a root holding reference answers (refused by default: an agent could read them).",
)
@common_options
@handle_errors
def mcp_command(roots: tuple[Path, ...], writable: tuple[Path, ...], allow_reference: bool) -> None:
    """Serve genotex's library as MCP tools over stdio (genotex's [mcp] extra).

    Paths are confined to the roots, links included; tools write only under a
    --write folder; a root holding reference answers is refused.

    \b
    Example:
      genotex mcp --root bench-inputs --write bench-inputs/output
    """
    try:
        from ..harness._mcp import ReferenceRootError, build_server
    except ImportError:
        raise click.UsageError(
            f"the MCP server needs the mcp package: {extra_hint('mcp')}"
        ) from None
    try:
        server = build_server(list(roots), writable=writable, allow_reference=allow_reference)
    except ReferenceRootError as exc:
        raise ReferenceRootError(f"{exc.reason} (--allow-reference)", path=exc.path) from None
    server.run("stdio")


@harness_group.command("image")
@click.option(
    "--engine",
    type=click.Choice(["podman", "docker"]),
    default="podman",
    show_default=True,
    help="The container engine that builds (and will run) the image.",
)
@click.option(
    "--base",
    default=None,
    help="The base image: python3 with venv, of this machine's Python [python:3.11-slim].",
)
@click.option("--tag", default=None, help="The image's name [localhost/genotex-sandbox:VERSION].")
@click.option(
    "--wheel",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="genotex's wheel, where genotex is not run from its source checkout.",
)
@common_options
@handle_errors
def image_command(engine: str, base: str | None, tag: str | None, wheel: Path | None) -> None:
    """Build the sandbox image for -T sandbox=podman or docker, with no network.

    genotex's wheel (built from its checkout) and its dependencies' wheels are
    made here; the image build itself needs no network, so a base imported
    locally is enough.

    \b
    Example (a machine with no image registry, as CI does):
      mmdebstrap --variant=minbase --include=python3,python3-venv bookworm base.tar
      podman import base.tar localhost/genotex-base:bookworm
      genotex harness image --base localhost/genotex-base:bookworm
    """
    from ..harness.sandboxes import build_image

    built = build_image(engine=engine, base=base, tag=tag, wheel=wheel)
    say(
        f"built {built.tag} with {built.engine} from {built.base} "
        f"({built.wheels} wheels, {built.seconds:.0f} s)"
    )
