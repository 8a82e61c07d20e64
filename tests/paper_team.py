"""A GenoAgent team's code written against the paper library (`genotex.agentlib`), step by
step, as a capable model writes it after reading the printed characteristics: the correct
team, and teams that each make one classic mistake.

The code decides from what the steps print (the rows' keys), as a model would; each mistake
is one edit of one step. Used by tests/test_paper_library.py (run in a namespace holding the
library) and tests/test_genoagent.py (sent by scripted models through the whole harness).
"""

from __future__ import annotations

import json
from pathlib import Path

import genotex.agentlib as lib

#: The end of a dataset analysis, once the rows and converters are chosen: the trait is
#: available when its row gives two values, and the clinical table is made and previewed.
CLINICAL_FROM_ROWS = """\
is_gene_available = True
is_trait_available = (trait_row is not None
                      and len({convert_trait(v) for v in rows[trait_row]} - {None}) > 1)
if is_trait_available:
    clinical_features = geo_select_clinical_features(
        clinical, TRAIT, trait_row, convert_trait, age_row=age_row, convert_age=convert_age,
        gender_row=gender_row, convert_gender=convert_gender)
    print(preview(clinical_features.T))
print('STEP DONE')"""

GEO = {
    "initial_inspection": """\
soft_file, matrix_file = geo_get_relevant_filepaths(COHORT_DIR)
background, clinical = get_background_and_clinical_data(matrix_file)
rows = get_unique_values_by_row(clinical)
print(background)
print(rows)
print('STEP DONE')""",
    "dataset_analysis": """\
def row_of(key):
    return next((i for i, values in rows.items()
                 if values and values[0].split(':')[0].strip().lower() == key), None)

def after_colon(text):
    return text.split(':', 1)[1].strip().lower()

def convert_trait(text):
    return {'case': 1, 'control': 0}.get(after_colon(text))

def convert_age(text):
    try:
        return float(after_colon(text))
    except ValueError:
        return None

def convert_gender(text):
    return {'female': 0, 'male': 1}.get(after_colon(text))

trait_row, age_row, gender_row = row_of('disease state'), row_of('age'), row_of('gender')
"""
    + CLINICAL_FROM_ROWS,
    "gene_extraction": """\
genetic_data = get_genetic_data(matrix_file)
print(genetic_data.shape, list(genetic_data.index[:10]))
print('STEP DONE')""",
    "identifier_review": """\
requires_gene_mapping = True
annotation = get_gene_annotation(soft_file)
print(preview(annotation))
print('STEP DONE')""",
    "gene_mapping": """\
mapping = get_gene_mapping(annotation, 'ID', 'Gene Symbol')
gene_data = apply_gene_mapping(genetic_data, mapping)
print(gene_data.shape)
print('STEP DONE')""",
    "linking_and_qc": """\
gene_data = normalize_gene_symbols_in_index(gene_data, SYNONYMS_FILE)
if is_trait_available:
    linked = geo_link_clinical_genetic_data(clinical_features, gene_data)
    linked = handle_missing_values(linked, TRAIT)
    trait_biased, linked = judge_and_remove_biased_features(linked, TRAIT)
    usable = validate_and_save_cohort_info(
        OUT_DIR, TRAIT, COHORT, is_gene_available=True, is_trait_available=True,
        is_biased=trait_biased, linked_data=linked, gene_data=gene_data,
        clinical_data=clinical_features)
else:
    usable = validate_and_save_cohort_info(
        OUT_DIR, TRAIT, COHORT, is_gene_available=True, is_trait_available=False,
        gene_data=gene_data, note='the trait is constant in this cohort')
print(usable)
print('STEP DONE')""",
}


def _if_chosen(code: str) -> str:
    """A TCGA step that does nothing when no folder is the trait's (COHORT_DIR None)."""
    body = "\n".join("    " + line for line in code.splitlines())
    return f"if COHORT_DIR is not None:\n{body}\nprint('STEP DONE')"


