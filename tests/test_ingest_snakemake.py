"""`snakemake data/<name>/manifest.tsv` with a config overlay pointing at a local copy
in the official layout builds a validated manifest (subset marked), with provenance."""

import json
import subprocess

import pandas as pd
import pytest
import yaml

from judgeaudit.datasets.validate import validate_manifest
from judgeaudit.testing.real_fixtures import emocf_tree, ravdess_tree


def _snakemake(snakemake_exe, repo_root, workdir, overlay, target, *extra):
    return subprocess.run(
        [snakemake_exe, "-s", str(repo_root / "Snakefile"), "--configfile",
         str(repo_root / "config.yaml"), str(overlay), "--directory", str(workdir),
         "--cores", "2", target, *extra],
        capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_snakemake_ingests_ravdess_local_dir(tmp_path, repo_root, snakemake_exe):
    copy = ravdess_tree(tmp_path / "RAVDESS_copy", actors=(1, 2, 3, 4))
    work = tmp_path / "work"
    work.mkdir()
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text(yaml.safe_dump({"datasets": {"ravdess": {
        "source": "local_dir", "local_dir": str(copy), "check_complete": False,
        "subset_per_class": 4, "test_fraction": 0.5}}}))
    res = _snakemake(snakemake_exe, repo_root, work, overlay, "data/ravdess/manifest.tsv")
    assert res.returncode == 0, res.stderr[-3000:]
    manifest = work / "data" / "ravdess" / "manifest.tsv"
    validate_manifest(manifest, root=work)
    frame = pd.read_csv(manifest, sep="\t")
    assert len(frame) == 240
    assert frame[frame.subset == 1].emotion.value_counts().to_dict() == {
        e: 4 for e in ("neutral", "calm", "happy", "sad", "angry", "fearful", "disgust",
                       "surprised")}
    assert set(frame.orig_path.str.slice(0, len(str(copy)))) == {str(copy)}
    for out in ("manifest.tsv", "LICENSE_INFO.json", "audio16k"):
        prov = json.loads((work / "data" / "ravdess" / f"{out}.prov.json").read_text())
        assert prov["rule"] == "ingest_ravdess"
    assert json.loads((work / "data/ravdess/LICENSE_INFO.json").read_text())["non_commercial"]
    assert (work / "logs" / "download" / "ingest_ravdess.log").is_file()
    # Nothing to do on a second run.
    again = _snakemake(snakemake_exe, repo_root, work, overlay, "data/ravdess/manifest.tsv",
                       "-n")
    assert "Nothing to be done" in again.stdout + again.stderr


@pytest.mark.slow
def test_snakemake_default_source_is_synthetic(tmp_path, repo_root, snakemake_exe):
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text("{}\n")
    res = _snakemake(snakemake_exe, repo_root, tmp_path, overlay, "data/ravdess/manifest.tsv",
                     "-n")
    assert res.returncode != 0
    assert "datasets.ravdess.source is 'download' or 'local_dir'" in res.stdout + res.stderr


@pytest.mark.slow
def test_snakemake_ingests_emocf_local_dir(tmp_path, repo_root, snakemake_exe):
    copy = emocf_tree(tmp_path / "EmoCF")
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text(yaml.safe_dump({"datasets": {"emocf": {
        "source": "local_dir", "local_dir": str(copy)}}}))
    work = tmp_path / "work"
    work.mkdir()
    res = _snakemake(snakemake_exe, repo_root, work, overlay, "data/emocf/manifest.tsv")
    assert res.returncode == 0, res.stderr[-3000:]
    validate_manifest(work / "data" / "emocf" / "manifest.tsv", root=work)
    assert (work / "data" / "emocf" / "items.tsv.prov.json").is_file()


@pytest.mark.slow
def test_snakemake_downloads_ravdess_from_loopback_server(tmp_path, repo_root, snakemake_exe):
    import hashlib

    from judgeaudit.testing.real_fixtures import serve, zip_dir

    src = ravdess_tree(tmp_path / "src", actors=(1, 2))
    arc = zip_dir(src, tmp_path / "Audio_Speech_Actors_01-24.zip")
    work = tmp_path / "work"
    work.mkdir()
    with serve() as (url, st):
        st.files["/records/1188976/files/Audio_Speech_Actors_01-24.zip"] = arc.read_bytes()
        st.drop_after["/records/1188976/files/Audio_Speech_Actors_01-24.zip"] = 50_000
        overlay = tmp_path / "overlay.yaml"
        overlay.write_text(yaml.safe_dump({"datasets": {
            "download": {"backoff_s": 0.1},
            "ravdess": {"source": "download",
                        "url": f"{url}/records/1188976/files/Audio_Speech_Actors_01-24.zip",
                        "md5": hashlib.md5(arc.read_bytes()).hexdigest(),
                        "check_complete": False, "subset_per_class": 2,
                        "subset_split": "all"}}}))  # 2 actors: none held out
        res = _snakemake(snakemake_exe, repo_root, work, overlay, "data/ravdess/manifest.tsv")
    assert res.returncode == 0, res.stderr[-3000:]
    receipt = json.loads((work / "data/ravdess/download.json").read_text())
    assert receipt["files"][0]["attempts"] == 2 and receipt["files"][0]["md5"]
    assert json.loads((work / "data/ravdess/download.json.prov.json").read_text())["rule"] == (
        "download_ravdess")
    assert len(pd.read_csv(work / "data/ravdess/manifest.tsv", sep="\t")) == 120
    assert json.loads((work / "checksums" / "pins.json").read_text())
