"""Shared fixtures: the repository's sample data, converted once for all the tests."""

from __future__ import annotations

import pathlib

import pytest

import evtc

REPO = pathlib.Path(__file__).resolve().parents[2]
NANO_ROOT = REPO / "data" / "nano_sample.root"
FIXTURES = REPO / "crates" / "root" / "tests" / "fixtures"


@pytest.fixture(scope="package")
def nano_root() -> pathlib.Path:
    return NANO_ROOT


@pytest.fixture(scope="package")
def nano_evtc(tmp_path_factory) -> pathlib.Path:
    """nano_sample.root as evtc, zstd:5 with random-access compression."""
    out = tmp_path_factory.mktemp("nano") / "nano_rac.evtc"
    evtc.convert(NANO_ROOT, out, codec="zstd:5", rac=True)
    return out


@pytest.fixture(scope="package")
def nano_lz4_offsets(tmp_path_factory) -> pathlib.Path:
    """nano_sample.root as evtc, lz4 without RAC, jagged boundaries stored as offsets."""
    out = tmp_path_factory.mktemp("nano") / "nano_lz4.evtc"
    evtc.convert(NANO_ROOT, out, codec="lz4", boundaries="offsets")
    return out
