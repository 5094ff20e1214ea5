"""The project's benchmarks, apart from the product so that nothing of them ships to a server:
`python -m benchmarks.rack` (the virtual rack's refresh), `python -m benchmarks.sensor` (the
sensor's CPU next to Telegraf's, and ingest into InfluxDB), `python -m benchmarks.health` (the
health engine and the dashboard on a large rack), and the others of `benchmarks.harness.MODULES`.
`make bench` runs them all through `benchmarks.harness` (deploy/bench.sh), with the demo as
background load (`benchmarks.load`), and ends with a table of the figures each recorded
(`benchmarks.common.record`) against their goals, beside a reference commit's with BASE=.
They measure; they never fail on a number."""
