// What rootcling puts in libevtc_rdf's dictionary: the entry points of evtc_rdf_lib.hxx.
#ifdef __CLING__
#pragma link off all globals;
#pragma link off all classes;
#pragma link off all functions;
#pragma link C++ namespace evtc;
#pragma link C++ function evtc::MakeDataFrame;
#endif
