"""Each server's two Corosync link addresses (issue 32): optional, blank for the servers
already saved (their Corosync keeps one link on the host name)."""

from __future__ import annotations

from django.db import migrations, models

import portal.inventory.models


class Migration(migrations.Migration):
    dependencies = [
        ("inventory", "0002_rows_hold_the_plan"),
    ]

    operations = [
        migrations.AddField(
            model_name="server",
            name="heartbeat_address",
            field=models.CharField(
                blank=True,
                help_text="Corosync link 1: the server's address on the private heartbeat network",
                max_length=45,
                validators=[portal.inventory.models.validate_link_address],
            ),
        ),
        migrations.AddField(
            model_name="server",
            name="mgmt_address",
            field=models.CharField(
                blank=True,
                help_text="Corosync link 0: the server's address on the management network",
                max_length=45,
                validators=[portal.inventory.models.validate_link_address],
            ),
        ),
    ]
