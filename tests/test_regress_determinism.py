"""The same answer however a problem is asked for (issue: "the same answer however it is asked").

Every problem of the synthetic fixture, in both modes, is answered four ways:
alone in a fresh `genotex regress` process (SciPy first loaded inside the BLAS
limit: the way that used to differ), as `--all --jobs 1`, as `--all --jobs 2`,
and through the library's `answer_problem` in this process (whose BLAS started
threaded). All must be byte-identical, and equal to a run in a process started
on one BLAS thread (`OPENBLAS_NUM_THREADS=1`: "the reference on one thread"); the
Lasso answers also equal the fixture's reference answers (test_regress_parity).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from genotex.core import ProblemId, TaskInfo
from genotex.regression import answer_problem, run_problems, write_result
from tests import one_thread
from tests.one_thread import blas_environment, regress_command, run_regress

MODES = ("reference", "standard")


def _answers(out: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(out)): p.read_bytes()
        for p in sorted(out.rglob("significant_genes_condition_*.json"))
    }


@pytest.fixture(scope="module")
def case(shared):
    return shared / "fixtures" / "regress" / "synthetic"


@pytest.fixture(scope="module")
def answered(case):
    """The problems the reference answers ("ok" in the fixture's status.json)."""
    status = json.loads((case / "expected" / "status.json").read_text())
    return [ProblemId.from_key(key) for key, entry in status.items() if entry["status"] == "ok"]


@pytest.fixture(scope="module", params=MODES)
def one_thread_run(request, case, tmp_path_factory):
    """`--all` in a process started on one BLAS thread: the answers everything must equal
    (the run test_regress_parity compares with the reference's, in reference mode)."""
    return request.param, _answers(one_thread.one_thread_run(tmp_path_factory, case, request.param))


@pytest.mark.slow
def test_every_way_of_asking_gives_the_one_thread_answer(case, answered, one_thread_run, tmp_path):
    mode, expected = one_thread_run
    assert len(expected) == len(answered) == 10
    # --jobs 2 through the suite's table cache; --jobs 1 parsing every table (--no-cache):
    # each way the tables are read and the problems spread gives the one-thread answer
    for jobs, extra in (("2", ()), ("1", ("--no-cache",))):
        out = tmp_path / f"all-{jobs}"
        run_regress(regress_command(case, out, mode, "--all", "--jobs", jobs, *extra))
        assert _answers(out) == expected, f"--all --jobs {jobs} {' '.join(extra)}"
    # one problem per process: a process costs ~4 s of imports, so two of the ten, spread
    # over the list (test_any_subset_order... asks other subsets, in one process)
    alone = tmp_path / "alone"
    for problem in answered[::5]:
        condition = problem.condition or "None"
        run_regress(
            regress_command(case, alone, mode, "--trait", problem.trait, "--condition", condition)
        )
    produced = _answers(alone)
    assert len(produced) == 2 and produced == {k: expected[k] for k in produced}, "one a process"
    info = TaskInfo.read(case / "metadata" / "task_info.json")
    library = tmp_path / "library"
    for problem in answered:
        result = answer_problem(case / "output" / "preprocess", problem, info, mode=mode)
        write_result(library, result)
    assert _answers(library) == expected, "answer_problem in a process with a threaded BLAS"


def test_none_is_the_unconditional_problem_in_any_case(case):
    info = TaskInfo.read(case / "metadata" / "task_info.json")
    for spelling in ("None", "none", "NONE"):
        assert info.select(["Hypothyroidism"], spelling) == [ProblemId("Hypothyroidism", None)]


@pytest.mark.slow
@settings(
    max_examples=3,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_any_subset_order_and_job_count_gives_the_same_answers(
    data, case, answered, one_thread_run, tmp_path_factory
):
    mode, expected = one_thread_run
    chosen = data.draw(st.lists(st.sampled_from(answered), min_size=1, max_size=4, unique=True))
    chosen = data.draw(st.permutations(chosen))
    jobs = data.draw(st.integers(min_value=1, max_value=2))
    out = tmp_path_factory.mktemp("subset")
    info = TaskInfo.read(case / "metadata" / "task_info.json")
    run_problems(chosen, case / "output" / "preprocess", info, out, jobs=jobs, mode=mode)
    produced = _answers(out)
    assert produced == {name: expected[name] for name in produced}
    assert len(produced) == len(chosen)


def test_a_blas_that_cannot_be_limited_is_said_once_loudly(monkeypatch):
    from genotex.regression import BlasThreadWarning, _blas, one_blas_thread

    threaded = [{"user_api": "blas", "internal_api": "mkl", "num_threads": 2, "filepath": "/x"}]
    monkeypatch.setattr(_blas, "threadpool_info", lambda: threaded)
    monkeypatch.setattr(_blas, "_warned", False)
    with pytest.warns(BlasThreadWarning, match=r"mkl \(x, 2 threads\).*run_problems"):
        with one_blas_thread(reference=False):
            pass
    with one_blas_thread(reference=False):  # once per process: no second warning
        pass


def _fresh(code: str) -> str:
    env = blas_environment()  # threaded, as on any 2-core machine
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_the_standard_mode_starts_without_pandas_scipy_or_scikit_learn(case, tmp_path):
    """What `--mode standard` needs up front is NumPy: pandas, SciPy and scikit-learn took
    ~0.5 s of a 1.5 s run. A Lasso problem read from a warm cache imports none of them
    (nor polars, which only parses)."""
    code = f"""
import sys
from genotex.core import TableCache
from genotex.regression import answer_problem
cache = TableCache({str(tmp_path / "cache")!r})
data, info = {str(case / "output" / "preprocess")!r}, {str(case / "metadata" / "task_info.json")!r}
result = answer_problem(data, "Prostate_Cancer|None", info, mode="standard", cache=cache)
print(result.model, sorted({{"pandas", "polars", "scipy", "sklearn"}} & set(sys.modules)))
"""
    assert _fresh(code) == "Lasso ['polars']"  # the cold run parses
    assert _fresh(code) == "Lasso []"  # the warm run maps the parsed table


def test_scipy_loaded_inside_the_limit_is_limited_by_a_nested_block():
    """A batch effect's `eigh` loads SciPy inside the standard mode's limit; the nested
    `one_blas_thread(libraries=...)` puts its BLAS on one thread too, and gives it back."""
    code = """
import sys
from threadpoolctl import threadpool_info
from genotex.regression import one_blas_thread
def blas():
    found = threadpool_info()
    return sorted((i["filepath"], i["num_threads"]) for i in found if i["user_api"] == "blas")
with one_blas_thread(reference=False):
    assert "scipy" not in sys.modules
    outer = blas()
    with one_blas_thread(libraries=("scipy.linalg",)):
        inside = blas()
    after = blas()
print(len(outer) < len(inside), {n for _, n in inside}, {n for _, n in after} == {1, 2})
"""
    assert _fresh(code) == "True {1} True"
