"""Grafana dashboards as code, the generated JSON and the provisioning files for the InfluxDB
datasource and the dashboards."""
