"""What export checks before it writes anything: the folder it writes is not the
reference's (nor holds it, lies in it, or holds the log), and the log holds every sample of
every epoch Inspect ran.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ...core import GenotexError
from ._logged import MAX_EPOCHS, LoggedRun

__all__ = ["check_out_folder", "check_plan"]


def check_out_folder(out: Path, reference: Path, log_path: Path) -> None:
    """Refuse, before anything is written or removed, an export folder that is, holds or lies
    inside the reference (export replaces `OUT/output`), or that holds the log.
    """
    target, answers = Path(os.path.realpath(out)), Path(os.path.realpath(reference))
    log = Path(os.path.realpath(log_path))
    if target == answers or answers in target.parents:
        raise GenotexError(
            "lies inside the reference folder; export to a folder of its own", path=out
        )
    if target in answers.parents:
        raise GenotexError(
            f"holds the reference {reference} (export replaces OUT/output); export to a folder "
            "of its own",
            path=out,
        )
    if target in log.parents:
        raise GenotexError(f"holds the log {log_path}; export to a folder of its own", path=out)


def check_plan(log: Any, run: LoggedRun, held: set[tuple[str, int]], log_path: str | Path) -> None:
    """Refuse a log that lacks a sample of an epoch Inspect ran: the samples its dataset
    lists (after `--limit` or `--sample-id`), times its epochs; one of them missing would
    leave a failure out of Succ. and coverage.
    """
    listed = getattr(log.eval.dataset, "sample_ids", None)
    ids = [str(i) for i in listed] if isinstance(listed, list) else list(run.specs)
    epochs = getattr(log.eval.config, "epochs", None) or 1
    if not isinstance(epochs, int) or isinstance(epochs, bool) or not 1 <= epochs <= MAX_EPOCHS:
        raise GenotexError(f"records {str(epochs)[:20]} epochs", path=log_path)
    unplanned = [i for i in ids if i not in run.specs]
    if unplanned:
        raise GenotexError(
            f"ran a sample {unplanned[0][:200]!r} that its task_info does not plan", path=log_path
        )
    planned = {(i, e) for i in ids for e in range(1, epochs + 1)}
    missing = sorted(planned - held, key=lambda pair: (pair[1], pair[0]))
    if missing:
        sample, epoch = missing[0]
        raise GenotexError(
            f"holds {len(planned & held)} of the {len(planned)} samples x epochs Inspect ran "
            f"(sample {sample[:200]!r} of epoch {epoch} is missing); export a complete run",
            path=log_path,
        )
