"""What the quick suite (`-m "not slow"`, the inner loop) leaves to the whole suite (#71).

A test marked `slow` in its module runs minutes or proves something only at size. The tests
below are marked here instead: each is whole-suite only because the quick test named beside
it shows the same property on less (a shorter wait, a smaller input, another sandbox), so a
quick run still covers it. A podman variant of a test (`[...podman...]`) is whole-suite
only too: its bwrap variant, in the quick suite, runs the same probe in an isolated sandbox
(CI runs both). `tests/test_quick_suite.py` checks that every name here, and every sibling,
is a test of its module, and that no sibling is itself left out.
"""

from __future__ import annotations

#: "module::test" -> "module::test" of the quick sibling that shows the same property
WHOLE_SUITE_ONLY: dict[str, str] = {
    # waits on the default windows (tens of seconds); the siblings use a short window
    "test_transfer_hostile.py::test_a_body_that_stalls_after_its_headers_is_cut_off_in_under_30_s":
        "test_download.py::test_a_server_trickling_bytes_is_cut_off",
    "test_transfer_hostile.py::test_a_listing_dribbled_a_byte_every_3_s_stops_with_a_sentence":
        "test_transfer_hostile.py::test_a_dribbled_small_body_stops_at_the_rate_floor",
    "test_download.py::test_a_byte_every_few_seconds_is_cut_off_within_the_default_window":
        "test_download.py::test_a_server_trickling_bytes_is_cut_off",
    "test_dask.py::test_a_port_that_is_not_a_scheduler_is_refused_in_bounded_time":
        "test_dask.py::test_an_unreachable_scheduler_is_one_sentence",
    "test_dask.py::test_a_scheduler_killed_under_the_command_line_is_one_line_on_its_terminal":
        "test_dask.py::test_a_scheduler_killed_mid_run_ends_it_in_one_sentence",
    "test_dask.py::test_a_run_whose_only_worker_is_gone_for_good_ends_in_one_sentence":
        "test_dask.py::test_a_worker_killed_mid_run_is_replaced_and_the_run_finishes",
    # GenoAgent's longer runs: the siblings replay, review and abandon on one cohort
    "test_genoagent.py::test_harness_replay_exits_0_when_the_same_1_naming_the_difference_and_refuses_a_baseline":
        "test_genoagent.py::test_a_scripted_run_replays_from_its_log_and_an_edited_log_shows_where",
    "test_genoagent.py::test_a_run_with_an_abandoned_workflow_replays_the_same":
        "test_genoagent.py::test_a_cohort_out_of_its_budget_is_abandoned_with_its_reason",
    "test_genoagent.py::test_a_code_reviewer_that_always_says_verdict_reject_has_every_step_it_reviews_rewritten":
        "test_genoagent.py::test_a_broken_draft_is_rejected_with_its_trace_and_passes_on_revision",
    "test_genoagent.py::test_a_log_of_one_sample_replays_that_sample_only":
        "test_genoagent.py::test_a_scripted_run_replays_from_its_log_and_an_edited_log_shows_where",
    # whole runs of the harness: the siblings run one problem, one trait or one row
    "test_harness.py::test_baseline_scores_what_genotex_baseline_then_eval_scores":
        "test_harness.py::test_the_analysis_baseline_answers_its_problem",
    "test_sandbox_hostile.py::test_without_a_sandbox_named_the_task_picks_bwrap_and_scores_what_local_scores":
        "test_sandbox_escapes.py::test_random_runs_end_to_end_in_each_isolated_sandbox",
    "test_sandbox_hostile.py::test_a_venv_under_tmp_runs_the_baseline_in_bwrap":
        "test_sandbox_escapes.py::test_random_runs_end_to_end_in_each_isolated_sandbox",
    "test_harness_rows.py::test_the_plain_lasso_and_lmm_rows_equal_regress_with_that_model":
        "test_harness_rows.py::test_random_genes_score_what_the_closed_form_expects",
    # the notebook page executed on real data: the siblings check each number it shows
    "test_notebook_page.py::test_the_page_runs_on_what_its_own_download_command_fetches":
        "test_notebook_v4.py::test_samples_repeated_by_pd_concat_and_reset_index_are_refused_by_name",
    "test_notebook_page.py::test_every_figure_of_the_page_is_titled_with_trait_and_cohort":
        "test_notebook_page.py::test_the_page_is_checked_in_executed_by_this_version",
    # long runs of the command line: the siblings stop or print on fewer problems
    "test_cli.py::test_a_long_run_says_where_it_is_and_q_v_say_less_or_more":
        "test_cli.py::test_no_progress_drops_the_count_and_the_time_left_not_the_results",
    "test_regress_runs.py::test_an_interrupted_then_resumed_run_records_what_an_uninterrupted_one_does":
        "test_regress_runs.py::test_a_stop_ends_the_workers_says_so_and_records_what_finished",
    # one variant of a parametrized test: the sibling variant shows the same property, the
    # other sandbox's or cluster's path is shown by the test named in the comment
    # the team's logic is the sandbox's; the kernel in bwrap: test_kernel.py's bwrap variants
    "test_genoagent.py::test_a_broken_draft_is_rejected_with_its_trace_and_passes_on_revision[bwrap]":
        "test_genoagent.py::test_a_broken_draft_is_rejected_with_its_trace_and_passes_on_revision[local]",
    # a replay in an isolated sandbox: test_sandbox_isolation.py's log that says local
    "test_genoagent.py::test_a_scripted_run_replays_from_its_log_and_an_edited_log_shows_where[bwrap]":
        "test_sandbox_isolation.py::test_a_log_that_says_local_replays_in_an_isolated_sandbox_and_writes_no_host_file",
    # a scheduler and workers started apart: test_eval_on_dask_equals_a_local_run's variant
    "test_dask.py::test_diagnose_on_dask_and_in_processes_equals_one_process[scheduler + 2 workers]":  # noqa: E501
        "test_dask.py::test_diagnose_on_dask_and_in_processes_equals_one_process[LocalCluster]",
    "test_dask.py::test_preprocess_all_on_dask_equals_a_local_run[scheduler + 2 workers]":
        "test_dask.py::test_preprocess_all_on_dask_equals_a_local_run[LocalCluster]",
    # the synthetic case's ten answers byte for byte again with --jobs 2: the sibling answers
    # four of them in two dask worker processes (test_regress_determinism, whole suite:
    # every way of asking)
    "test_regress_parity.py::test_outputs_are_byte_identical_across_runs_and_with_jobs":
        "test_regress_parity.py::test_dask_local_cluster_gives_the_same_answers",
    # 40 damaged reports rendered whole: the sibling damages every other reader's format
    "test_property_readers.py::test_a_damaged_saved_report_renders_or_is_a_report_error":
        "test_property_readers.py::test_a_damaged_csv_is_a_table_or_a_table_error",
}  # fmt: skip


def whole_suite_only(module: str, name: str, parameters: str) -> bool:
    """Whether the test `name` of `module` (its parameters' id) is left to the whole suite:
    all its variants (`module::name`), or one (`module::name[parameters]`).
    """
    test = f"{module}::{name}"
    return (
        test in WHOLE_SUITE_ONLY
        or f"{test}[{parameters}]" in WHOLE_SUITE_ONLY
        or "podman" in parameters
    )
