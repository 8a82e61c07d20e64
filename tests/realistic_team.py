"""A GenoAgent team's code for `genotex demo --realistic`, written as a careful model writes it
after reading each series' printed background and characteristics rows (never from the
generator's truth), and teams that each make one classic mistake there.

What differs from the plain demo's team (tests/paper_team.py) is the reading: each series names
its trait, age and gender in its own words and codes, and one platform has its symbols under
another column. The TCGA and statistics steps are the plain team's.
"""

from __future__ import annotations

from tests.paper_team import CLINICAL_FROM_ROWS, mistaken
from tests.paper_team import CORRECT as PLAIN

DATASET_ANALYSIS = (
    """\
def row_of(key):
    return next((i for i, values in rows.items()
                 if values and values[0].split(':')[0].strip() == key), None)

def after_colon(text):
    return text.split(':', 1)[1].strip()

# what each series' rows say, read from its printout: (trait row's key, its values → 0/1,
# age row's key, gender row's key, its values → 0 female / 1 male)
READ = {
    'GSE200001': ('disease state', {'asthma': 1, 'healthy control': 0}, 'age (yrs)', 'Sex',
                  {'F': 0, 'M': 1}),
    # the key says it: 1 is female here
    'GSE200002': ('subject status', {'asthmatic': 1, 'non-asthmatic': 0}, 'age',
                  'sex (female=1, male=0)', {'1': 0, '0': 1}),
    'GSE200003': ('group', {'obese': 1, 'lean': 0}, 'donor age (y)', 'gender',
                  {'female': 0, 'male': 1}),
    # every donor obese: the trait does not vary
    'GSE200004': ('disease state', {'obesity': 1}, 'age', 'gender', {'female': 0, 'male': 1}),
    # a cell line: no trait, no donors
    'GSE200005': (None, {}, None, None, {}),
    'GSE200006': ('tissue', {'lesional skin': 1, 'normal skin': 0}, 'age', 'gender',
                  {'Female': 0, 'Male': 1}),
}
trait_key, trait_map, age_key, gender_key, gender_map = READ[COHORT]

def convert_trait(text):
    return trait_map.get(after_colon(text))

def convert_age(text):
    try:
        return float(after_colon(text).rstrip('yY'))
    except ValueError:
        return None

def convert_gender(text):
    return gender_map.get(after_colon(text))

trait_row = row_of(trait_key) if trait_key else None
age_row = row_of(age_key) if age_key else None
gender_row = row_of(gender_key) if gender_key else None
"""
    + CLINICAL_FROM_ROWS
)

GENE_MAPPING = """\
symbols = 'GENE_SYMBOL' if 'GENE_SYMBOL' in annotation.columns else 'Gene Symbol'
mapping = get_gene_mapping(annotation, 'ID', symbols)
gene_data = apply_gene_mapping(genetic_data, mapping)
print(gene_data.shape)
print('STEP DONE')"""

#: The careful team: the plain team's steps with this benchmark's reading.
CORRECT = {**PLAIN, "dataset_analysis": DATASET_ANALYSIS, "gene_mapping": GENE_MAPPING}

#: One classic mistake each: (step, what the correct code says, what the team writes instead).
MISTAKES = {
    # the sex code taken as the usual 1 = male, though the key says otherwise
    "sex code read as written": ("dataset_analysis", "{'1': 0, '0': 1}", "{'1': 1, '0': 0}"),
    # the symbols looked for in the usual column, which GSE200002's platform does not have
    "the annotation's other column": ("gene_mapping", "'GENE_SYMBOL' if 'GENE_SYMBOL' in "
                                      "annotation.columns else 'Gene Symbol'", "'Gene Symbol'"),
    # the two-step's first stage skipped: the trait answered as if unconditional
    "the condition ignored": ("two_step", "Z = (first.predict_proba", "_ = (first.predict_proba"),
    # the batch test skipped: the Lasso everywhere
    "an LMM problem fitted as a Lasso": ("two_step", "LMM if MODEL != 'lasso' and "
                                         "detect_batch_effect(X) else Lasso", "Lasso"),
    # the melanoma cohort taken for psoriasis because it is a skin cohort (TCGA has none)
    "the wrong TCGA folder": ("cohort_selection", "TRAIT.lower() in d.lower()",
                              "TRAIT.lower() in d.lower() or (TRAIT == 'Psoriasis' "
                              "and 'skin' in d.lower())"),
}  # fmt: skip


def with_mistake(name: str) -> dict[str, str]:
    """The careful team's code with one mistake made (and what the mistake entails)."""
    step, right, wrong = MISTAKES[name]
    code = mistaken(CORRECT, MISTAKES[name])
    if name == "the condition ignored":  # and no Z given to the fit
        line = "    X, Y = table[genes], table[TRAIT]\n"
        code[step] = code[step].replace(line, line + "    Z = None\n")
    if name == "an LMM problem fitted as a Lasso":  # in every statistics step
        for kind in ("unconditional", "conditional_one_step"):
            code[kind] = code[kind].replace(right, wrong)
    return code
