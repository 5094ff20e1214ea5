"""The rows hold every input of a pair's plan (issue 29): the LNet interface, each array's
installed drives, hot spares and drive size as written. Existing pairs take them from the plan
they were confirmed with, so the plan derived from the rows is the one confirmed."""

from __future__ import annotations

import json

from django.db import migrations, models

import portal.inventory.models


def from_the_confirmed_plans(apps, schema_editor) -> None:
    """Also run by ``restore`` after loading an archive made before this migration."""
    ServerPair = apps.get_model("inventory", "ServerPair")
    Server = apps.get_model("inventory", "Server")
    StorageArray = apps.get_model("inventory", "StorageArray")
    for pair in ServerPair.objects.all():
        for entry in pair.plan.get("servers", []):
            if entry.get("lnet_interface"):
                Server.objects.filter(hostname=entry["hostname"]).update(
                    lnet_interface=entry["lnet_interface"]
                )
        for entry in pair.plan.get("arrays", []):
            StorageArray.objects.filter(name=entry["name"]).update(
                drive_tb_as_given=json.dumps(entry["drive_tb"]),
                installed_drives=entry["drives"],
                global_spares=entry["global_spares"],
            )


class Migration(migrations.Migration):
    dependencies = [("inventory", "0001_inventory_of_the_rack")]

    operations = [
        migrations.AddField(
            model_name="server",
            name="lnet_interface",
            field=models.CharField(
                blank=True,
                help_text="the network interface carrying LNet, watched by the healthLNET check",
                max_length=15,
                validators=[portal.inventory.models.validate_interface],
            ),
        ),
        migrations.AddField(
            model_name="storagearray",
            name="drive_tb_as_given",
            field=models.CharField(default="", editable=False, max_length=24),
        ),
        migrations.AddField(
            model_name="storagearray",
            name="installed_drives",
            field=models.PositiveSmallIntegerField(
                default=0,
                help_text="drives installed, filling the enclosures' slots in the planner's order",
            ),
        ),
        migrations.AddField(
            model_name="storagearray",
            name="global_spares",
            field=models.PositiveSmallIntegerField(
                default=0, help_text="hot spares the plan reserved"
            ),
        ),
        migrations.RunPython(from_the_confirmed_plans, migrations.RunPython.noop),
    ]
