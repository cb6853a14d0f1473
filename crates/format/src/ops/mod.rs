//! Operations on whole files, built over the format's core (the writer, the reader and the
//! records): merging files ([`merge`]), skimming entries and branches ([`skim`]), recovering what
//! a killed writer left ([`recover`]), and the basket copying that merge, skim and the event index
//! share ([`transfer`]).

pub(crate) mod merge;
pub(crate) mod recover;
pub(crate) mod skim;
pub(crate) mod transfer;
