"""What GenoAgent sends a model: prompt size per call and calls per workflow, measured.

Runs the scripted correct team of the tests (`tests/paper_team.py`: every step written as a
capable model writes it over the paper library, every review approving) through
`genotex/e2e` on the generated demo benchmark, offline (mockllm, `local` sandbox), and
reads the log: per role, its calls and the characters of the messages each call sends
(system prompt included; a token is about 4 characters of English), and the calls per
GEO cohort, TCGA workflow and problem. The sizes depend on the prompts and on what the
steps print, not on a model: a real model's replies (longer code, more output) make them
larger. With `--realistic` the benchmark is `genotex demo --realistic`'s and the team is
tests/realistic_team.py's, and each trait's calls and characters are printed too (a token
is counted as 4 characters: an estimate, no tokenizer is used). Also printed: the share of
what is sent that is each role's system prompt (its role text, the guidelines and the
library's documentation: the same at every call of the role, the prefix a provider's
prompt cache bills at a fraction), and the estimated input tokens per problem. Run from the
repository's root:

    python scripts/genoagent_prompts.py [--traits Asthma,Psoriasis] [--realistic]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("INSPECT_DISABLE_MODEL_API", "1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traits", default="Asthma,Psoriasis")
    parser.add_argument("--realistic", action="store_true")
    arguments = parser.parse_args()
    traits, realistic = arguments.traits, arguments.realistic

    from inspect_ai import eval as inspect_eval
    from inspect_ai.event import ModelEvent, SpanBeginEvent
    from inspect_ai.log import resolve_sample_attachments
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    from genotex.harness.runs._tasks import e2e
    from genotex.harness.solvers.genoagent import ROLES, genoagent
    from genotex.workflows import write_raw_benchmark, write_realistic_benchmark
    from tests.realistic_team import CORRECT as REALISTIC
    from tests.test_genoagent import baseline_script, team_script

    script = team_script(REALISTIC) if realistic else baseline_script

    def role_model(role: str):
        def answer(messages, tools, tool_choice, config):
            output = ModelOutput.from_content(
                "mockllm/model", script(role, str(messages[-1].content))
            )
            output.usage = ModelUsage(input_tokens=0, output_tokens=0, total_tokens=0)
            return output

        return get_model("mockllm/model", custom_outputs=answer, memoize=False)

    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "bench"
        if realistic:
            write_realistic_benchmark(root)
        else:
            write_raw_benchmark(root, recipes=False)
        roles = {r: role_model(r) for r in ROLES}
        log = inspect_eval(e2e(root=str(root), traits=traits, sandbox="local"),
                           model=roles["planner"], model_roles=roles, solver=genoagent(),
                           log_dir=str(Path(scratch) / "logs"), display="none")[0]  # fmt: skip
        sizes: dict[str, list[int]] = defaultdict(list)
        prefixes: dict[str, list[int]] = defaultdict(list)
        per_workflow: dict[str, int] = defaultdict(int)
        per_trait: dict[str, list[int]] = defaultdict(list)
        problems = {str(s.id): len(s.metadata["problems"]) for s in log.samples}
        for sample in log.samples:
            sample = resolve_sample_attachments(sample)
            spans = {e.id: e.name for e in sample.events if isinstance(e, SpanBeginEvent)}
            for event in sample.events:
                if isinstance(event, ModelEvent):
                    sent = sum(len(str(m.content)) for m in event.input)
                    sizes[str(event.role)].append(sent)
                    prefixes[str(event.role)].append(len(str(event.input[0].content)))
                    per_trait[str(sample.id)].append(sent)
                    per_workflow[spans.get(event.span_id or "", "?").split(" · ")[0]] += 1
    bench = "the realistic demo" if realistic else "the demo"
    print(f"e2e over {traits} ({bench}), the scripted correct team, library=paper:")
    print(f"{'role':<15}{'calls':>7}{'median chars':>14}{'max chars':>11}")
    for role, found in sorted(sizes.items()):
        print(f"{role:<15}{len(found):>7}{statistics.median(found):>14,.0f}{max(found):>11,}")
    kinds: dict[str, list[int]] = defaultdict(list)
    for workflow, calls in per_workflow.items():
        kind = (
            "GEO cohort"
            if "/GSE" in workflow
            else "TCGA workflow"
            if "/TCGA" in workflow
            else "problem"
        )
        kinds[kind].append(calls)
    for kind, counts in sorted(kinds.items()):
        print(f"calls per {kind}: median {statistics.median(counts):g} (of {len(counts)})")
    print(f"{'trait':<15}{'calls':>7}{'chars sent':>14}{'~tokens':>11}{'~tokens/problem':>17}")
    for trait, sent in sorted(per_trait.items()):
        per_problem = sum(sent) / 4 / max(1, problems.get(trait, 1))
        print(f"{trait:<15}{len(sent):>7}{sum(sent):>14,}{sum(sent) // 4:>11,}"
              f"{per_problem:>17,.0f}")  # fmt: skip
    total = sum(sum(v) for v in sizes.values())
    fixed = sum(sum(v) for v in prefixes.values())
    print(
        f"the system prompts (each role's fixed prefix): {100 * fixed / total:.1f}% of the "
        f"{total:,} characters sent"
    )
    for role in sorted(sizes):
        share = 100 * sum(prefixes[role]) / max(1, sum(sizes[role]))
        print(f"  {role:<15}{share:>6.1f}% (prefix {statistics.median(prefixes[role]):,.0f} chars)")
    asked = max(1, sum(problems.values()))
    print(f"~input tokens per problem over all traits: {total / 4 / asked:,.0f}")


if __name__ == "__main__":
    main()
