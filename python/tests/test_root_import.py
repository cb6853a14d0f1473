"""Every ROOT fixture converted to evtc: each branch of the reference readings is either written
with every value equal to the reference or refused with its reason, never dropped or changed.

The references are the JSON files beside each fixture (crates/root/tests/fixtures/, written by
make_fixtures.py): uproot's reading (``X.root.json``), overridden where uproot misreads by ROOT's
own (``X.root.root.json``) or by the values written (``X.root.written.json``).
"""

from __future__ import annotations

import json
import math

import pytest

import evtc

from conftest import FIXTURES

SPECIAL = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def _references(root: str) -> dict:
    """Tree -> branch -> expected entries for one fixture file (the newest cycle of each tree,
    which is the one converted)."""
    if root.startswith("kinds_"):
        paths = [FIXTURES / "kinds.json"]
    else:
        # partial.root.root.json holds what GetEntry leaves in a buffer, not a column's values.
        layers = [".json", ".written.json"] + ([] if root == "partial.root" else [".root.json"])
        paths = [FIXTURES / (root + suffix) for suffix in layers]
    out: dict = {}
    cycles: dict = {}
    for path in paths:
        if not path.exists():
            continue
        for key, content in json.loads(path.read_text()).items():
            tree, _, cycle = key.partition(";")
            cycle = int(cycle or 1 << 30)
            if cycle < cycles.get(tree, 0):
                continue
            if cycle > cycles.get(tree, 0):
                cycles[tree] = cycle
                out[tree] = {}
            out[tree].update(content["branches"])
    return out


def _plain(x):
    if isinstance(x, list):
        return [_plain(i) for i in x]
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, bytes):
        return x.decode("utf-8", "surrogateescape")
    if isinstance(x, str) and x in SPECIAL:
        return SPECIAL[x]
    return x


def _flat(x):
    return [v for i in x for v in _flat(i)] if isinstance(x, list) else [x]


def _same(a, b) -> bool:
    if isinstance(a, list) or isinstance(b, list):
        return (
            isinstance(a, list)
            and isinstance(b, list)
            and len(a) == len(b)
            and all(_same(x, y) for x, y in zip(a, b))
        )
    if isinstance(a, float) or isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) if a != a or b != b else a == b
    return a == b


# RNTuple fixtures are read nested and compared field by field in test_rntuple.py;
# ttree_extfile_baskets.root holds no tree, only the baskets of a branch of ttree_extfile.root.
ROOT_FILES = sorted(
    p.name
    for p in FIXTURES.glob("*.root")
    if not p.name.startswith("rntuple_") and not p.name.endswith("_baskets.root")
)


@pytest.mark.parametrize("root", ROOT_FILES)
def test_every_fixture_branch_is_converted_equal_or_refused(root, tmp_path):
    out = tmp_path / "out.evtc"
    summary = evtc.convert(FIXTURES / root, out, skip_unsupported=True)
    refused = {(s["tree"], s["branch"]): s["reason"] for s in summary["skipped"]}
    converted = evtc.open(out)
    checked = 0
    for tree_name, branches in _references(root).items():
        tree = converted[tree_name] if tree_name in converted.keys() else None
        for name, want in branches.items():
            if isinstance(want, dict):  # a summary of a big branch, checked elsewhere
                continue
            want = _plain(want)
            where = f"{root} {tree_name}/{name}"
            # A refused branch refuses the leaves under it (a leaf-list's `branch/leaf`).
            by = next(
                (k for k in ((tree_name, name), (tree_name, name.rpartition("/")[0])) if k in refused),
                None,
            )
            if by is not None and (tree is None or name not in tree.keys()):
                assert refused[by], f"{where}: refused without a reason"
                continue
            if tree is not None and name not in tree.keys() and _first_record(want) is not None:
                checked += _check_record(tree, name, want, root)
                continue
            if tree is not None and name not in tree.keys() and f"{name}.first" in tree.keys():
                # A map read whole (a list of [key, value] pairs per entry): its keys and its
                # values, `name.first` and `name.second` (`name.second.x` for each member `x`
                # of object values).
                for k, half in enumerate(["first", "second"]):
                    column = [[pair[k] for pair in entry] for entry in want]
                    record = _first_record(column)
                    for member in record or [None]:
                        path = f"{name}.{half}" + (f".{member}" if member else "")
                        values = _pluck(column, member) if member else column
                        checked += _check(tree, path, values, root)
                continue
            assert tree is not None and name in tree.keys(), f"{where}: neither written nor refused"
            checked += _check(tree, name, want, root)
    assert checked > 0, root