TCGA = {
    "cohort_selection": """\
chosen = [d for d in XENA_DIRS if TRAIT.lower() in d.lower()]
COHORT_DIR = chosen[0] if chosen else None
print(COHORT_DIR)
print('STEP DONE')""",
    "clinical_features": _if_chosen("""\
clinical, genetic = tcga_read_cohort(COHORT_DIR)
print(tcga_find_candidate_columns(clinical, ['age', 'gender']))"""),
    "demographics": _if_chosen("""\
clinical_features = tcga_select_clinical_features(
    clinical, TRAIT, age_col='age_at_initial_pathologic_diagnosis', gender_col='gender')
print(preview(clinical_features.T))"""),
    "linking": _if_chosen("""\
gene_data = normalize_gene_symbols_in_index(genetic, SYNONYMS_FILE)
linked = handle_missing_values(geo_link_clinical_genetic_data(clinical_features, gene_data), TRAIT)
trait_biased, linked = judge_and_remove_biased_features(linked, TRAIT)
print(validate_and_save_cohort_info(
    OUT_DIR, TRAIT, COHORT, is_gene_available=True, is_trait_available=True,
    is_biased=trait_biased, linked_data=linked, gene_data=gene_data,
    clinical_data=clinical_features))"""),
}

_FIT = """\
known = get_known_genes(TASK_INFO_FILE, TRAIT)
model = LMM if MODEL != 'lasso' and detect_batch_effect(X) else Lasso
grid = [10.0 ** k for k in range(-6, 1)]
config, performance = tune_hyperparameters(model, grid, X, Y, genes, known, Z)
fitted = ResidualizationRegressor(model, config)
fitted.fit(normalize_data(X)[0], Y, None if Z is None else normalize_data(Z)[0])
print(save_result(OUT_DIR, TRAIT, CONDITION, interpret_result(fitted, genes), performance))
"""


def _indented(code: str) -> str:
    return "\n".join("    " + line for line in code.splitlines())


_ONE_STEP = (
    """\
loaded = select_and_load_cohort(DATA_DIR, TRAIT, CONDITION, TASK_INFO_FILE)
if loaded is None:
    print('no usable cohort: no answer')
else:
    table = loaded.trait_data
    genes = [c for c in table.columns if c not in (TRAIT, 'Age', 'Gender')]
    X, Y = table[genes], table[TRAIT]
    Z = table[CONDITION] if CONDITION else None
"""
    + _indented(_FIT)
    + "\nprint('STEP DONE')"
)
_TWO_STEP = (
    """\
loaded = select_and_load_cohort(DATA_DIR, TRAIT, CONDITION, TASK_INFO_FILE)
if loaded is None:
    print('no usable cohort pair: no answer')
else:
    table, other = loaded.trait_data, loaded.condition_data
    regressors = get_gene_regressors(TRAIT, CONDITION, table, other, TASK_INFO_FILE)
    condition_y = other[CONDITION].to_numpy()
    wide = len(regressors) > len(other)
    if len(np.unique(condition_y)) == 2:
        first = (LogisticRegression(l1_ratio=1.0, solver='liblinear', random_state=42)
                 if wide else LogisticRegression())
    else:
        first = Lasso(alpha=1.0) if wide else LinearRegression()
    first.fit(normalize_data(other[regressors])[0], condition_y)
    in_trait = normalize_data(table[regressors])[0]
    Z = (first.predict_proba(in_trait)[:, 1] if len(np.unique(condition_y)) == 2
         else first.predict(in_trait))
    genes = [c for c in table.columns if c not in (TRAIT, CONDITION, 'Age', 'Gender')]
    X, Y = table[genes], table[TRAIT]
"""
    + _indented(_FIT)
    + "\nprint('STEP DONE')"
)

STATISTICS = {"unconditional": _ONE_STEP, "conditional_one_step": _ONE_STEP,
              "two_step": _TWO_STEP}  # fmt: skip

#: The correct team: every step's code.
CORRECT = {**GEO, **TCGA, **STATISTICS}

