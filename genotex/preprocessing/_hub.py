"""The benchmark's Hugging Face Hub copy: which revision, which files, and which of them a
user asked for (`genotex download benchmark`'s plan; `_hub_fetch.py` fetches it).

The Hub dataset (`data/hub.json` names it and the revision genotex asks for by default) is
laid out as the benchmark is: `input/` (GEO and TCGA), `output/` (the reference answers),
`metadata/` and `code/` (the experts' notebooks). Its parts:

- `metadata`: `metadata/` (task_info, synonyms), always whole (small);
- `reference`: `output/`; with `only`, the traits' preprocessed data and answers, and the
  preprocessed data of the traits their two-step problems take as conditions (what the
  end-to-end task gives an agent);
- `inputs`: `input/`; with `only`, the GEO folders of the traits and of their two-step
  conditions (the paper's end-to-end task preprocesses those too) and the Xena folder each
  maps to, or every Xena folder with `all_tcga` (the paper's agent chooses among all);
- `code`: `code/`; with `only`, the traits' folders.

Everything the Hub says is untrusted: a path that would leave the benchmark folder, or a
size or digest of the wrong form, is refused, naming it.
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import json
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from importlib import resources

from ..core import (
    GenotexError,
    TaskInfo,
    UnsafeNameError,
    check_relative,
    extra_hint,
    parse_json,
)
from ._hub_client import bounded_hub_client
from ._manifests import UnknownSelection
from ._tcga import is_xena_folder_of
from ._transfer import MIN_RATE, OPENER, STALL_SECONDS, WINDOW, TooSlow, read_small

__all__ = [
    "PARTS",
    "BenchmarkPlan",
    "HubError",
    "HubFile",
    "hub_errors",
    "hub_settings",
    "plan_benchmark",
    "select_files",
]

#: The parts of the benchmark, and the folder each is.
PARTS = {"metadata": "metadata", "reference": "output", "inputs": "input", "code": "code"}
_SHA256 = re.compile(r"[0-9a-f]{64}")
_BLOB = re.compile(r"[0-9a-f]{40}")


class HubError(GenotexError):
    """The Hub refused, or answered something genotex cannot use; one sentence says which."""


@dataclass(frozen=True)
class HubFile:
    """One file of the Hub's copy: its path, bytes, and the digest it is checked against
    (`sha256:<hex>` for a large (LFS) file, `git-sha1:<hex>` for the git blob id of another).
    """

    path: str
    size: int
    digest: str

    @property
    def part(self) -> str | None:
        top = self.path.split("/", 1)[0]
        return next((part for part, folder in PARTS.items() if folder == top), None)


@dataclass(frozen=True)
class BenchmarkPlan:
    """What a download will fetch: the repository, the revision asked for, the commit it is,
    and the files chosen (sorted by path).
    """

    repo: str
    revision: str
    commit: str
    files: tuple[HubFile, ...]
    endpoint: str | None = None

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)


def hub_settings() -> tuple[str, str]:
    """The benchmark's Hub repository and the revision genotex asks for by default."""
    text = resources.files("genotex.preprocessing").joinpath("data/hub.json").read_text()
    data = json.loads(text)
    return str(data["repo"]), str(data["revision"])


@contextlib.contextmanager
def hub_errors(repo: str, revision: str, what: str = "") -> Iterator[None]:
    """The Hub client's errors as one sentence each (HubError); a full disk as its own."""
    from huggingface_hub import errors
    from huggingface_hub.errors import HfHubHTTPError

    about = f" ({what})" if what else ""
    try:
        yield
    except errors.RevisionNotFoundError:
        raise HubError(f"the Hub's {repo} has no revision {revision!r}") from None
    except (errors.GatedRepoError, errors.RepositoryNotFoundError) as exc:
        status = getattr(getattr(exc, "response", None), "status_code", "refused")
        raise HubError(
            f"the Hub refused {repo}{about} ({status}): it is gated, private or not there; "
            "give a token with access (HF_TOKEN, or `hf auth login`)"
        ) from None
    except errors.LocalEntryNotFoundError as exc:  # the Hub did not answer (a 5xx, no link)
        cause = exc.__cause__ or exc.__context__
        status = getattr(getattr(cause, "response", None), "status_code", None)
        said = f"answered {status}" if status else "could not be reached"
        raise HubError(f"the Hub {said} for {repo}{about}: a server or network error") from None
    except errors.EntryNotFoundError:
        raise HubError(f"the Hub's {repo} at {revision} has no file {what}") from None
    except HfHubHTTPError as exc:
        status = getattr(getattr(exc, "response", None), "status_code", "?")
        raise HubError(f"the Hub answered {status} for {repo}{about}") from None
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise HubError(
                f"the disk is full{about}: what was fetched and checked is kept; make room and "
                "run the same download again to go on"
            ) from None
        if exc.errno in (errno.EISDIR, errno.ENOTDIR, errno.EEXIST):
            raise HubError(
                f"{what or 'a file'} cannot be written: a folder or a file stands in its way "
                f"({exc.filename or exc}); move it, nothing else changed"
            ) from None
        raise HubError(f"the Hub could not be reached for {repo}{about}: {exc}") from None
    except TooSlow:
        slow = f"slower than {MIN_RATE:,} bytes a second for {WINDOW:g} s"
        raise HubError(f"the Hub sent {what or 'its listing'} of {repo} {slow}: stopped") from None
    except Exception as exc:  # httpx's own: redirects, protocol, timeouts
        if type(exc).__module__.split(".")[0] not in ("httpx", "httpx2", "httpcore"):
            raise
        raise HubError(f"the Hub transfer failed for {repo}{about}: {exc}") from None


