"""Each array's controllers' REST API (issue 33): management addresses, the monitor account
(password encrypted) and the pinned certificate. Blank for the arrays already saved: they stay
read through SMcli until addresses are given and the sensor step runs again."""

from __future__ import annotations

from django.db import migrations, models

import portal.inventory.models


class Migration(migrations.Migration):
    dependencies = [
        ("inventory", "0003_corosync_link_addresses"),
    ]

    operations = [
        migrations.AddField(
            model_name="storagearray",
            name="certificate_sha256",
            field=models.CharField(
                blank=True,
                help_text="SHA-256 of the controllers' certificate, pinned by the sensor step; "
                "clear it to pin a replaced one",
                max_length=129,
                validators=[portal.inventory.models.validate_fingerprints],
            ),
        ),
        migrations.AddField(
            model_name="storagearray",
            name="management_a",
            field=models.CharField(
                blank=True,
                help_text="controller A's management address: host or host:port (8443 if none)",
                max_length=261,
                validators=[portal.inventory.models.validate_controller_address],
            ),
        ),
        migrations.AddField(
            model_name="storagearray",
            name="management_b",
            field=models.CharField(
                blank=True,
                help_text="controller B's management address: host or host:port (8443 if none)",
                max_length=261,
                validators=[portal.inventory.models.validate_controller_address],
            ),
        ),
        migrations.AddField(
            model_name="storagearray",
            name="monitor_password_encrypted",
            field=models.TextField(blank=True, editable=False),
        ),
        migrations.AddField(
            model_name="storagearray",
            name="monitor_user",
            field=models.CharField(
                default="monitor", help_text="the array's read-only monitor account", max_length=32
            ),
        ),
    ]