#: One classic mistake each: (step, what the correct code says, what the team writes instead).
MISTAKES = {
    # the trait read from the age row: every "age: NN" converts to nothing known
    "trait from the wrong row": ("dataset_analysis", "row_of('disease state'), row_of('age')",
                                 "row_of('gender'), row_of('age')"),
    "gender inverted": ("dataset_analysis", "{'female': 0, 'male': 1}", "{'female': 1, 'male': 0}"),
    "age from the wrong row": ("dataset_analysis", "row_of('age'), row_of('gender')",
                               "row_of('gender'), row_of('gender')"),
    "probes left unmapped": ("gene_mapping", "apply_gene_mapping(genetic_data, mapping)",
                             "genetic_data"),
    "an LMM problem fitted as a Lasso": ("unconditional", "LMM if MODEL != 'lasso' and "
                                         "detect_batch_effect(X) else Lasso", "Lasso"),
}  # fmt: skip


def mistaken(correct: dict[str, str], edit: tuple[str, str, str]) -> dict[str, str]:
    """`correct` with one edit (step, what the correct code says, what is written instead)
    made; the edit must apply (a test of it).
    """
    step, right, wrong = edit
    code = dict(correct)
    assert right in code[step], (step, right)
    code[step] = code[step].replace(right, wrong)
    return code


def with_mistake(name: str) -> dict[str, str]:
    """The correct team's code with one mistake made."""
    return mistaken(CORRECT, MISTAKES[name])


# ---- running a team's code as the kernel runs it ------------------------------------------
def kernel_namespace(names: dict) -> dict:
    """What the kernel's preamble makes: the library's names, the usual modules, the names."""
    namespace: dict = {}
    exec(lib.kernel_preamble(), namespace)  # noqa: S102 - the preamble GenoAgent's kernel runs
    namespace.update(names)
    return namespace


def run_workflow(code: dict[str, str], steps: dict[str, str], names: dict) -> list[str]:
    """Each step run in turn as the kernel runs it: a step that raises is reported and the
    workflow goes on (the team's next step sees the state it left). The failed steps.
    """
    namespace, failed = kernel_namespace(names), []
    for step in steps:
        try:
            exec(compile(code[step], f"<{step}>", "exec"), namespace)  # noqa: S102
        except Exception as exc:  # noqa: BLE001 - what the kernel prints as the step's error
            failed.append(f"{step}: {type(exc).__name__}: {exc}")
    return failed


def run_team(code: dict[str, str], root: Path, out: Path) -> Path:
    """Every workflow of an e2e run of the team over the benchmark at `root`; its output/."""
    common = {"OUT_DIR": str(out / "preprocess"),
              "SYNONYMS_FILE": str(root / "metadata/gene_synonym.json")}  # fmt: skip
    info = json.loads((root / "metadata/task_info.json").read_text())
    for trait in sorted(info):
        for cohort in sorted((root / "input/GEO" / trait).glob("*")):
            names = {**common, "TRAIT": trait, "COHORT": cohort.name, "COHORT_DIR": str(cohort)}
            run_workflow(code, GEO, names)
        xena = sorted(str(p) for p in (root / "input/TCGA").glob("*"))
        run_workflow(code, TCGA, {**common, "TRAIT": trait, "COHORT": "Xena", "XENA_DIRS": xena})
    for trait, entry in sorted(info.items()):
        for condition in [None, *entry.get("conditions", [])]:
            kind = ("unconditional" if condition is None else "conditional_one_step"
                    if condition in ("Age", "Gender") else "two_step")  # fmt: skip
            names = {"TRAIT": trait, "CONDITION": condition, "DATA_DIR": common["OUT_DIR"],
                     "TASK_INFO_FILE": str(root / "metadata/task_info.json"),
                     "OUT_DIR": str(out / "regress"), "MODEL": "auto"}  # fmt: skip
            run_workflow(code, {kind: STATISTICS[kind]}, names)
    return out
