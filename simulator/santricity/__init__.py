"""The virtual arrays' SANtricity REST API (the embedded Web Services of E-series controllers).

One model, two interfaces: the rack's arrays (simulator.topology) are what `SMcli` prints and
what this API serves, as JSON in the real API's shapes and field names.

- `refs`: the arrays' object references (drive, volume group, volume, controller refs).
- `model`: the JSON bodies of the endpoints Ostara reads, from the rack's state.
- `mel`: each array's Major Event Log, written as the rack's state changes.
- `stats`: the analysed statistics, from the workload's last step.
- `access`: the monitor account, the certificates and the ports, recorded in the rack.
- `server`: the HTTPS server, one listening port per controller.

`python -m simulator arrays-api --rack DIR` runs the server (simulator/README.md).

Known differences from real controllers: object refs keep the real type byte but the rest is
a hash of the object's place; the informational MEL codes are this simulator's (mel.py); the
statistics' sample window is the workload's step, not the controller's; one certificate per
array, served by both controllers (real ones have one each unless a site installs its own);
no login/session endpoints (basic auth on each request, which real arrays accept too); only
the endpoints a monitoring collector reads, read-only (one POST: getLongLivedOpsProgress).
"""
