"""The `genotex` command line: parse options, call the library, render its results."""

from __future__ import annotations

import functools
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import click

from . import __version__
from .errors import GenotexError

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


class _GreedyCommand(click.Command):
    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, _expand_greedy(args, _GREEDY_OPTIONS))


def _fail(message: str, code: int = 1) -> None:
    click.echo(f"genotex: error: {message}", err=True)
    sys.exit(code)


def handle_errors(function: Callable[..., Any]) -> Callable[..., Any]:
    """Turn errors into one sentence and a non-zero exit; `--debug` shows the traceback."""

    @functools.wraps(function)
    def wrapper(*args: Any, debug: bool = False, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except click.ClickException:
            raise  # usage errors: Click prints them with the usage line (exit 2)
        except KeyboardInterrupt:
            _fail("interrupted", 130)
        except Exception as exc:
            if debug:
                raise
            if isinstance(exc, GenotexError):
                _fail(str(exc))
            if isinstance(exc, OSError):
                _fail(f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": "))
            _fail(f"unexpected {exc.__class__.__name__}: {exc} (run again with --debug for the traceback)")

    return wrapper


def _debug_option(function: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--debug", is_flag=True, help="Show the full traceback of an error.")(function)


def _tqdm_progress(enabled: bool) -> Callable[[Iterable[Any], str, int], Iterable[Any]]:
    """Progress bars on stderr (shown only on a terminal, and only for long stages)."""

    def progress(items: Iterable[Any], description: str, total: int) -> Iterable[Any]:
        if not enabled or total < 20:
            return items
        from tqdm import tqdm

        return tqdm(items, desc=description, total=total, file=sys.stderr, leave=False, disable=None)

    return progress


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="genotex")
def main() -> None:
    """genotex: the GenoTEX benchmark toolkit.

    Evaluate a submission with `genotex eval -p PRED -r REF`; try it on a
    generated example with `genotex demo`.
    """


@main.command("eval", cls=_GreedyCommand)
@click.option("-p", "--pred", "pred", required=True, type=click.Path(path_type=Path),
              help="The prediction's output/ folder (holding preprocess/ and regress/).")
@click.option("-r", "--ref", "ref", default=Path("output"), show_default=True, type=click.Path(path_type=Path),
              help="The reference output/ folder.")
@click.option("-t", "--tasks", "tasks", multiple=True,
              type=click.Choice(["selection", "preprocessing", "analysis"]),
              help="Tasks to evaluate (several after one flag); default: all three.")
@click.option("-s", "--subtasks", "subtasks", multiple=True, type=click.Choice(["gene", "clinical", "linked"]),
              help="Preprocessing subtasks (several after one flag); default: all three.")
@click.option("--task-info", type=click.Path(path_type=Path), default=None,
              help="task_info.json; default: metadata/task_info.json next to REF.")
@click.option("--json", "json_path", type=click.Path(path_type=Path), default=None,
              help="Write the full report (unrounded numbers, problems found) as JSON.")
@click.option("--csv", "csv_dir", type=click.Path(path_type=Path), default=None,
              help="Write per-trait, per-problem and per-file tables as CSV into this folder.")
@click.option("--details", is_flag=True, help="Also print per-trait, per-problem and per-file tables.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True,
              help="Worker processes for scoring preprocessed tables.")
@click.option("--max-file-mb", type=click.FloatRange(min=0, min_open=True), default=512, show_default=True,
              help="Prediction files larger than this are treated as unreadable.")
@click.option("--no-progress", is_flag=True, help="Never show progress bars.")
@_debug_option
@handle_errors
def eval_command(
    pred: Path,
    ref: Path,
    tasks: tuple[str, ...],
    subtasks: tuple[str, ...],
    task_info: Path | None,
    json_path: Path | None,
    csv_dir: Path | None,
    details: bool,
    jobs: int,
    max_file_mb: float,
    no_progress: bool,
) -> None:
    """Score a prediction tree against the reference with the published GenoTEX metrics."""
    from .evaluate import SUBTASKS, TASKS, EvalOptions, evaluate

    options = EvalOptions(
        tasks=tuple(dict.fromkeys(tasks)) or TASKS,
        subtasks=tuple(dict.fromkeys(subtasks)) or SUBTASKS,
        jobs=jobs,
        max_file_mb=max_file_mb,
    )
    task_info = task_info or ref.parent / "metadata" / "task_info.json"
    started = time.perf_counter()
    report = evaluate(pred, ref, task_info, options=options, progress=_tqdm_progress(not no_progress))
    _emit(report, details=details, json_path=json_path, csv_dir=csv_dir)
    click.echo(f"evaluated in {time.perf_counter() - started:.1f} s", err=True)


