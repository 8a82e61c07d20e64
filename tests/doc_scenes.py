"""The servers the docs' commands reach, on 127.0.0.1, and nothing else (issue #62, item 7).

A page's commands run in order in one fresh, empty folder, as a reader runs them: every
file a command uses is made by an earlier command of the same page. What the folder
cannot hold is the network, so each page names the stand-ins it reaches:

- `hub`: the Hugging Face Hub holding a generated benchmark in the published layout
  (`tests/fake_hub.py`), for `genotex download benchmark`;
- `hub-real`: the Hub holding the real cohorts' task list and preprocessed data
  (Liver_Cancer and Bile_Duct_Cancer: `../shared`'s regression fixture);
- `openai`: OpenAI's API (`tests/fake_openai.py`), the only model API a command may reach;
- `mirror`: GEO's, Xena's and NCBI's servers, holding the demo's inputs (with their
  manifests, given by `--manifest`) and a gene_info of NCBI's format;
- `mirror-real`: the same servers holding real public files (`../shared/data/real`: a GEO
  series and its platform, the Xena cohorts, gene_info), downloaded with the manifests
  genotex ships;
- a Dask scheduler (`tcp://host:8786`), always.

A stand-in's files live in a folder of their own, never in the reader's. `HOME` is the
page's own, and no model key but the loopback one is in the environment.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from tests.conftest import SHARED, _require, answer_bytes, local_server
from tests.fake_hub import FakeHub, published_files
from tests.fake_openai import fake_openai

BIN = Path(sys.executable).parent
#: what a page's commands see of this machine's environment (no model keys, no HF_*)
_KEPT = ("LANG", "LC_ALL", "TMPDIR", "CONTAINERS_CONF", "GENOTEX_BWRAP", "GENOTEX_PODMAN")
#: the stand-ins whose files come from ../shared: the real public files a guide works on,
#: which only their servers (and ../shared) hold (skipped with the reason without it; CI:
#: failed)
FROM_SHARED = {"mirror-real", "hub-real"}


@dataclass
class Stage:
    """Where a page's commands run (`cwd`, the reader's folder), with what environment,
    which placeholders are replaced and which options are added to a command's prefix."""

    cwd: Path
    env: dict[str, str]
    replace: dict[str, str] = field(default_factory=dict)
    append: dict[str, str] = field(default_factory=dict)


def run(command: str, cwd: Path, env: dict[str, str], timeout: float = 900):
    """Run one shell command in `cwd`, as a reader's shell would."""
    return subprocess.run(command, shell=True, cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=timeout, executable="/bin/bash")  # fmt: skip


def _env(home: Path) -> dict[str, str]:
    env = {k: os.environ[k] for k in _KEPT if k in os.environ}
    env.update(PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
               HOME=str(home), GENOTEX_CACHE=str(home / "genotex-cache"),
               HF_HUB_DISABLE_TELEMETRY="1", INSPECT_DISABLE_MODEL_API="1")  # fmt: skip
    return env


