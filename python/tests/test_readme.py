"""README.md's command-line and Python blocks run as written, from a directory holding the
shipped sample as `data/nano_sample.root` (its Rust block is a doctest of the root crate; its
quick-start block is the README's two commands themselves)."""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text()


def _blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", README, flags=re.S | re.M)


@pytest.fixture
def sample_dir(tmp_path):
    (tmp_path / "data").mkdir()
    shutil.copy(REPO / "data" / "nano_sample.root", tmp_path / "data")
    return tmp_path


def test_the_command_line_block_runs_as_written(sample_dir):
    cli = os.environ.get("EVTC_CLI")
    if not cli:
        pytest.skip("EVTC_CLI (the evtc binary to run) is not set: scripts/test-all sets it")
    blocks = [b for b in _blocks("sh") if b.startswith("evtc ")]
    assert len(blocks) == 1, "README.md has one block of evtc commands"
    env = {**os.environ, "PATH": f"{pathlib.Path(cli).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        ["bash", "-e", "-c", blocks[0]],
        cwd=sample_dir,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    # What the block promises: the lookup found its event, the ROOT file and the merge exist.
    assert "1004242" not in done.stderr
    for name in ["events.evtc", "events_rn.root", "all.evtc", "balanced.evtc"]:
        assert (sample_dir / name).exists(), name


def test_the_python_block_runs_as_written(sample_dir):
    (block,) = _blocks("python")
    done = subprocess.run(
        [sys.executable, "-c", block],
        cwd=sample_dir,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def test_no_readme_paragraph_is_over_800_characters():
    text = re.sub(r"^```.*?^```", "", README, flags=re.S | re.M)
    for paragraph in re.split(r"\n\s*\n", text):
        if paragraph.lstrip().startswith("|"):
            continue  # a table's rows
        assert len(paragraph) <= 800, paragraph[:120]