def _emit(report: Any, *, details: bool, json_path: Path | None, csv_dir: Path | None) -> None:
    from .atomic import write_text_atomic
    from .render import render_text, write_csv_tables

    click.echo(render_text(report, details=details), nl=False)
    if json_path is not None:
        write_text_atomic(json_path, report.to_json())
        click.echo(f"JSON report: {json_path}", err=True)
    if csv_dir is not None:
        written = write_csv_tables(report, csv_dir)
        click.echo(f"CSV tables: {len(written)} files in {csv_dir}", err=True)


@main.command("demo")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Folder for the generated benchmark (default: a new temporary folder).")
@click.option("--seed", type=int, default=7, show_default=True, help="Seed of the generator.")
@click.option("--eval-only", is_flag=True, help="Only the quick evaluation demo (a generated reference and prediction).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--details", is_flag=True, help="Also print the per-trait, per-problem and per-file tables.")
@_debug_option
@handle_errors
def demo_command(out: Path | None, seed: int, eval_only: bool, jobs: int, details: bool) -> None:
    """Run the whole pipeline (preprocess -> regress -> eval) on a generated benchmark, no download."""
    folder = out if out is not None else Path(tempfile.mkdtemp(prefix="genotex-demo-"))
    started = time.perf_counter()
    if eval_only:
        from .evaluate import evaluate
        from .synth import DEMO_SPEC, write_example

        example = write_example(folder, DEMO_SPEC, seed=seed)
        click.echo(f"example written to {folder}", err=True)
        report = evaluate(example.pred_output, example.ref_output, example.task_info)
        _emit(report, details=details, json_path=folder / "eval_report.json", csv_dir=None)
        click.echo(f"\nTry it yourself:\n  genotex eval -p {example.pred_output} -r {example.ref_output} --details", err=True)
    else:
        import logging

        from .demo import run_demo

        logging.basicConfig(level=logging.INFO, format="  %(message)s", stream=sys.stderr)
        click.echo(f"generating a small benchmark in {folder} and running the pipeline ...", err=True)
        run = run_demo(folder, seed=seed, jobs=jobs)
        _emit(run.report, details=details, json_path=folder / "eval_report.json", csv_dir=None)
        stages = ", ".join(f"{name} {s:.1f} s" for name, s in run.seconds.items())
        click.echo(f"""
Where everything is ({stages}):
  raw inputs        {folder / 'input'} (GEO series matrices + SOFT, one Xena cohort)
  recipes           {folder / 'recipes'}
  task_info         {folder / 'metadata' / 'task_info.json'}
  pipeline output   {folder / 'output'} (preprocess/, regress/ with status.json)
  true answers      {folder / 'reference' / 'output'}
  scorecard JSON    {folder / 'eval_report.json'}
Re-run a stage yourself, from {folder}:
  genotex preprocess --all --input input --out output/preprocess
  genotex regress --all --force
  genotex eval -p output -r reference/output --task-info metadata/task_info.json --details""", err=True)
    click.echo(f"demo finished in {time.perf_counter() - started:.1f} s", err=True)


@main.command("regress")
@click.option("--trait", "traits", multiple=True, help="A trait to answer (repeatable); all its problems unless --condition.")
@click.option("--condition", default=None, help="Answer only (trait, condition); 'None' for the unconditional problem.")
@click.option("--all", "all_problems", is_flag=True, help="Answer every problem of task_info.json.")
@click.option("--data", type=click.Path(path_type=Path), default=Path("output/preprocess"), show_default=True,
              help="The preprocess folder holding <trait>/cohort_info.json and linked CSVs.")
@click.option("--task-info", type=click.Path(path_type=Path), default=Path("metadata/task_info.json"),
              show_default=True, help="task_info.json (related genes and conditions).")
@click.option("--out", type=click.Path(path_type=Path), default=Path("output/regress"), show_default=True,
              help="Where significant_genes_condition_<C>.json files are written.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True,
              help="Problems answered in parallel processes.")
@click.option("--scheduler", default=None, help="Address of an existing Dask distributed scheduler to run on.")
@click.option("--force", is_flag=True, help="Redo problems whose output already exists.")
@click.option("--summary", type=click.Path(path_type=Path), default=None,
              help="Run summary JSON (status.json schema); default: OUT/status.json.")
