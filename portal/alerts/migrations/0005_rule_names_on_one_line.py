"""Rule names saved before control characters were refused: each run of them becomes one space,
so their mail can be written again (a name taken already gets a number)."""

import unicodedata

from django.db import migrations

from provisioning.names import CONTROL_CATEGORIES

NAME_LENGTH = 100


def has_control_characters(name: str) -> bool:
    return any(unicodedata.category(c) in CONTROL_CATEGORIES for c in name)


def one_line(name: str) -> str:
    spaced = "".join(" " if unicodedata.category(c) in CONTROL_CATEGORIES else c for c in name)
    return " ".join(spaced.split())


def rule_names_on_one_line(apps, schema_editor):
    Rule = apps.get_model("alerts", "Rule")
    taken = set(Rule.objects.values_list("name", flat=True))
    for rule in Rule.objects.order_by("pk"):
        if not has_control_characters(rule.name):
            continue
        name, number = one_line(rule.name) or f"Rule {rule.pk}", 1
        candidate = name[:NAME_LENGTH]
        while candidate in taken:
            number += 1
            suffix = f" ({number})"
            candidate = name[: NAME_LENGTH - len(suffix)] + suffix
        taken.discard(rule.name)
        taken.add(candidate)
        rule.name = candidate
        rule.save(update_fields=["name"])


class Migration(migrations.Migration):
    dependencies = [
        ("alerts", "0004_refuse_control_characters_in_mail_headers"),
    ]

    operations = [
        migrations.RunPython(rule_names_on_one_line, migrations.RunPython.noop),
    ]
