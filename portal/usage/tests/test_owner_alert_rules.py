"""The alert rules on owners' usage, against the hand-written accounting of ``conftest``:
"an owner above N % of their limit" and "an owner's growth reaches their limit within D
days" fire once per owner, not once per round, and the rule form refuses a bad threshold."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from portal.alerts.choices import ConditionKind, EventStatus, GroupMailKind, TransitionKind
from portal.alerts.forms import RuleForm
from portal.alerts.models import Delivery, Event, Rule, Transition
from portal.usage import choices
from portal.usage.models import OwnerName

pytestmark = [pytest.mark.services, pytest.mark.django_db]


@pytest.fixture
def rules(accounting, monkeypatch):
    Rule.objects.all().delete()  # only the rules of each test
    # Each test reads its own points: no reading kept from another test's rounds.
    monkeypatch.setattr(choices, "ALERT_REUSE_SECONDS", 0)
    OwnerName.objects.create(kind="user", number=1003, name="dave", source="upload")
    above = Rule.objects.create(
        name="Owner near the limit",
        condition=ConditionKind.QUOTA,
        threshold=80,
        extra_addresses="ops@example.org",
    )
    soon = Rule.objects.create(
        name="Owner reaches the limit soon",
        condition=ConditionKind.QUOTA_DAYS,
        threshold=2,
        extra_addresses="ops@example.org",
    )
    return above, soon


def fired(rule: Rule) -> list[str]:
    return sorted(
        Transition.objects.filter(event__rule=rule, kind=TransitionKind.FIRING).values_list(
            "event__object_label", flat=True
        )
    )


def test_each_owner_fires_once_whatever_the_rounds(rules, settings, smtp):
    from portal.alerts.services.evaluation import evaluate_round
    from portal.alerts.services.outbox import deliver_due

    settings.OSTARA_ALERT_GROUP_WAIT = 0

    above, soon = rules
    now = timezone.now()
    for seconds in (0, 10, 20):  # three rounds: the owners' events fire in the first only
        evaluate_round(now + timedelta(seconds=seconds))
        deliver_due(now + timedelta(seconds=seconds))
    # dave: 5 GiB (and 4 MiB on the MDT) of a 6 GiB hard limit; carol 75 %, alice 21 %: below 80.
    assert fired(above) == ["user dave (1003) on scratch"]
    # alice reaches 1 TiB in about 16 hours at 100 GiB in two hours, carol 40 GiB in two;
    # dave and bob do not grow.
    assert fired(soon) == ["user 1000 on scratch", "user 1002 on scratch"]
    assert Event.objects.filter(status=EventStatus.FIRING).count() == 3
    summary = Event.objects.get(rule=above).summary
    assert summary == "user dave (1003) on scratch: 83.4 % of its space limit"
    carol = Event.objects.get(rule=soon, fingerprint="owner:scratch:user:1002").summary
    assert "reaches its space limit on " in carol
    # Three firings in all, no reminder, whatever the rounds; one mail each, through the
    # outbox every alert mail takes (an owner is its own incident).
    assert Transition.objects.filter(event__rule__in=rules).count() == 3
    mails = Delivery.objects.filter(group_mail__kind=GroupMailKind.FIRING)
    assert sorted(mails.values_list("group_mail__group__label", flat=True)) == [
        "user 1000 on scratch",
        "user 1002 on scratch",
        "user dave (1003) on scratch",
    ]
    assert set(mails.values_list("address", flat=True)) == {"ops@example.org"}
    subjects = smtp.mailbox.subjects()
    assert len(subjects) == 3
    assert any("user dave (1003) on scratch" in subject for subject in subjects)


def test_a_higher_threshold_or_fewer_days_fire_for_nobody(rules):
    from portal.alerts.services.evaluation import evaluate_round

    above, soon = rules
    Rule.objects.filter(pk=above.pk).update(threshold=90)
    Rule.objects.filter(pk=soon.pk).update(threshold=0.01)  # 15 minutes
    evaluate_round(timezone.now())
    assert fired(above) == []
    assert fired(soon) == []


def rule_form(**fields) -> RuleForm:
    values = {
        "name": "Owner rule",
        "severity": "warning",
        "enabled": "on",
        "scope": "all",
        "for_seconds": "0",
        "clear_seconds": "0",
        "repeat_seconds": "0",
        **fields,
    }
    return RuleForm(values)


@pytest.mark.parametrize(
    ("condition", "threshold", "said"),
    [
        (ConditionKind.QUOTA, "", "give the percent of the limit, more than 0"),
        (ConditionKind.QUOTA, "-5", "give the percent of the limit, more than 0"),
        (
            ConditionKind.QUOTA_DAYS,
            "0",
            "give the days before the limit, more than 0 and at most 366",
        ),
        (
            ConditionKind.QUOTA_DAYS,
            "400",
            "give the days before the limit, more than 0 and at most 366",
        ),
    ],
)
def test_the_rule_form_refuses_a_bad_threshold(condition, threshold, said):
    form = rule_form(condition=condition, threshold=threshold)
    assert not form.is_valid()
    assert form.errors["threshold"] == [said]


def test_the_rule_form_takes_an_owner_rule():
    form = rule_form(condition=ConditionKind.QUOTA, threshold="90", measurement="ost")
    assert form.is_valid(), form.errors
    rule = form.save()
    assert (rule.condition, rule.threshold, rule.measurement) == (ConditionKind.QUOTA, 90, "")