#: C0 and C1 controls, DEL, and Unicode's line and paragraph separators
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _hub_file(entry: object) -> HubFile:
    """A tree entry of the Hub as a HubFile, every field checked."""
    path = str(getattr(entry, "path", ""))
    if _CONTROL.search(path):  # a control or a line separator would forge lines of a listing
        raise HubError(f"the Hub lists {path!r:.80}, a name holding a control character")
    try:
        check_relative(path, what="Hub path")
    except UnsafeNameError:
        raise HubError(f"the Hub lists {path!r:.80}, which would lie outside the folder") from None
    size, lfs = getattr(entry, "size", None), getattr(entry, "lfs", None)
    sha256, blob = getattr(lfs, "sha256", None), getattr(entry, "blob_id", None)
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise HubError(f"the Hub gives {path!r:.80} a size that is not a whole number")
    if isinstance(sha256, str) and _SHA256.fullmatch(sha256):
        return HubFile(path, size, f"sha256:{sha256}")
    if isinstance(blob, str) and _BLOB.fullmatch(blob):
        return HubFile(path, size, f"git-sha1:{blob}")
    raise HubError(f"the Hub gives {path!r:.80} no digest genotex can check")


def _is_trait_path(path: str, traits: set[str], *, depth: int) -> bool:
    parts = path.split("/")
    return len(parts) > depth and parts[depth] in traits


def _wanted(file: HubFile, only: set[str], conditions: set[str], *, all_tcga: bool) -> bool:
    """Whether a file of a chosen part belongs to the traits of `only` (inputs: or of their
    conditions; a Xena folder: any, with `all_tcga`).
    """
    path = file.path
    if file.part == "metadata":
        return True
    if file.part == "inputs":
        parts, traits = path.split("/"), only | conditions
        if len(parts) > 2 and parts[1] == "TCGA":
            return all_tcga or any(is_xena_folder_of(parts[2], trait) for trait in traits)
        return len(parts) > 2 and parts[1] == "GEO" and parts[2] in traits
    if file.part == "reference":
        given = only | conditions if path.startswith("output/preprocess/") else only
        return _is_trait_path(path, given, depth=2)
    return _is_trait_path(path, only, depth=1)


#: The most entries a tree listing may hold (the benchmark has under 100,000).
MAX_TREE_ENTRIES = 2_000_000


def _listed_files(tree: Iterable[object], file_type: type) -> list[HubFile]:
    """The files of a tree listing, which is untrusted: a path listed twice means the pages
    loop (0.9.0 followed such a listing forever), and a listing past `MAX_TREE_ENTRIES` is cut.
    """
    files, seen = [], set()
    for count, entry in enumerate(tree, start=1):
        if count > MAX_TREE_ENTRIES:
            raise HubError(f"the Hub's listing goes past {MAX_TREE_ENTRIES:,} entries")
        path = getattr(entry, "path", None)
        if path in seen:
            raise HubError(f"the Hub's listing names {str(path)[:200]!r} twice: its pages loop")
        seen.add(path)
        if isinstance(entry, file_type):
            files.append(_hub_file(entry))
    return files


def _known_traits(files: Iterable[HubFile]) -> list[str]:
    found = set()
    for file in files:
        parts = file.path.split("/")
        if len(parts) > 3 and parts[:2] in (
            ["input", "GEO"],
            ["output", "regress"],
            ["output", "preprocess"],
        ):
            found.add(parts[2])
    return sorted(found)


def select_files(
    files: Iterable[HubFile],
    parts: Iterable[str],
    only: Iterable[str] = (),
    task_info: TaskInfo | None = None,
    *,
    all_tcga: bool = False,
) -> tuple[HubFile, ...]:
    """The files of `parts`, cut to the traits of `only` (all when empty), sorted by path.

    `task_info` gives the conditions of `only`'s traits (their preprocessed data is part of
    the reference a two-step problem needs); an unknown trait is an UnknownSelection naming
    the closest known ones.
    """
    files, chosen, wanted = list(files), set(parts), set(only)
    unknown = sorted(chosen - set(PARTS))
    if unknown:
        raise GenotexError(f"the benchmark has no part {unknown[0]!r}: {', '.join(PARTS)}")
    known = _known_traits(files)
    for name in sorted(wanted - set(known)):
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise UnknownSelection(f"the benchmark has no trait {name!r}{hint}")
    conditions: set[str] = set()
    if wanted and task_info is not None:
        conditions = {c for t in wanted for c in task_info.conditions.get(t, ())}
        conditions -= {"Age", "Gender"}
    picked = [
        f
        for f in files
        if f.part in chosen and not f.path.rsplit("/", 1)[-1].startswith(".")
        if not wanted or _wanted(f, wanted, conditions, all_tcga=all_tcga)
    ]
    return tuple(sorted(picked, key=lambda f: f.path))