def _demo(folder: Path, *options: str) -> Path:
    done = subprocess.run([sys.executable, "-m", "genotex", "demo", *options, "--out", str(folder)],
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return folder


class _Mirror(BaseHTTPRequestHandler):
    """GEO's, Xena's and NCBI's servers, as far as a download asks: each file by its path
    below the server (`geo/series/GSE14nnn/GSE14520/matrix/<file>`,
    `download/TCGA.CHOL.sampleMap/<file>`, `gene/.../Homo_sapiens.gene_info.gz`)."""

    files: dict[str, bytes] = {}

    def do_GET(self) -> None:  # noqa: N802 - the HTTP verb
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        key = f"acc:{query['acc'][0]}" if "acc" in query else parts.path.lstrip("/")
        answer_bytes(self, self.files.get(key))

    def log_message(self, *args: object) -> None:
        pass


def _serve_demo_inputs(servers: Path, stage: Stage, url: str) -> None:
    """The demo's inputs, as GEO and Xena lay them out, and manifests of them (beside the
    server, never in the reader's folder), given to `download geo` and `download tcga`."""
    from genotex.preprocessing._manifests import _geo_folder

    demo = _demo(servers / "mirror-demo", "--inputs-only")
    manifests: dict[str, dict[str, str]] = {"GEO": {}, "TCGA": {}}
    for path in sorted((demo / "input").rglob("*")):
        if not path.is_file():
            continue
        part, relative = path.relative_to(demo / "input").as_posix().split("/", 1)
        manifests[part][relative] = hashlib.sha256(path.read_bytes()).hexdigest()
        if part == "GEO":
            _, accession, name = relative.split("/")
            kind = "soft" if name.endswith("_family.soft.gz") else "matrix"
            key = f"geo/series/{_geo_folder(accession)}/{accession}/{kind}/{name}"
        else:
            folder, name = relative.split("/")
            code = folder.rsplit("(", 1)[-1].rstrip(")")
            key = f"download/TCGA.{code}.sampleMap/{name.split('_', 1)[-1]}"
        _Mirror.files[key] = path.read_bytes()
    for part, files in manifests.items():
        (servers / f"{part}.json").write_text(json.dumps({"files": files}))
    stage.append.update({
        "genotex download geo": f"--base-url {url}/geo/series --manifest {servers}/GEO.json",
        "genotex download tcga": f"--base-url {url}/download --manifest {servers}/TCGA.json",
    })  # fmt: skip


def _serve_real(stage: Stage, url: str) -> None:
    """Real public files where NCBI and Xena keep them: GSE14520's GPL571 matrix, the GPL96
    platform (as NCBI's accession viewer gives it), and every Xena file of ../shared."""
    real = SHARED / "data" / "real"
    matrix = "GSE14520-GPL571_series_matrix.txt.gz"
    series = real / "geo" / "GSE14520" / matrix
    _Mirror.files[f"geo/series/GSE14nnn/GSE14520/matrix/{matrix}"] = series.read_bytes()
    platform = gzip.decompress((real / "geo/platforms/GPL96.txt.gz").read_bytes())
    _Mirror.files["acc:GPL96"] = platform
    for path in sorted((real / "tcga").rglob("*")):
        if path.is_file():
            prefix, _, name = path.name.partition("_")  # TCGA.CHOL.sampleMap_<file>
            _Mirror.files[f"download/{prefix}/{name}"] = path.read_bytes()
    stage.append.update({
        "genotex download geo": f"--base-url {url}/geo/series",
        "genotex download tcga": f"--base-url {url}/download",
    })  # fmt: skip


#: a gene_info of two genes in NCBI's format, for the demo's mirror (which needs no ../shared)
_SMALL_GENE_INFO = (
    "#tax_id\tGeneID\tSymbol\tLocusTag\tSynonyms\tdbXrefs\tchromosome\tmap_location\t"
    "description\ttype_of_gene\tSymbol_from_nomenclature_authority\t"
    "Full_name_from_nomenclature_authority\tNomenclature_status\tOther_designations\t"
    "Modification_date\tFeature_type\n"
    "9606\t7157\tTP53\t-\tBCC7|LFS1|P53\t-\t17\t17p13.1\ttumor protein p53\t"
    "protein-coding\tTP53\ttumor protein p53\tO\t-\t20221110\t-\n"
)


def _mirror(servers: Path, stage: Stage, stack: contextlib.ExitStack, real: bool) -> None:
    _Mirror.files = {}
    url = stack.enter_context(local_server(_Mirror))
    name = "Homo_sapiens.gene_info.gz"
    gene_info = SHARED / "data" / "real" / "ncbi" / name
    served = gene_info.read_bytes() if real else gzip.compress(_SMALL_GENE_INFO.encode(), mtime=0)
    _Mirror.files[f"gene/{name}"] = served
    stage.append["genotex download gene-info"] = f"--base-url {url}/gene/{name}"
    if real:
        _serve_real(stage, url)
    else:
        _serve_demo_inputs(servers, stage, url)
    stage.append = {k: f"{v} --no-progress" for k, v in stage.append.items()}


def _hub(servers: Path, stage: Stage, stack: contextlib.ExitStack) -> None:
    """A Hub holding `genotex demo`'s benchmark in the published layout."""
    demo = _demo(servers / "hub-demo")
    files = published_files(demo)
    hub = FakeHub(files, lfs={p for p in files if p.endswith(".gz")})
    stage.env.update(HF_ENDPOINT=stack.enter_context(hub))


def _hub_real(stage: Stage, stack: contextlib.ExitStack) -> None:
    """A Hub holding the real cohorts' task list and their preprocessed data (as the
    benchmark's `output/preprocess/` holds the reference's)."""
    fixture = SHARED / "fixtures" / "regress" / "real"
    files = {
        path.relative_to(fixture).as_posix(): path.read_bytes()
        for path in sorted(fixture.rglob("*"))
        if path.is_file() and path.relative_to(fixture).parts[0] in ("metadata", "output")
    }
    hub = FakeHub(files)
    stage.env.update(HF_ENDPOINT=stack.enter_context(hub))


def _openai(stage: Stage, stack: contextlib.ExitStack) -> None:
    stage.env.update(stack.enter_context(fake_openai()))
    del stage.env["INSPECT_DISABLE_MODEL_API"]


@contextlib.contextmanager
def stage(names: set[str], tmp: Path, scheduler: str) -> Iterator[Stage]:
    """An empty reader's folder in `tmp`, and the stand-ins `names` on loopback."""
    if names & FROM_SHARED:
        _require(SHARED / "data" / "real")
    reader, servers, home = tmp / "reader", tmp / "servers", tmp / "home"
    for folder in (reader, servers, home):
        folder.mkdir(parents=True)
    here = Stage(reader, _env(home), {"tcp://host:8786": scheduler})
    here.replace["/scratch/cache"] = str(tmp / "scratch-cache")
    with contextlib.ExitStack() as stack:
        if "hub" in names:
            _hub(servers, here, stack)
        if "hub-real" in names:
            _hub_real(here, stack)
        if "openai" in names:
            _openai(here, stack)
        if names & {"mirror", "mirror-real"}:
            _mirror(servers, here, stack, real="mirror-real" in names)
        yield here
