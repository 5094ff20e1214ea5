"""Install the default rule added since the first start, "Redundancy lost", and only it: a
default rule an administrator deleted stays deleted. On an appliance whose "Anything red" rule
an administrator set up, the new rule goes to the same people (its recipients and addresses);
otherwise to OSTARA_ALERT_MAIL_TO, as a first start's rules do."""

from django.conf import settings
from django.db import migrations

from portal.alerts import defaults

SLUG = "redundancy-lost"


def install(apps, schema_editor):
    Rule = apps.get_model("alerts", "Rule")
    if not defaults.install(Rule, settings.OSTARA_ALERT_MAIL_TO, only=(SLUG,)):
        return
    told = Rule.objects.filter(builtin="anything-red").first()
    if told is not None:
        new = Rule.objects.get(builtin=SLUG)
        new.extra_addresses = told.extra_addresses
        new.save(update_fields=["extra_addresses"])
        new.recipients.set(told.recipients.all())


class Migration(migrations.Migration):
    dependencies = [("alerts", "0006_incident_groups")]

    operations = [migrations.RunPython(install, migrations.RunPython.noop)]
