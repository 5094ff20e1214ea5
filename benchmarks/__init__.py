"""The project's benchmarks, apart from the product so that nothing of them ships to a server:
`python -m benchmarks.rack` (the virtual rack's refresh), `python -m benchmarks.sensor` (the
sensor's CPU next to Telegraf's, and ingest into InfluxDB), `python -m benchmarks.health` (the
health engine and the dashboard on a large rack). `make bench` runs them all (deploy/bench.sh).
They measure; they never fail on a number."""
