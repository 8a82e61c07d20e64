"""The folders the docs' commands assume, made as a reader would have them (issue #52, 17).

Each scene makes a fresh folder and answers where the commands run (`cwd`) and with what
environment. Every server a scene needs listens on 127.0.0.1: a Hub holding the demo in the
published layout (`tests/fake_hub.py`), OpenAI's API (`tests/fake_openai.py`), a GEO/Xena
mirror, a Dask scheduler. `HOME` is the scene's own, and no model key but the loopback
one is in the environment.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from tests.conftest import SHARED, _require, local_server
from tests.fake_hub import FakeHub, published_files
from tests.fake_openai import fake_openai

BIN = Path(sys.executable).parent
TESTS = Path(__file__).resolve().parent
#: what a scene's commands see of this machine's environment (no model keys, no HF_*)
_KEPT = ("LANG", "LC_ALL", "TMPDIR", "CONTAINERS_CONF", "GENOTEX_BWRAP", "GENOTEX_PODMAN")


@dataclass
class Scene:
    """Where a block's commands run, with what environment and which placeholders."""

    cwd: Path
    env: dict[str, str]
    replace: dict[str, str] = field(default_factory=dict)
    append: dict[str, str] = field(default_factory=dict)  # command prefix -> extra options


def run(command: str, scene: Scene, timeout: float = 900) -> subprocess.CompletedProcess:
    """Run one shell command in the scene, as a reader's shell would."""
    return subprocess.run(command, shell=True, cwd=scene.cwd, env=scene.env, text=True,
                          capture_output=True, timeout=timeout, executable="/bin/bash")  # fmt: skip


def _env(home: Path) -> dict[str, str]:
    env = {k: os.environ[k] for k in _KEPT if k in os.environ}
    env.update(PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
               HOME=str(home), GENOTEX_CACHE=str(home / "genotex-cache"),
               HF_HUB_DISABLE_TELEMETRY="1", INSPECT_DISABLE_MODEL_API="1")  # fmt: skip
    return env


def _with_openai(base: Scene, stack: contextlib.ExitStack) -> None:
    """The OpenAI stand-in for the scene's commands: the only model API they may reach."""
    base.env.update(stack.enter_context(fake_openai()))
    del base.env["INSPECT_DISABLE_MODEL_API"]


def _must(command: str, scene: Scene) -> None:
    done = run(command, scene)
    assert done.returncode == 0, f"setting up with {command}: {done.stderr[-2000:]}"


