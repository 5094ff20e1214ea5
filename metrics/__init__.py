"""What the appliance knows of its metrics, without Django (DESIGN.md §6): the InfluxDB client
(``influx``), every InfluxQL text by who reads it (``influxql``), the derived quantities such as
an OST's fill (``quantities``) and which rows of a big chart are drawn (``chart_rows``).

Below the portal's apps and beside ``sensors.schema``: the portal binds the client to its
settings (``portal.influxdb``); the Grafana generator (``dashboards``) and the
benchmarks use the package as it is.
"""
