"""The quick suite leaves a test to the whole suite only with a quick sibling (#71)."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.doc_commands import ROOT
from tests.quick_suite import WHOLE_SUITE_ONLY, whole_suite_only


def _defined(reference: str) -> bool:
    module, name = reference.split("[")[0].split("::")
    return re.search(rf"^def {name}\(", (ROOT / "tests" / module).read_text(), re.M) is not None


def test_every_test_left_out_and_every_sibling_is_a_test_of_its_module():
    missing = [r for pair in WHOLE_SUITE_ONLY.items() for r in pair if not _defined(r)]
    assert missing == []


def test_no_sibling_is_itself_left_to_the_whole_suite():
    assert set(WHOLE_SUITE_ONLY.values()).isdisjoint(WHOLE_SUITE_ONLY)


def test_a_podman_variant_is_left_out_and_its_bwrap_one_kept():
    assert whole_suite_only("test_kernel.py", "test_x", "podman")
    assert whole_suite_only("test_kernel.py", "test_x", "fork-podman")
    assert not whole_suite_only("test_kernel.py", "test_x", "bwrap")


def test_a_variant_named_with_its_parameters_is_left_out_alone():
    name = "test_a_broken_draft_is_rejected_with_its_trace_and_passes_on_revision"
    assert whole_suite_only("test_genoagent.py", name, "bwrap")
    assert not whole_suite_only("test_genoagent.py", name, "local")


def test_the_quick_suite_deselects_them_and_keeps_their_siblings():
    """By collection, as a contributor runs it (`-m "not slow"`): a listed test is gone, its
    sibling stays."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "not slow",
         "-p", "no:cacheprovider", "tests/test_dask.py"],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    kept = done.stdout
    assert "test_a_port_that_is_not_a_scheduler_is_refused_in_bounded_time" not in kept
    assert "test_an_unreachable_scheduler_is_one_sentence" in kept
    # one variant left out (`name[parameters]`), the other kept
    diagnose = "test_diagnose_on_dask_and_in_processes_equals_one_process"
    assert f"{diagnose}[LocalCluster]" in kept and f"{diagnose}[scheduler + 2 workers]" not in kept
