"""An InfluxQL query as a panel target of Grafana's foundation SDK, which has no InfluxDB query
builder of its own. It serialises to the target JSON of Grafana's InfluxDB datasource in raw
InfluxQL mode."""

from __future__ import annotations

from grafana_foundation_sdk.cog import builder as cogbuilder
from grafana_foundation_sdk.cog import variants as cogvariants
from grafana_foundation_sdk.models.dashboard import DataSourceRef

DATASOURCE_UID = "ostara-influxdb"
DATASOURCE = DataSourceRef(type_val="influxdb", uid=DATASOURCE_UID)


class InfluxQLQuery(cogvariants.Dataquery):
    def __init__(self, query: str, ref_id: str, alias: str = "", result_format: str = ""):
        self.query = query
        self.ref_id = ref_id
        self.alias = alias
        self.result_format = result_format or "time_series"

    def to_json(self) -> dict[str, object]:
        payload: dict[str, object] = {
            "refId": self.ref_id,
            "datasource": DATASOURCE.to_json(),
            "rawQuery": True,
            "query": self.query,
            "resultFormat": self.result_format,
        }
        if self.alias:
            payload["alias"] = self.alias
        return payload


class Query(cogbuilder.Builder[InfluxQLQuery]):
    """``Query("SELECT ...").ref_id("A").alias("$tag_server")``"""

    def __init__(self, query: str) -> None:
        self._internal = InfluxQLQuery(query, "A")

    def ref_id(self, ref_id: str) -> Query:
        self._internal.ref_id = ref_id
        return self

    def alias(self, alias: str) -> Query:
        self._internal.alias = alias
        return self

    def table(self) -> Query:
        self._internal.result_format = "table"
        return self

    def build(self) -> InfluxQLQuery:
        return self._internal
