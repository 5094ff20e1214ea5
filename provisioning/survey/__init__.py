"""obdfilter-survey acceptance: read the survey's summary lines and judge them against the
planned bandwidth (DESIGN.md §10). Plain Python, no Django: ``python -m provisioning.survey``."""