@_debug_option
@handle_errors
def regress_command(traits: tuple[str, ...], condition: str | None, all_problems: bool, data: Path,
                    task_info: Path, out: Path, jobs: int, scheduler: str | None, force: bool,
                    summary: Path | None) -> None:  # fmt: skip
    """Answer problems with the standardized GenoTEX regression pipeline."""
    import logging

    from .layout import ProblemId, check_safe_name, load_task_info
    from .regression.run import run_problems, write_summary

    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    info = load_task_info(task_info)
    if all_problems == bool(traits):
        raise click.UsageError("give either --all or --trait (one or more)")
    if condition is not None and len(traits) != 1:
        raise click.UsageError("--condition goes with exactly one --trait")
    if not data.is_dir():
        raise GenotexError("the data folder does not exist", path=data)
    problems = list(info.problems())
    if traits:
        for trait in traits:
            check_safe_name(trait, what="trait name")
            if trait not in info.related_genes:
                raise GenotexError(f"task_info has no trait {trait!r}", path=task_info)
        problems = [p for p in problems if p.trait in traits]
        if condition is not None:
            wanted = ProblemId(traits[0], None if condition == "None" else check_safe_name(condition, what="condition"))
            problems = [p for p in problems if p == wanted] or [wanted]
    outcomes = run_problems(problems, data, info, out, jobs=jobs, scheduler=scheduler, force=force)
    write_summary(summary or out / "status.json", outcomes)
    counts = {kind: sum(o.status.startswith(kind) for o in outcomes) for kind in ("ok", "skipped", "failed")}
    click.echo(f"{len(outcomes)} problems: {counts['ok']} answered, {counts['skipped']} skipped, "
               f"{counts['failed']} failed; results in {out}", err=True)  # fmt: skip
    if counts["failed"]:
        sys.exit(1)


def _synonyms(path: Path | None):
    """The synonym table: --synonyms (JSON, gene_info or 'mygene'), else metadata/gene_synonym.json here."""
    from .symbols import load_synonyms

    if path is None:
        default = Path("metadata") / "gene_synonym.json"
        if not default.exists():
            raise GenotexError("no synonym table: give --synonyms FILE (gene_synonym.json or "
                               "Homo_sapiens.gene_info.gz), or run from a benchmark root with metadata/gene_synonym.json")  # fmt: skip
        path = default
    return load_synonyms(path)


def _proposal_text(cohort_dir: Path, trait: str) -> str:
    from .clinical import propose_rows
    from .geo import characteristics_dictionary, read_series_matrix
    from .preprocess import find_matrix

    matrix = read_series_matrix(find_matrix(cohort_dir))
    lines = [f"# proposed recipe for {trait} / {cohort_dir.name}: review it, then write the trait rules",
             f'trait = "{trait}"', f'cohort = "{cohort_dir.name}"', ""]  # fmt: skip
    for name, variable in propose_rows(matrix.characteristics).items():
        lines += [f"[variables.{name.lower()}]", f"row = {variable.row}  # {variable.note}"]
        lines += ["numeric = true", ""] if variable.numeric else [
            'rules = [{ match = "female", how = "exact", value = 0 }, { match = "male", how = "exact", value = 1 }]', ""]
    lines.append("# characteristics rows (row: most frequent values):")
    for row, values in characteristics_dictionary(matrix.characteristics).items():
        lines.append(f"#   {row}: {values[:6]}")
    return "\n".join(lines)


@main.command("preprocess")
@click.option("--trait", default=None, help="The trait (one cohort mode).")
@click.option("--cohort-dir", type=click.Path(path_type=Path), default=None,
              help="A GEO series folder or a Xena cohort folder, anywhere on disk.")
@click.option("--recipe", type=click.Path(path_type=Path), default=None, help="The cohort's recipe (GEO).")
@click.option("--all", "all_cohorts", is_flag=True, help="Every cohort of the layout under --input.")
@click.option("--input", "input_root", type=click.Path(path_type=Path), default=Path("input"), show_default=True)
@click.option("--recipes", type=click.Path(path_type=Path), default=None,
              help="Recipes as RECIPES/<trait>/<GSE>.toml|json (default: ./recipes when present).")
@click.option("--task-info", type=click.Path(path_type=Path), default=Path("metadata/task_info.json"), show_default=True)
@click.option("--synonyms", type=click.Path(path_type=Path), default=None,
              help="gene_synonym.json, Homo_sapiens.gene_info(.gz), or 'mygene' (MyGene.info, online); "
                   "default: metadata/gene_synonym.json.")
@click.option("--gene-info", type=click.Path(path_type=Path), default=None,
              help="NCBI gene_info, for platforms keyed by Entrez GeneID.")
