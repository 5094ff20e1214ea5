"""One pinned certificate per controller (each E-series controller has its own self-signed
one). An array's single pin moves to both controllers; a list of two (one per controller, as
the sensor step recorded them) to A and B in order. Back again: the pins as a list."""

from __future__ import annotations

from django.db import migrations, models

import portal.inventory.models


def to_controllers(apps, schema_editor) -> None:
    StorageArray = apps.get_model("inventory", "StorageArray")
    for array in StorageArray.objects.exclude(certificate_sha256=""):
        words = array.certificate_sha256.split()
        array.certificate_a_sha256 = words[0]
        array.certificate_b_sha256 = words[1] if len(words) > 1 else words[0]
        array.save(update_fields=["certificate_a_sha256", "certificate_b_sha256"])


def to_array(apps, schema_editor) -> None:
    StorageArray = apps.get_model("inventory", "StorageArray")
    for array in StorageArray.objects.all():
        pins = [p for p in (array.certificate_a_sha256, array.certificate_b_sha256) if p]
        if len(pins) == 2 and pins[0] == pins[1]:
            pins = pins[:1]
        array.certificate_sha256 = " ".join(pins)
        array.save(update_fields=["certificate_sha256"])


class Migration(migrations.Migration):
    dependencies = [
        ("inventory", "0004_array_rest_management"),
    ]

    operations = [
        migrations.AddField(
            model_name="storagearray",
            name="certificate_a_sha256",
            field=models.CharField(
                blank=True,
                help_text="pinned by the sensor step from what controller A serves; clear it "
                "to pin a replaced one",
                max_length=64,
                validators=[portal.inventory.models.validate_fingerprint],
                verbose_name="controller A's certificate (SHA-256)",
            ),
        ),
        migrations.AddField(
            model_name="storagearray",
            name="certificate_b_sha256",
            field=models.CharField(
                blank=True,
                help_text="pinned by the sensor step from what controller B serves; clear it "
                "to pin a replaced one",
                max_length=64,
                validators=[portal.inventory.models.validate_fingerprint],
                verbose_name="controller B's certificate (SHA-256)",
            ),
        ),
        migrations.RunPython(to_controllers, to_array),
        migrations.RemoveField(model_name="storagearray", name="certificate_sha256"),
    ]
