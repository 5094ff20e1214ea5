"""One pinned certificate per controller (each E-series controller has its own self-signed
one). An array's single pin moves to both controllers; a list of two (one per controller, as
the sensor step recorded them) to A and B in order. Back again: the pins as a list."""

from __future__ import annotations

from django.db import migrations, models

import portal.inventory.models


def pins_of(pinned: str) -> tuple[str, str]:
    """(A's pin, B's pin) of an array's single pin: one fingerprint to both, two in order."""
    words = pinned.split()
    if not words:
        return "", ""
    return words[0], words[1] if len(words) > 1 else words[0]


def to_controllers(apps, schema_editor) -> None:
    StorageArray = apps.get_model("inventory", "StorageArray")
    for array in StorageArray.objects.exclude(certificate_sha256=""):
        array.certificate_a_sha256, array.certificate_b_sha256 = pins_of(array.certificate_sha256)
        array.save(update_fields=["certificate_a_sha256", "certificate_b_sha256"])


def older_row(fields: dict) -> None:
    """An array's row of an archive made before this migration, as ``restore`` reads it: its
    pin moved the same way, before the row is loaded."""
    a, b = pins_of(fields.pop("certificate_sha256", ""))
    fields.setdefault("certificate_a_sha256", a)
    fields.setdefault("certificate_b_sha256", b)


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
