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
"""
