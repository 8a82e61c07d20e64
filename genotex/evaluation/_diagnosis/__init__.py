"""Where a submission lost its points: error classes with evidence, and stage shares.

The checks of the files (`collect`) and the arithmetic of the stage shares
(`finish`, `stage_shares`) live here; the re-analyses that feed the shares need
the regression stage and are run by `genotex.workflows.diagnose`.
"""

from ._attribution import stage_averages, stage_shares
from ._collect import Collected, collect, finish
from ._figure import error_class_histogram
from ._model import (
    ERROR_CLASSES,
    REFERENCE_CAUSES,
    STAGES,
    Diagnosis,
    DiagnosisError,
    DiagnosisFinding,
    ProblemDiagnosis,
    StageAverage,
    load_diagnosis,
)
from ._views import (
    compare_diagnoses,
    diagnosis_frames,
    render_diagnosis,
    render_diagnosis_comparison,
    write_diagnosis_csv,
)

__all__ = [
    "ERROR_CLASSES",
    "REFERENCE_CAUSES",
    "STAGES",
    "Collected",
    "Diagnosis",
    "DiagnosisError",
    "DiagnosisFinding",
    "ProblemDiagnosis",
    "StageAverage",
    "collect",
    "compare_diagnoses",
    "diagnosis_frames",
    "error_class_histogram",
    "finish",
    "load_diagnosis",
    "render_diagnosis",
    "render_diagnosis_comparison",
    "stage_averages",
    "stage_shares",
    "write_diagnosis_csv",
]
