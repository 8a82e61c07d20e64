"""The words a recipe proposer reads characteristics with: general clinical vocabulary only.

Nothing here names a benchmark trait: the trait's own terms come from its
name (`trait_terms`), the series' background text and a glossary of common
disease abbreviations (`data/abbreviations.tsv`, general medical usage), so
the proposer works the same on traits it has never seen.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass, field
from importlib import resources

__all__ = [
    "CONTROL",
    "DISEASE_KEY",
    "EXPERIMENT_KEY",
    "GENERIC_WORDS",
    "MEASUREMENT_KEY",
    "MISSING",
    "NEGATIVE_POLE",
    "NO",
    "NOT_EXPRESSION",
    "NOT_HUMAN",
    "SKIP_KEY",
    "STRONG_NEGATIVE_POLE",
    "TISSUE_KEY",
    "YES",
    "TraitTerms",
    "normalize_text",
    "trait_terms",
]

#: A sample of no disease: healthy donors, normal, adjacent or non-lesional (NL) tissue,
#: untreated or mock cells, a standard-of-care arm, a gene's wild type (WT, IRF4WT) and a
#: normal karyotype (euploid, disomic: the control of a trisomy). `_` counts as a word
#: boundary (`healthy_control`).
CONTROL = re.compile(
    r"(?<![a-z0-9])(controls?|ctrl|healthy|normal|non[- ]?(?:tumou?r|cancer|malignant|diseased?"
    r"|affected|lesional)|adjacent|unaffected|uninvolved|wild[- ]?type|wt|vehicle|untreated|mock|"
    r"sham|placebo|negative|neg|none|no disease|disease[- ]free|benign|hc|nc|nl|dmso|scrambled?|"
    r"empty vector|non[- ]?targeting|sh ?ctrl|si ?ctrl|baseline|(?:living )?donors?|"
    r"standard of care|euploid|disomic)(?![a-z0-9])|(?<=[0-9])wt(?![a-z0-9])",
    re.IGNORECASE,
)
#: Keys of a row that states the disease or the group of each sample.
DISEASE_KEY = re.compile(
    r"disease|diagnos|status|state|condition|phenotype|group|class|category|case|cohort|"
    r"patholog|histolog|lesion|subtype|type of|affected|clinical|severity|stage|grade|"
    r"cancer|tumou?r|illness|syndrome|disorder|infection|response|outcome|arm\b",
    re.IGNORECASE,
)
#: Keys of an experiment's factors: a disease model in cells shows up here.
EXPERIMENT_KEY = re.compile(
    r"treat|agent|genotype|variation|transfect|transduc|knock|sh ?rna|si ?rna|lentivir|"
    r"infect|stimul|exposure|challenge|intervention|drug|compound|cell line|strain",
    re.IGNORECASE,
)
#: Keys of where the sample comes from (a tumour/normal split is often only here).
TISSUE_KEY = re.compile(r"tissue|cell type|source|organ|sample type|biopsy|origin|site", re.I)
#: Keys that never hold the trait: identifiers, batches, dates, technical measurements.
SKIP_KEY = re.compile(
    r"\bid\b|_id\b|identifier|barcode|batch|date|\btime|replicate|\brep\b|individual|"
    r"^(?:subject|patient|donor|sample|case)s?\s*(?:id|number|no\.?|#|code|name)?$|array|chip|lane|"
    r"plate|slide|well|rin\b|rna |concentration|dose|passage|run\b|scan|position|density|"
    r"fov|\bbmi\b|weight|ethnic|race|smok|center|centre|site id|study\b",
    re.IGNORECASE,
)
#: Keys of a measurement of the sample ("tumor size (cm)"), never its group, even when they
#: name a disease word.
MEASUREMENT_KEY = re.compile(r"\b(size|volume|diameter|length|width)\b", re.IGNORECASE)
#: Cell texts that say "not known" (the value is missing).
MISSING = re.compile(
    r"^\s*(|na|n/a|n\.a\.?|nan|none|null|unknown|not (?:available|known|determined|applicable|"
    r"measured|assessed|reported)|--?|\?|nd|n\.d\.|missing|unspecified|not specified)\s*$",
    re.IGNORECASE,
)
#: The negative side of a two-valued row that names no disease: words that decide a pair alone
#: ("relapse-free", "remission" against "early failure"; STRONG_NEGATIVE_POLE) and milder ones
#: ("mild", "early", "pre"; NEGATIVE_POLE holds both): the 0 of the pair.
_STRONG_NEGATIVE = "non|not|no|without|free|negative|neg|remission|absent"
_MILD_NEGATIVE = "mild|less|low|early|first|euploid|normal|baseline|pre|before|sporadic|unstable"
_SIGN_NEGATIVE = r"|-\)?\s*$|\(-\)"  # NS-, (-)
STRONG_NEGATIVE_POLE = re.compile(
    rf"(?<![a-z0-9])({_STRONG_NEGATIVE})(?![a-z0-9]){_SIGN_NEGATIVE}", re.IGNORECASE
)
NEGATIVE_POLE = re.compile(
    rf"(?<![a-z0-9])({_STRONG_NEGATIVE}|{_MILD_NEGATIVE})(?![a-z0-9]){_SIGN_NEGATIVE}",
    re.IGNORECASE,
)
YES = re.compile(r"^\s*(y|yes|true|positive|pos|\+|1|present|affected)\s*$", re.IGNORECASE)
NO = re.compile(r"^\s*(n|no|false|negative|neg|-|0|absent|unaffected)\s*$", re.IGNORECASE)
#: Words of a trait name that say little on their own ("cancer" matches any tumour).
GENERIC_WORDS = frozenset(
    "disease diseases disorder disorders syndrome syndromes cancer cancers tumor tumour "
    "carcinoma cell cells type and of the with chronic acute primary".split()
)
#: Organ nouns and the adjectives and Greek/Latin stems texts use for them instead.
_ORGAN_STEMS = {
    "liver": ("hepat",),
    "kidney": ("renal", "nephr"),
    "lung": ("pulmonar",),
    "heart": ("cardi",),
    "brain": ("cerebr",),
    "skin": ("derm", "cutaneous"),
    "stomach": ("gastr",),
    "bowel": ("intestin", "colon", "colorectal"),
    "bone": ("osteo",),
    "blood": ("hemat",),
    "breast": ("mammar",),
    "cancer": ("carcinoma", "adenocarcinoma", "tumor", "neoplas", "malignan"),
}
#: Background phrases of a series that measures something other than mRNA.
NOT_EXPRESSION = re.compile(
    r"\b(micro ?rnas?|mirnas?|mirnome|small (?:non-?coding )?rnas?|sncrnas?|dna methylation|"
    r"methylomes?|"
    r"bisulfite|chromatin accessibility|atac-?seq|chip-?seq|super[- ]enhancers?|"
    r"snp array|genotyping array|copy number|array cgh|exome|16s rrna|proteom\w*|"
    r"metabolom\w*)\b",
    re.IGNORECASE,
)
#: Cues of a non-human series: strains, mouse embryonic fibroblasts, model organisms.
NOT_HUMAN = re.compile(
    r"\b(c57bl/?6\w*|balb/c|mice|mouse|murine|rats?|zebrafish|drosophila|mef|"
    r"yeast|arabidopsis|porcine|bovine|canine|macaque)\b",
    re.IGNORECASE,
)
_ABBREVIATION = re.compile(r"\(([A-Za-z][A-Za-z0-9-]{1,7})\)")


def normalize_text(text: str) -> str:
    """Lower case without accents, `_` and `-` as spaces, British spellings folded (Sjögren:
    sjogren; leukaemia, oesophageal).
    """
    if not text.isascii():
        text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = text.lower().replace("_", " ").replace("-", " ")
    return re.sub(r"(?<=[a-z])ae|(?<=\b)oe|(?<=[a-z])oe", "e", text).replace("tumour", "tumor")


def _stem(word: str) -> str:
    """A prefix that also matches the word's adjective and plural (diabetes: diabetic;
    resistance: resistant).
    """
    if len(word) <= 5:
        return word
    for suffix in ("ance", "ence", "ies", "es", "is", "ia", "y", "s", "eal", "al", "ic"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 5:
            return word[: -len(suffix)]
    return word


def _named(text: str, word: str) -> bool:
    """Whether the text holds a trait word, as itself, its stem or its organ adjective."""
    return _stem(word) in text or any(stem in text for stem in _ORGAN_STEMS.get(word, ()))


def _compound_parts(word: str) -> list[str]:
    """A compound joined by its first linking "o" (between consonants) written as two words:
    "adrenocortical" as "adren cortic" (adrenal cortical), "hepatocellular" as "hepat
    cellular".
    """
    vowels = "aeiouy"
    joints = [
        i
        for i in range(4, len(word) - 5)
        if word[i] == "o" and word[i - 1] not in vowels and word[i + 1] not in vowels
    ]
    return (
        [f"{word[: joints[0]]} {_stem(word[joints[0] + 1 :])}"]
        if len(word) >= 10 and joints
        else []
    )


def _long_form(abbreviation: str, before: list[str]) -> list[str]:
    """The words an abbreviation in parentheses stands for: the fewest words before it whose
    first word starts with its first letter and which hold its letters in order (the rule of
    Schwartz & Hearst, 2003); empty when none does.
    """
    letters = [ch for ch in abbreviation if ch.isalnum()]
    for k in range(1, min(len(before), len(letters) + 5) + 1):
        words = before[-k:]
        if not letters or not words[0].startswith(letters[0]):
            continue
        text, position = " ".join(words), 0
        for letter in letters:
            position = text.find(letter, position) + 1
            if position == 0:
                break
        else:
            return words
    return []


def _defines_trait(long_form: list[str], parts: list[list[str]], name_words: list[str]) -> bool:
    """Whether an abbreviation's long form is the trait: it names every specific word of the
    name (or of one side of an "X and Y" name) and ends on a word of the name, its head noun.
    "Primary Sjogren's syndrome (pSS)" and "diffuse large B-cell lymphoma (DLBCL)" are; "cystic
    fibrosis transmembrane conductance regulator (CFTR)" and "chronic liver disease (CLD)" for
    liver cirrhosis are not.
    """
    if not long_form:
        return False
    text = " ".join(long_form)
    names_a_part = any(part and all(_named(text, w) for w in part) for part in parts)
    head = long_form[-1]
    return names_a_part and any(_named(head, w) for w in name_words if len(w) >= 3)


@dataclass(frozen=True)
class TraitTerms:
    """How a trait shows up in text: whole phrase, abbreviations, specific and generic words."""

    phrase: str
    abbreviations: tuple[str, ...]
    specific: tuple[str, ...]
    generic: tuple[str, ...]
    # (strength, term, compiled pattern), in the order they are tried; and the answers so far:
    # a proposal asks about the same cells many times (rule score, features, value map)
    _patterns: tuple[tuple[int, str, re.Pattern[str]], ...] = field(
        init=False, repr=False, compare=False
    )
    _memo: dict[str, tuple[int, str]] = field(
        init=False, repr=False, compare=False, default_factory=dict
    )

    def __post_init__(self) -> None:
        patterns = [(3, a, rf"(?<![a-z0-9]){re.escape(a)}(?![a-z0-9])") for a in self.abbreviations]
        # a specific term of two parts ("adren cortic") matches the parts as words in a row
        patterns += [
            (2, w, r"(?<![a-z])" + r"[a-z]*\s+".join(map(re.escape, w.split())))
            for w in self.specific
        ]
        patterns += [(1, w, rf"(?<![a-z]){re.escape(w)}") for w in self.generic]
        compiled = tuple((h, term, re.compile(pattern)) for h, term, pattern in patterns)
        object.__setattr__(self, "_patterns", compiled)

    def coverage(self, text: str) -> int:
        """How many of the trait's words a text names: "papillary renal carcinoma" 3, "renal
        carcinoma" 2, "renal adenoma" 1 (the value naming more of them is the trait).
        """
        norm = normalize_text(text)
        return sum(1 for hit, _, pattern in self._patterns if hit <= 2 and pattern.search(norm))

    def strength(self, text: str) -> tuple[int, str]:
        """3 phrase or abbreviation, 2 a specific word, 1 a generic word, 0 none; and the match."""
        known = self._memo.get(text)
        if known is not None:
            return known
        norm = normalize_text(text)
        answer = (0, "")
        if self.phrase and self.phrase in norm:
            answer = (3, self.phrase)
        else:
            for hit, term, pattern in self._patterns:
                if pattern.search(norm):
                    answer = (hit, term)
                    break
        self._memo[text] = answer
        return answer


def _names_every_word(long_form: list[str], sides: list[list[str]]) -> bool:
    """Whether a glossary long form names every word of the trait's name (or of one side of
    an "X and Y" name), generic words and numbers included: "hepatocellular carcinoma" is
    Liver_Cancer, "chronic myeloid leukemia" is not Acute_Myeloid_Leukemia, nor "type 1
    diabetes" Type_2_Diabetes. Stricter than a definition in the background, which the series
    itself vouches for.
    """
    text = " ".join(long_form)
    return any(
        side
        and all(
            (w in long_form) if w.isdigit() or len(w) <= 2 else _named(text, w)
            for w in side
            if w not in {"of", "the"}
        )
        for side in sides
    )


@functools.lru_cache(maxsize=1024)
def _glossary_abbreviations(name: str) -> frozenset[str]:
    """The glossary's abbreviations of a trait name (normalized, parentheses removed); the
    answer depends on the name alone, and a benchmark asks about a few names many times.
    """
    return frozenset(a for a, long in _glossary() if _names_every_word(long, _sides(name)))


def _sides(name: str) -> list[list[str]]:
    """The words of each side of an "X and Y" name (one side for most names)."""
    return [re.findall(r"[a-z0-9]+", side) for side in re.split(r"\band\b", name)]


@functools.cache
def _glossary() -> tuple[tuple[str, list[str]], ...]:
    """The glossary's (abbreviation, words of its long form), lower case: the TSV's rows after
    its comment lines and its header.
    """
    text = resources.files("genotex.preprocessing._proposer").joinpath("data", "abbreviations.tsv")
    rows = [line.split("\t", 1) for line in text.read_text("utf-8").splitlines()]
    rows = [row for row in rows if len(row) == 2 and not row[0].startswith("#")][1:]
    return tuple(
        (short.lower(), re.findall(r"[a-z0-9]+", normalize_text(long))) for short, long in rows
    )


def trait_terms(trait: str, background: str = "") -> TraitTerms:
    """Terms of a trait from its name (`Type_2_Diabetes`, `Irritable_bowel_syndrome_(IBS)`).

    Abbreviations come from parentheses in the name, from the initials of its
    words (T2D, AML), from the background text where an abbreviation is
    defined as the trait (`_defines_trait`), and from the glossary of common
    disease abbreviations where the long form names every word of the name
    (`_names_every_word`: "HCC", hepatocellular carcinoma, for Liver_Cancer).
    """
    name = normalize_text(trait)
    abbreviations = {a.lower() for a in _ABBREVIATION.findall(trait.replace("_", " "))}
    name = re.sub(r"\([^)]*\)", " ", name)
    words = [w for w in re.split(r"[^a-z0-9]+", name) if w]
    phrase = " ".join(words)
    if len(words) >= 2:
        abbreviations.add("".join(w[0] if not w.isdigit() else w for w in words))
    specific_words = [w for w in words if w not in GENERIC_WORDS and len(w) >= 3]
    parts = [[w for w in side if w in specific_words] for side in _sides(name)]
    for match in _ABBREVIATION.finditer(background):
        abbreviation = match.group(1).lower()
        before = re.findall(r"[a-z0-9]+", normalize_text(background[: match.start()])[-120:])
        if _defines_trait(_long_form(abbreviation, before), parts, words):
            abbreviations.add(abbreviation)
    abbreviations |= _glossary_abbreviations(name)
    specific = {_stem(w) for w in specific_words} | {
        part for w in specific_words for part in _compound_parts(w)
    }
    generic = {_stem(w) for w in words if w in GENERIC_WORDS and w not in {"and", "of", "the"}}
    for word in words:
        for stem in _ORGAN_STEMS.get(word, ()):
            (generic if word in GENERIC_WORDS else specific).add(stem)
    abbreviations = {a for a in abbreviations if len(a) >= 2 and a != phrase}
    return TraitTerms(
        phrase if len(words) >= 2 else "",
        tuple(sorted(abbreviations)),
        tuple(sorted(specific)),
        tuple(sorted(generic - specific)),
    )