@click.option("--out", type=click.Path(path_type=Path), default=Path("output/preprocess"), show_default=True)
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True)
@_debug_option
@handle_errors
def preprocess_command(trait: str | None, cohort_dir: Path | None, recipe: Path | None, all_cohorts: bool,
                       input_root: Path, recipes: Path | None, task_info: Path, synonyms: Path | None,
                       gene_info: Path | None, out: Path, jobs: int) -> None:  # fmt: skip
    """Turn raw GEO / TCGA files into the benchmark's CSVs and cohort_info.json."""
    import logging

    from .layout import check_safe_name, load_task_info
    from .preprocess import plan_layout, preprocess_geo, preprocess_tcga, run_jobs
    from .symbols import gene_id_symbols

    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    table = _synonyms(synonyms)
    gene_ids = gene_id_symbols(gene_info) if gene_info else None
    if all_cohorts:
        if trait or cohort_dir:
            raise click.UsageError("--all goes without --trait/--cohort-dir")
        if not input_root.is_dir():
            raise GenotexError("the input folder does not exist", path=input_root)
        recipes = recipes or (Path("recipes") if Path("recipes").is_dir() else None)
        jobs_list = plan_layout(input_root, recipes, load_task_info(task_info).traits)
        results = run_jobs(jobs_list, table, out, gene_ids=gene_ids, jobs=jobs)
        width = max((len(f"{j.trait}/{j.cohort}") for j, _ in results), default=10)
        for job, status in results:
            click.echo(f"{f'{job.trait}/{job.cohort}':<{width}}  {status}")
        failed = sum(status.startswith("failed") for _, status in results)
        click.echo(f"{len(results)} cohorts, {failed} failed; outputs in {out}", err=True)
        sys.exit(1 if failed else 0)
    if not (trait and cohort_dir):
        raise click.UsageError("give --trait and --cohort-dir (one cohort), or --all")
    check_safe_name(trait, what="trait name")
    if not cohort_dir.is_dir():
        raise GenotexError("the cohort folder does not exist", path=cohort_dir)
    if any(cohort_dir.glob("*clinicalMatrix")):
        outcome, columns = preprocess_tcga(cohort_dir, trait, table, out)
        click.echo(f"{trait}/Xena: {outcome.summary} (Age from {columns['Age']}, Gender from {columns['Gender']})")
        return
    if recipe is None:
        click.echo(_proposal_text(cohort_dir, trait))
        raise GenotexError("a GEO cohort needs a recipe for its trait: the proposal above lists the rows it found",
                           path=cohort_dir)  # fmt: skip
    outcome = preprocess_geo(cohort_dir, recipe, table, out, gene_ids=gene_ids)
    click.echo(f"{trait}/{outcome.cohort}: {outcome.summary}")


@main.command("inspect")
@click.argument("cohort_dir", type=click.Path(path_type=Path))
@click.option("--values", "max_values", type=int, default=8, show_default=True, help="Values shown per row or column.")
@_debug_option
@handle_errors
def inspect_command(cohort_dir: Path, max_values: int) -> None:
    """What to read before writing a recipe: background, characteristics, platform columns."""
    from .inspect import inspect_cohort

    click.echo(inspect_cohort(cohort_dir, max_values=max_values))


@main.group("synonyms")
def synonyms_group() -> None:
    """Build or query the gene synonym table."""


@synonyms_group.command("build")
@click.option("--gene-info", type=click.Path(path_type=Path), required=True, help="NCBI Homo_sapiens.gene_info(.gz).")
@click.option("--out", type=click.Path(path_type=Path), default=None, help="Write gene_synonym.json here too.")
@_debug_option
@handle_errors
def synonyms_build(gene_info: Path, out: Path | None) -> None:
    """Build the synonym table as the published builder does (cached in the user cache folder)."""
    import json

    from .atomic import write_text_atomic
    from .symbols import cached_synonym_table

    table = cached_synonym_table(gene_info)
    if out is not None:
        write_text_atomic(out, json.dumps(table, indent=1, sort_keys=True) + "\n")
    symbols = len(set(table.values()))
    click.echo(f"{len(table)} aliases -> {symbols} official symbols" + (f"; written to {out}" if out else ""))


@synonyms_group.command("lookup")
@click.argument("aliases", nargs=-1, required=True)
@click.option("--synonyms", type=click.Path(path_type=Path), default=None)
@_debug_option
@handle_errors
def synonyms_lookup(aliases: tuple[str, ...], synonyms: Path | None) -> None:
    """Show the official symbol of each alias (or that it has none)."""
    table = _synonyms(synonyms)
    for alias in aliases:
        click.echo(f"{alias}\t{table.get(alias.upper(), '(not a known human gene symbol)')}")


if __name__ == "__main__":  # pragma: no cover
    main()
