"""Install the default rules added since the first start ("Redundancy lost")."""

from django.conf import settings
from django.db import migrations

from portal.alerts import defaults


def install(apps, schema_editor):
    defaults.install(apps.get_model("alerts", "Rule"), settings.OSTARA_ALERT_MAIL_TO)


class Migration(migrations.Migration):
    dependencies = [("alerts", "0006_incident_groups")]

    operations = [migrations.RunPython(install, migrations.RunPython.noop)]