def plan_benchmark(
    *,
    parts: Iterable[str] = tuple(PARTS),
    only: Iterable[str] = (),
    revision: str | None = None,
    endpoint: str | None = None,
    token: str | None = None,
    all_tcga: bool = False,
) -> BenchmarkPlan:
    """Ask the Hub what the benchmark holds at `revision` (default: genotex's) and choose the
    files of `parts` and `only` (with `all_tcga`, every Xena folder); nothing is written.
    """
    try:
        from huggingface_hub import HfApi
        from huggingface_hub.hf_api import RepoFile
    except ImportError:
        raise GenotexError(
            f"the benchmark's download needs huggingface_hub: {extra_hint('hub')}"
        ) from None

    repo, default = hub_settings()
    if revision is not None and not revision.strip():  # '' silently meant the default
        raise HubError("an empty revision names nothing: give a branch, a tag or a commit")
    revision = revision or default
    endpoint = endpoint or os.environ.get("HF_ENDPOINT") or None
    api = HfApi(endpoint=endpoint, token=token)
    with bounded_hub_client(), hub_errors(repo, revision):
        commit = api.repo_info(repo, repo_type="dataset", revision=revision).sha
        if not isinstance(commit, str) or not _BLOB.fullmatch(commit):
            raise HubError(f"the Hub named no commit for {repo} at {revision!r}")
        tree = api.list_repo_tree(repo, repo_type="dataset", revision=commit, recursive=True)
        files = _listed_files(tree, RepoFile)
    only = [t for t in only if t]
    task_info = _task_info(repo, commit, files, endpoint, token) if only else None
    chosen = select_files(files, parts, only, task_info, all_tcga=all_tcga)
    return BenchmarkPlan(repo, revision, commit, chosen, endpoint)


def resolve_url(endpoint: str | None, repo: str, commit: str, path: str) -> str:
    """The Hub's URL of one file of a dataset's commit (`HF_ENDPOINT`, else the Hub's)."""
    from urllib.parse import quote

    base = (endpoint or "https://huggingface.co").rstrip("/")
    return f"{base}/datasets/{repo}/resolve/{commit}/{quote(path)}"


def auth_headers(token: str | None) -> dict[str, str]:
    """The Hub's `Authorization` header: the token given, else `HF_TOKEN` or the stored
    login's, as the Hub's client reads them; none without one.
    """
    from huggingface_hub import get_token

    token = token or get_token()
    return {"Authorization": f"Bearer {token}"} if token else {}


#: The largest task_info.json read from the Hub (the benchmark's is under 1 MB).
MAX_TASK_INFO_BYTES = 64 * 2**20


def _task_info(
    repo: str, commit: str, files: list[HubFile], endpoint: str | None, token: str | None
) -> TaskInfo | None:
    """The benchmark's task_info.json (to find the conditions of chosen traits), read into
    memory, bounded by its declared size (nothing is written anywhere: `--dry-run` writes
    nothing); None when the repository has none.
    """
    import urllib.error
    import urllib.request

    name = "metadata/task_info.json"
    listed = next((f for f in files if f.path == name), None)
    if listed is None:
        return None
    if listed.size > MAX_TASK_INFO_BYTES:
        raise HubError(f"the Hub lists its {name} at {listed.size:,} bytes: too large to read")
    headers = {"User-Agent": "genotex", **auth_headers(token)}
    request = urllib.request.Request(resolve_url(endpoint, repo, commit, name), headers=headers)
    try:
        with OPENER.open(request, timeout=STALL_SECONDS) as response:
            body = read_small(response, listed.size)
    except TooSlow:
        raise HubError(f"the Hub sent its {name} slower than {MIN_RATE:,} bytes a second for "
                       f"{WINDOW:g} s: stopped") from None  # fmt: skip
    except urllib.error.HTTPError as exc:
        raise HubError(f"the Hub answered {exc.code} for {repo} ({name})") from None
    except (urllib.error.URLError, OSError) as exc:
        raise HubError(f"the Hub could not be reached for {repo} ({name}): {exc}") from None
    if len(body) > listed.size:
        raise HubError(f"the Hub sent more than the {listed.size:,} bytes it lists for {name}")
    try:  # genotex's JSON reader: bounded nesting and numbers, never a RecursionError
        data = parse_json(body, source=f"the Hub's {name}", error=HubError)
        return TaskInfo.from_dict(data, source=f"the Hub's {name}")
    except (ValueError, GenotexError) as exc:
        reason = getattr(exc, "reason", None) or "not JSON"
        raise HubError(f"the Hub's {name} cannot be read: {reason}") from None
