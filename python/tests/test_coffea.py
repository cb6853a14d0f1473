"""coffea's NanoEvents over an evtc file (eager and dask modes) equal those over the ROOT file it
was converted from.
coffea is an optional test dependency: without it these tests are skipped, saying so."""

from __future__ import annotations

import warnings

import awkward as ak
import pytest

coffea = pytest.importorskip("coffea", reason="coffea is not installed: evtc.coffea is not tested here")


def _events(factory_events):
    with warnings.catch_warnings():
        # The sample lacks some of NanoAOD's cross-referenced collections (FsrPhoton, ...).
        warnings.simplefilter("ignore", RuntimeWarning)
        return factory_events()


def test_nanoevents_over_evtc_equal_those_over_root(nano_evtc, nano_root):
    from coffea.nanoevents import NanoAODSchema, NanoEventsFactory

    from evtc.coffea import events

    ours = _events(lambda: events(nano_evtc))
    theirs = _events(
        lambda: NanoEventsFactory.from_root(
            {str(nano_root): "Events"}, mode="eager", schemaclass=NanoAODSchema
        ).events()
    )
    assert len(ours) == len(theirs) == 20_000
    for collection, field in [("Muon", "pt"), ("Jet", "eta"), ("Electron", "phi"), ("MET", "pt")]:
        # uproot's arrays carry the branches' titles as parameters (__doc__); evtc's do not.
        same = ak.array_equal(ours[collection][field], theirs[collection][field], check_parameters=False)
        assert same, (collection, field)
    # Cross-references (Muon_jetIdx) and the analysis idioms on top of them.
    assert ak.array_equal(
        ak.fill_none(ours.Muon.matched_jet.pt, -1.0),
        ak.fill_none(theirs.Muon.matched_jet.pt, -1.0),
        check_parameters=False,
    )
    good = ours.Muon[(ours.Muon.pt > 20) & (abs(ours.Muon.eta) < 2.4)]
    assert ak.sum(ak.num(good)) == ak.sum(ak.num(theirs.Muon[(theirs.Muon.pt > 20) & (abs(theirs.Muon.eta) < 2.4)]))
    pairs = ak.combinations(good, 2)
    mass = (pairs["0"] + pairs["1"]).mass
    assert ak.count(mass) > 0


def test_entry_ranges_and_other_trees(nano_evtc):
    from evtc.coffea import events

    part = _events(lambda: events(nano_evtc, entry_start=100, entry_stop=350))
    assert len(part) == 250
    with pytest.raises(Exception, match="Nope|no tree"):
        events(nano_evtc, tree="Nope")


def test_dask_mode_equals_coffeas_over_root_and_reads_only_what_is_used(nano_root, tmp_path):
    import dask_awkward as dak
    from coffea.nanoevents import NanoAODSchema, NanoEventsFactory

    import evtc
    from evtc.coffea import events

    # Four clusters of 5,000 entries, so that each file gives several partitions.
    path = tmp_path / "nano.evtc"
    evtc.convert(nano_root, path, cluster_size=5000)
    ours = _events(lambda: events([path, path], mode="dask", step_size=5000))
    assert ours.npartitions == 8
    theirs = _events(
        lambda: NanoEventsFactory.from_root(
            {str(nano_root): "Events"}, mode="dask", schemaclass=NanoAODSchema
        ).events()
    )
    good = ours.Muon.pt[ours.Muon.pt > 20]
    (columns,) = dak.necessary_columns(good).values()
    assert columns == {"Muon_pt", "nMuon"}
    got = good.compute()
    want = theirs.Muon.pt[theirs.Muon.pt > 20].compute()
    assert len(got) == 40_000
    for half in (got[:20_000], got[20_000:]):
        assert ak.array_equal(half, want, check_parameters=False)
    # A cross-reference reads the collections it joins, and agrees with coffea's.
    matched = ours.Muon.matched_jet.pt
    (columns,) = dak.necessary_columns(matched).values()
    assert columns == {"Muon_jetIdx", "nMuon", "Jet_pt", "nJet"}
    assert ak.array_equal(
        ak.fill_none(matched.compute()[:20_000], -1.0),
        ak.fill_none(theirs.Muon.matched_jet.pt.compute(), -1.0),
        check_parameters=False,
    )


def test_modes_and_their_arguments_are_checked(nano_evtc):
    from evtc.coffea import events

    with pytest.raises(ValueError, match="mode"):
        events(nano_evtc, mode="lazy")
    with pytest.raises(ValueError, match="one path"):
        events([nano_evtc, nano_evtc], mode="virtual")
    with pytest.raises(ValueError, match="entry_start"):
        events(nano_evtc, mode="dask", entry_start=10)
    with pytest.raises(ValueError, match="one path"):
        events([nano_evtc, nano_evtc])


def test_virtual_mode_equals_coffeas_and_reads_what_is_touched(nano_evtc, nano_root):
    from coffea.nanoevents import NanoAODSchema, NanoEventsFactory

    from evtc import _testing
    from evtc.coffea import events

    ours = _events(lambda: events(nano_evtc, mode="virtual"))
    # The forms came from zero-entry reads; from here on, a read is a column touched.
    _testing.reset_branch_reads()
    theirs = _events(
        lambda: NanoEventsFactory.from_root(
            {str(nano_root): "Events"}, mode="virtual", schemaclass=NanoAODSchema
        ).events()
    )
    assert len(ours) == len(theirs) == 20_000
    pt = ours.Muon.pt
    assert ak.array_equal(ak.materialize(pt), ak.materialize(theirs.Muon.pt), check_parameters=False)
    reads = _testing.branch_reads()
    assert set(reads) <= {"Muon_pt", "nMuon"} and "Muon_pt" in reads, reads
    for collection, field in [("Jet", "eta"), ("MET", "pt")]:
        assert ak.array_equal(
            ak.materialize(ours[collection][field]),
            ak.materialize(theirs[collection][field]),
            check_parameters=False,
        ), (collection, field)
    part = _events(lambda: events(nano_evtc, mode="virtual", entry_start=100, entry_stop=350))
    assert len(part) == 250
