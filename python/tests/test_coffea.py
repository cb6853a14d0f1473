"""coffea's NanoEvents over an evtc file equal those over the ROOT file it was converted from.
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