def _demo(folder: Path, *options: str) -> Path:
    done = subprocess.run([sys.executable, "-m", "genotex", "demo", *options, "--out", str(folder)],
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return folder


class _Mirror(BaseHTTPRequestHandler):
    """GEO's and Xena's servers, as far as a download asks: each file by its name."""

    files: dict[str, bytes] = {}

    def do_GET(self) -> None:  # noqa: N802 - the HTTP verb
        folder, _, name = self.path.rpartition("/")
        # GEO's files by their names; Xena's `TCGA.X.sampleMap/<file>` as the manifest names it
        data = self.files.get(name, self.files.get(f"{folder.rpartition('/')[2]}_{name}"))
        if data is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def scene(name: str, tmp: Path, scheduler: str) -> Iterator[Scene]:
    """The scene `name` in the fresh folder `tmp` (see `SCENES`)."""
    if name in _FROM_SHARED:  # skipped with the reason when ../shared is absent (CI: failed)
        _require(SHARED / "fixtures")
        _require(SHARED / "data" / "real")
    tmp.mkdir(parents=True, exist_ok=True)
    home = tmp / "home"
    home.mkdir()
    base = Scene(tmp, _env(home), {"tcp://host:8786": scheduler})
    with contextlib.ExitStack() as stack:
        yield SCENES[name](base, stack)


def _empty(base: Scene, stack: contextlib.ExitStack) -> Scene:
    return base


def _demo_root(base: Scene, stack: contextlib.ExitStack) -> Scene:
    base.cwd = _demo(base.cwd / "demo")
    base.replace["/scratch/cache"] = str(base.cwd.parent / "scratch-cache")
    return base


def _bench_demo(base: Scene, stack: contextlib.ExitStack) -> Scene:
    """`genotex demo --inputs-only --out BENCH` (the demo's layout), an OpenAI stand-in."""
    _demo(base.cwd / "BENCH", "--inputs-only")
    _with_openai(base, stack)
    base.replace.update(
        {"PROVIDER/MODEL": "openai/gpt-4o", "--model MODEL": "--model openai/gpt-4o"}
    )
    return base


def _bench_hub(base: Scene, stack: contextlib.ExitStack) -> Scene:
    """BENCH downloaded from a loopback Hub holding the demo (the published layout), `mine`
    a run's output, a gold run's log and a price table, an OpenAI stand-in.
    """
    demo = _demo(base.cwd / "a-demo")
    files = published_files(demo)
    hub = FakeHub(files, lfs={p for p in files if p.endswith(".gz")})
    base.env.update(HF_ENDPOINT=stack.enter_context(hub))
    shutil.copytree(demo / "output", base.cwd / "mine")
    shutil.rmtree(demo)
    _must("genotex download benchmark --out BENCH --no-progress", base)
    _must("inspect eval genotex/e2e --model none --solver genotex/gold -T root=BENCH", base)
    (base.cwd / "prices.json").write_text(json.dumps({"openai/o1": {"input": 15, "output": 60}}))
    _with_openai(base, stack)
    return base


def _bench_inputs(base: Scene, stack: contextlib.ExitStack) -> Scene:
    """`bench`, as the proposer guide's first block writes it (`genotex demo --inputs-only`)."""
    _demo(base.cwd / "bench", "--inputs-only")
    return base


def _pred_ref(base: Scene, stack: contextlib.ExitStack) -> Scene:
    """pred/output (the demo pipeline's), ref/ (the reference and its metadata), and saved
    runs: baseline.json (the reference scored against itself), a.json and b.json.
    """
    demo = _demo(base.cwd / "a-demo")
    shutil.copytree(demo / "output", base.cwd / "pred" / "output")
    shutil.copytree(demo / "reference" / "output", base.cwd / "ref" / "output")
    shutil.copytree(demo / "metadata", base.cwd / "ref" / "metadata")
    _must("genotex eval -p ref/output -r ref/output --json baseline.json", base)
    _must("genotex eval -p pred/output -r ref/output --json a.json --label 'demo agent'", base)
    shutil.copy(base.cwd / "baseline.json", base.cwd / "b.json")
    return base


def _planted(base: Scene, stack: contextlib.ExitStack) -> Scene:
    """The demo, and `trait_row_wrong` planted in a copy of its reference (diagnose guide)."""
    from genotex.core import load_task_info
    from genotex.workflows import PlantedFault, make_faulty_prediction

    base.cwd = _demo(base.cwd / "demo")
    task_info = load_task_info(base.cwd / "metadata" / "task_info.json")
    make_faulty_prediction(base.cwd / "reference" / "output", base.cwd / "trait_row_wrong",
                           [PlantedFault("trait_row_wrong", "Asthma", "GSE100001")],
                           reanalyse=(task_info, "reference"))  # fmt: skip
    return base


def _fixtures(base: Scene, stack: contextlib.ExitStack) -> Scene:
    """The published evaluator's first test case as `case1/` (read only)."""
    (base.cwd / "case1").symlink_to(SHARED / "fixtures" / "eval" / "case1")
    return base


def _real(base: Scene, stack: contextlib.ExitStack) -> Scene:
    """Real GEO and Xena inputs in the benchmark's layout (GSE14520 with its GPL96 beside,
    TCGA CHOL), the hand-written recipe, the problems of Liver_Cancer and Bile_Duct_Cancer,
    NCBI's gene_info and labelled clinical records: what the preprocessing guide reads.
    """
    _real_raw(base, stack)
    shutil.copytree(TESTS / "recipes" / "Liver_Cancer", base.cwd / "recipes" / "Liver_Cancer")
    return base


def _real_raw(base: Scene, stack: contextlib.ExitStack) -> Scene:
    """`_real` before any recipe is written (the proposer's guide writes the first)."""
    real, geo = SHARED / "data" / "real", base.cwd / "input" / "GEO" / "Liver_Cancer"
    shutil.copytree(real / "geo" / "GSE14520", geo / "GSE14520")
    shutil.copytree(real / "geo" / "platforms", geo / "platforms")
    chol = "TCGA_Bile_Duct_Cancer_(CHOL)"
    shutil.copytree(real / "tcga" / chol, base.cwd / "input" / "TCGA" / chol)
    shutil.copytree(SHARED / "fixtures" / "regress" / "real" / "metadata", base.cwd / "metadata")
    shutil.copy(real / "ncbi" / "Homo_sapiens.gene_info.gz", base.cwd)
    shutil.copy(SHARED / "data" / "clinical" / "dev.jsonl", base.cwd / "clinical_records.jsonl")
    _must("genotex synonyms build --gene-info Homo_sapiens.gene_info.gz "
          "--out metadata/gene_synonym.json", base)  # fmt: skip
    return base


def _regress_real(base: Scene, stack: contextlib.ExitStack) -> Scene:
    """The regression guide's root: Liver_Cancer's and Bile_Duct_Cancer's real linked data."""
    source = SHARED / "fixtures" / "regress" / "real"
    shutil.copytree(source / "output" / "preprocess", base.cwd / "output" / "preprocess")
    shutil.copytree(source / "metadata", base.cwd / "metadata")
    return base


def _mirror(base: Scene, stack: contextlib.ExitStack) -> Scene:
    """GEO and Xena on loopback, serving the demo's inputs, with their manifests: the
    download commands run with `--base-url` and `--manifest` added (nothing else differs).
    """
    demo = _demo(base.cwd / "a-demo", "--inputs-only")
    manifests: dict[str, dict[str, str]] = {"GEO": {}, "TCGA": {}}
    for path in (demo / "input").rglob("*"):
        if path.is_file():
            part, relative = path.relative_to(demo / "input").as_posix().split("/", 1)
            manifests[part][relative] = hashlib.sha256(path.read_bytes()).hexdigest()
            _Mirror.files[path.name] = path.read_bytes()
    gene_info = SHARED / "data" / "real" / "ncbi" / "Homo_sapiens.gene_info.gz"
    _Mirror.files[gene_info.name] = gene_info.read_bytes()
    for part, files in manifests.items():
        (base.cwd / f"{part}.json").write_text(json.dumps({"files": files}))
    url = stack.enter_context(local_server(_Mirror))
    base.append = {
        "genotex download geo": f"--base-url {url} --manifest GEO.json --no-progress",
        "genotex download tcga": f"--base-url {url} --manifest TCGA.json --no-progress",
        "genotex download gene-info": f"--base-url {url}/Homo_sapiens.gene_info.gz --no-progress",
    }
    return base


_FROM_SHARED = {"fixtures", "real", "real-raw", "regress-real", "mirror"}
SCENES = {
    "empty": _empty,
    "demo": _demo_root,
    "bench-demo": _bench_demo,
    "bench-hub": _bench_hub,
    "bench-inputs": _bench_inputs,
    "pred-ref": _pred_ref,
    "planted": _planted,
    "fixtures": _fixtures,
    "real": _real,
    "real-raw": _real_raw,
    "regress-real": _regress_real,
    "mirror": _mirror,
}