def _first_record(x):
    """The first record of nested lists of records, or None if `x` is not one."""
    if isinstance(x, dict):
        return x
    if isinstance(x, list) and x and all(isinstance(i, (list, dict)) for i in x):
        return next((r for r in map(_first_record, x) if r is not None), None)
    return None


def _check_record(tree, name: str, want: list, root: str) -> int:
    """Objects read whole (in lists, or lists of lists): one column per member, `name.member`, of
    the same nesting; a member that holds objects itself (an array of objects behind a pointer)
    one column per member of those, `name.member.x`."""
    checked = 0
    for member in _first_record(want):
        column = f"{name}.{member}"
        values = _pluck(want, member)
        if column not in tree.keys() and _first_record(values) is not None:
            checked += _check_record(tree, column, values, root)
            continue
        assert column in tree.keys(), f"{root} {tree.name}/{column}: not written"
        checked += _check(tree, column, values, root)
    return checked


def _pluck(x, member: str):
    return [_pluck(i, member) for i in x] if isinstance(x, list) else x[member]


def _check(tree, name: str, want: list, root: str) -> int:
    got = _plain(tree[name].array().to_list())
    if "[" in tree[name].typename:
        # Fixed arrays are stored flat: x[2][3] is six values per entry.
        got, want = [_flat(g) for g in got], [_flat(w) for w in want]
    assert len(got) == len(want), f"{root} {tree.name}/{name}"
    for i, (g, w) in enumerate(zip(got, want)):
        assert _same(g, w), f"{root} {tree.name}/{name} entry {i}: {g!r} != {w!r}"
    return 1


def test_an_unreadable_branch_fails_or_is_skipped(tmp_path):
    """A damaged basket: convert fails naming its branch, or with skip_unsupported converts
    the other branches and lists it."""
    uproot = pytest.importorskip("uproot")
    source = FIXTURES / "kinds_505.root"
    branch = uproot.open(source)["Events"]["F"]
    end = int(branch.member("fBasketSeek")[0]) + int(branch.member("fBasketBytes")[0])
    data = bytearray(source.read_bytes())
    data[end - 32 : end] = bytes(b ^ 0x5A for b in data[end - 32 : end])
    damaged = tmp_path / "damaged.root"
    damaged.write_bytes(bytes(data))
    with pytest.raises(evtc.CorruptFileError, match='branch "F".*skip_unsupported'):
        evtc.convert(damaged, tmp_path / "strict.evtc")
    summary = evtc.convert(damaged, tmp_path / "rest.evtc", skip_unsupported=True)
    (skipped,) = [s for s in summary["skipped"] if s["branch"] == "F"]
    assert "cannot be read" in skipped["reason"]
    tree = evtc.open(tmp_path / "rest.evtc")["Events"]
    assert "F" not in tree.keys() and "D" in tree.keys()
    assert tree.num_entries == 2000


def _leaves(x):
    return [v for i in x for v in _leaves(i)] if isinstance(x, list) else [x]


@pytest.mark.parametrize(
    "root, tree_name, name",
    [
        ("embedded.root", "Events", "s"),
        ("charstar.root", "Leaves", "s"),
        ("maps.root", "Events", "ss"),
        ("deep.root", "Events", "v3s"),
    ],
)
def test_root_strings_read_back_as_str(root, tree_name, name, tmp_path):
    """A ROOT string, a list of strings and lists of lists of strings are text after a
    conversion, as uproot gives them, not bytes."""
    out = tmp_path / "out.evtc"
    evtc.convert(FIXTURES / root, out, skip_unsupported=True)
    branch = evtc.open(out)[tree_name][name]
    got = branch.array(library="ak").to_list()
    want = _references(root)[tree_name][name]
    assert got == _plain(want)
    assert all(isinstance(v, str) for v in _leaves(got)), f"{root} {name}: {got[:3]!r}"
    assert "string" in branch.typename
