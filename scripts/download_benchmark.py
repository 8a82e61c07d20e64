#!/usr/bin/env python3
"""Download the GenoTEX inputs by the benchmark's manifests: resumable, verified, summarized.

    python scripts/download_benchmark.py geo  --manifest geo_manifest.json  --out input/GEO
    python scripts/download_benchmark.py tcga --manifest tcga_manifest.json --out input/TCGA
    python scripts/download_benchmark.py gene-info --out metadata/Homo_sapiens.gene_info.gz

GEO files come from NCBI's GEO FTP (over HTTPS), Xena files from the UCSC Xena TCGA
hub, gene_info from NCBI Gene; `--base-url` points elsewhere (a mirror, or a local
server in the tests). Re-running resumes partial files and skips verified ones.
Exit status 1 when any file failed, after a summary of what failed and why.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from genotex.download import (  # noqa: E402
    GENE_INFO_URL,
    GEO_BASE,
    XENA_BASE,
    Download,
    download_all,
    geo_downloads,
    load_manifest,
    tcga_downloads,
)
from genotex.errors import GenotexError  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["geo", "tcga", "gene-info"])
    parser.add_argument("--manifest", type=Path, help="the benchmark's geo_manifest.json / tcga_manifest.json")
    parser.add_argument("--out", type=Path, required=True, help="folder (geo, tcga) or file (gene-info)")
    parser.add_argument("--base-url", default=None, help="where the files are (default: the public sources)")
    parser.add_argument("--only", nargs="*", default=None, help="only these traits (geo) or cohort folders (tcga)")
    parser.add_argument("--jobs", type=int, default=4, help="parallel downloads")
    parser.add_argument("--sha256", default=None, help="gene-info: the expected sha256, if known")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    try:
        if args.what == "gene-info":
            downloads = [Download(args.base_url or GENE_INFO_URL, args.out, args.sha256)]
        else:
            if args.manifest is None:
                parser.error(f"{args.what} needs --manifest")
            files = load_manifest(args.manifest)
            if args.only:
                files = {k: v for k, v in files.items() if k.split("/", 1)[0] in set(args.only)}
            make = geo_downloads if args.what == "geo" else tcga_downloads
            downloads = make(files, args.out, base=args.base_url or (GEO_BASE if args.what == "geo" else XENA_BASE))
    except GenotexError as exc:
        print(f"download: error: {exc}", file=sys.stderr)
        return 1
    results = download_all(downloads, jobs=args.jobs, progress=not args.no_progress)
    counts: dict[str, int] = {}
    for result in results:
        key = "failed" if not result.ok else result.status
        counts[key] = counts.get(key, 0) + 1
    total_mb = sum(r.size for r in results if r.ok) / 1e6
    print(f"{len(results)} files: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) + f"; {total_mb:.1f} MB in place")
    failed = [r for r in results if not r.ok]
    for result in failed:
        print(f"  FAILED {result.download.path}: {result.status.removeprefix('failed: ')}")
    if failed:
        print("Re-run the same command to retry: finished files are kept, partial ones resumed.")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
