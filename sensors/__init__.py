"""The sensor agent that runs on each Lustre server: collectors for Lustre stats, BMC sensors
and array health, line-protocol encoding, batching, an on-disk spool and the sender.
Runs with the Python standard library only; imports nothing from the portal."""
