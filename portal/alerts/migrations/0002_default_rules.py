"""Install the default alert rules on first start (``portal.alerts.defaults``)."""

from django.conf import settings
from django.db import migrations

from portal.alerts import defaults


def install(apps, schema_editor):
    defaults.install(apps.get_model("alerts", "Rule"), settings.OSTARA_ALERT_MAIL_TO)


class Migration(migrations.Migration):
    dependencies = [("alerts", "0001_alert_rules_events_silences_and_outbox")]

    operations = [migrations.RunPython(install, migrations.RunPython.noop)]
