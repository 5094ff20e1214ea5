"""Pages of the alerts app: the alert console (the incidents that fire, each with its alerts;
rules with their backtest, silences, history), an incident with the mail it sent, the mail
settings with a test mail and, in the demo, the mail the appliance sent. Views look things
up, call a service and render; operators change rules, acknowledge and silence, viewers
read."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from django import forms
from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import Count, Prefetch, Q
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.clickjacking import xframe_options_sameorigin
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from portal.accounts.choices import Role
from portal.accounts.models import Preferences
from portal.accounts.services import has_role
from portal.alerts import mail as mail_transport
from portal.alerts.choices import EventStatus, Severity
from portal.alerts.forms import (
    AcknowledgeForm,
    BacktestForm,
    HistoryFilter,
    MailRelayForm,
    RuleForm,
    SilenceForm,
)
from portal.alerts.models import (
    Delivery,
    Event,
    IncidentGroup,
    MailRelaySettings,
    Rule,
    Silence,
    Transition,
)
from portal.alerts.services.backtest import backtest
from portal.alerts.services.evaluation import acknowledge, active_events, first_events, retire
from portal.alerts.services.incidents import (
    acknowledge_group,
    active_incidents,
    incident,
    mail_state,
)
from portal.alerts.services.mail_settings import caught_mail, send_test_mail
from portal.alerts.services.relay import check_mail
from portal.single_row.page import single_row_settings

CONSOLE_TABS = (
    ("Active", "alerts:active"),
    ("Rules", "alerts:rules"),
    ("Silences", "alerts:silences"),
    ("History", "alerts:history"),
)


def _operator(request) -> bool:
    return has_role(request.user, Role.OPERATOR)


def _require_operator(request) -> None:
    if not _operator(request):
        raise PermissionDenied("only operators and administrators change alerts")


def _console(request, template: str, context: dict):
    context.update(can_edit=_operator(request), console_tabs=CONSOLE_TABS)
    return render(request, template, context)


# --- active alerts ----------------------------------------------------------------------------


@require_http_methods(["GET", "HEAD", "POST"])
def active(request):
    """What fires now, critical first, with acknowledge; and the user's own mail preference."""
    preferences, _ = Preferences.objects.get_or_create(user=request.user)
    if request.method == "POST":
        preferences.alert_warnings = request.POST.get("alert_warnings") == "on"
        preferences.save(update_fields=["alert_warnings"])
        messages.success(
            request,
            "Warnings are mailed to you."
            if preferences.alert_warnings
            else "Only critical alerts are mailed to you now.",
        )
        return redirect("alerts:active")
    pending = Event.objects.filter(status=EventStatus.PENDING).select_related("rule")
    # The fact the dashboard's mail tile shows: here is where an administrator looks for mail.
    relay = check_mail()
    incidents = active_incidents()
    for group in incidents:
        group.members = members_as_shown(group)
    return _console(
        request,
        "alerts/active.html",
        {
            "incidents": incidents,
            # Events that fired before alerts were grouped belong to no incident.
            "ungrouped": [event for event in active_events() if event.group_id is None],
            "pending": pending,
            "preferences": preferences,
            "acknowledge_form": AcknowledgeForm(),
            "relay": relay,
            "own_address_url": _own_address_url(request.user),
        },
    )


def _own_address_url(user) -> str | None:
    """Where this user sets their own mail address: their user page in the admin, for those
    who may change users; others ask an administrator."""
    if user.is_staff and user.has_perm("auth.change_user"):
        return reverse("admin:auth_user_change", args=[user.pk])
    return None


# The panel shows this many firing alerts, critical and newest first, and counts the rest: a
# rack with thousands firing (a lost array) would otherwise render a table of thousands on
# every dashboard refresh. The alert console lists them all.
PANEL_EVENTS = 25


@require_safe
def panel(request):
    """The firing alerts of one object and everything in it (``?key=ssu:3``), or of the whole
    rack: the panel the dashboard and the object pages load."""
    key = request.GET.get("key", "")
    events, firing = first_events(under=key, limit=PANEL_EVENTS)
    return render(
        request,
        "alerts/_panel.html",
        {
            "events": events,
            "firing": firing,
            "more": firing - len(events),
            "key": key,
            "can_edit": _operator(request),
            "next_url": request.headers.get("HX-Current-URL", "/"),
        },
    )


@require_POST
def acknowledge_event(request, pk: int):
    _require_operator(request)
    event = get_object_or_404(Event, pk=pk)

    def act(comment: str) -> str:
        acknowledge(event, request.user, comment)
        return "acknowledged, no more reminders."

    return _acknowledged(request, event.object_label, act)


def _acknowledged(request, label: str, act) -> HttpResponse:
    """Run ``act(comment)`` with the form's comment; say what it did (or why not) and go back
    to the page the form was on."""
    form = AcknowledgeForm(request.POST)
    if form.is_valid():
        try:
            done = act(form.cleaned_data["comment"])
        except ValueError as error:
            messages.error(request, f"{label}: {error}")
        else:
            messages.success(request, f"{label}: {done}")
    else:
        messages.error(request, f"comment: {' '.join(form.errors['comment'])}")
    return redirect(_back(request))


def members_as_shown(group: IncidentGroup) -> list[Event]:
    """The group's alerts as its mail lists them: the causes first (not muted, critical first,
    earliest first), the muted after them; each with ``muted``, why it is muted ("" if not)."""
    told = (group.state or {}).get("members", {})
    members = list(group.events.all())
    for event in members:
        event.muted = (
            told.get(str(event.pk), {}).get("muted", "")
            if event.status == EventStatus.FIRING
            else ""
        )
    return sorted(
        members,
        key=lambda e: (bool(e.muted), e.severity != Severity.CRITICAL, e.opened, e.pk),
    )


@require_safe
def incident_detail(request, pk: int):
    """One incident: its alerts, linked to their objects and events, and every mail it sent."""
    try:
        group = incident(pk)
    except IncidentGroup.DoesNotExist:
        raise Http404("no such incident") from None
    group.members = members_as_shown(group)
    return _console(
        request,
        "alerts/incident.html",
        {"group": group, "acknowledge_form": AcknowledgeForm(), "group_mail": mail_state(group)},
    )


@require_POST
def acknowledge_incident(request, pk: int):
    """Acknowledge the incident and each of its firing alerts: no more reminders."""
    _require_operator(request)
    group = get_object_or_404(IncidentGroup, pk=pk)

    def act(comment: str) -> str:
        count = acknowledge_group(group, request.user, comment)
        return f"acknowledged with its {count} firing alert{pluralize(count)}, no more reminders."

    return _acknowledged(request, group.label, act)


def _back(request) -> str:
    """Where a form posted from a page goes back to: that page, or the Alerts page."""
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(back, {request.get_host()}):
        back = reverse("alerts:active")
    return back


@require_safe
def event_detail(request, pk: int):
    event = get_object_or_404(
        Event.objects.select_related("rule", "acknowledged_by", "group").prefetch_related(
            Prefetch(
                "transitions",
                queryset=Transition.objects.prefetch_related(
                    Prefetch("deliveries", queryset=Delivery.objects.order_by("pk"))
                ),
            )
        ),
        pk=pk,
    )
    return _console(
        request,
        "alerts/event.html",
        {
            "event": event,
            "acknowledge_form": AcknowledgeForm(),
            "group_mail": mail_state(event.group) if event.group else "",
        },
    )


# --- rules --------------------------------------------------------------------------------------


@require_safe
def rules(request):
    rows = (
        Rule.objects.prefetch_related("recipients")
        .annotate(firing=Count("events", filter=Q(events__status=EventStatus.FIRING)))
        .order_by("-enabled", "name")
    )
    return _console(
        request,
        "alerts/rules.html",
        {"rules": rows, "can_send": has_role(request.user, Role.ADMIN)},
    )


@require_http_methods(["GET", "HEAD", "POST"])
def rule_edit(request, pk: int | None = None):
    """The rule form; "Backtest" shows what the rule as entered would have done, unsaved."""
    rule = get_object_or_404(Rule, pk=pk) if pk else None
    if request.method == "POST":
        _require_operator(request)
        form = RuleForm(request.POST, instance=rule)
        tried = BacktestForm(request.POST)
        result = None
        if form.is_valid():
            if "backtest" in request.POST:
                days = tried.cleaned_data["days"] if tried.is_valid() else 1
                result = backtest(form.save(commit=False), days)
            else:
                saved = form.save(commit=False)
                if saved.created_by_id is None:
                    saved.created_by = request.user
                saved.save()
                form.save_m2m()
                messages.success(request, f"Rule {saved.name!r} saved.")
                return redirect("alerts:rules")
        return _console(
            request,
            "alerts/rule_form.html",
            {"form": form, "rule": rule, "backtest_form": tried, "backtest": result},
        )
    form = RuleForm(instance=rule)
    if not _operator(request):
        for field in form.fields.values():
            field.disabled = True
    return _console(
        request,
        "alerts/rule_form.html",
        {"form": form, "rule": rule, "backtest_form": BacktestForm(), "backtest": None},
    )


@require_POST
def rule_delete(request, pk: int):
    _require_operator(request)
    rule = get_object_or_404(Rule, pk=pk)
    messages.success(request, f"Rule {rule.name!r} {retire(rule)}.")
    return redirect("alerts:rules")


# --- silences -----------------------------------------------------------------------------------


@require_http_methods(["GET", "HEAD", "POST"])
def silences(request):
    form = SilenceForm()
    if request.method == "POST":
        _require_operator(request)
        form = SilenceForm(request.POST)
        if form.is_valid():
            silence = form.save(commit=False)
            silence.created_by = request.user
            silence.save()
            messages.success(
                request, f"{silence.object_label} silenced until {silence.ends:%Y-%m-%d %H:%M}."
            )
            return redirect("alerts:silences")
    now = timezone.now()
    return _console(
        request,
        "alerts/silences.html",
        {
            "form": form,
            "current": Silence.objects.filter(ends__gt=now).select_related("created_by"),
            "past": Silence.objects.filter(ends__lte=now).select_related("created_by")[:20],
            "now": now,
        },
    )


@require_POST
def silence_end(request, pk: int):
    _require_operator(request)
    silence = get_object_or_404(Silence, pk=pk)
    now = timezone.now()
    if silence.ends > now:
        silence.ends = max(now, silence.starts + timedelta(microseconds=1))
        silence.save(update_fields=["ends"])
        messages.success(request, f"The silence of {silence.object_label} has ended.")
    return redirect("alerts:silences")


# --- history ------------------------------------------------------------------------------------


@require_safe
def history(request):
    form = HistoryFilter(request.GET or None)
    events = Event.objects.exclude(status=EventStatus.PENDING).select_related("rule", "group")
    if form.is_valid():
        data = form.cleaned_data
        if data["object"]:
            events = events.filter(object_label__icontains=data["object"])
        if data["rule"]:
            events = events.filter(rule=data["rule"])
        if data["severity"]:
            events = events.filter(severity=data["severity"])
        if data["since"]:
            events = events.filter(opened__gte=data["since"])
    page = Paginator(events.order_by("-opened", "-pk"), 50).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return _console(
        request,
        "alerts/history.html",
        {"form": form, "page": page, "query": query.urlencode()},
    )


# --- mail settings ------------------------------------------------------------------------------


class TestMailForm(forms.Form):
    address = forms.EmailField(label="Send a test mail to")


def _caught_dir() -> Path | None:
    return Path(settings.OSTARA_CAUGHT_MAIL_DIR) if settings.OSTARA_CAUGHT_MAIL_DIR else None


@require_http_methods(["GET", "HEAD", "POST"])
def mail_settings(request):
    """Every role sees how mail leaves the appliance; administrators set the mail relay
    (``mail_relay``) and send the test mail."""
    if request.method != "POST":
        return mail_relay(request)
    if not has_role(request.user, Role.ADMIN):
        raise PermissionDenied("only administrators send test mail")
    test_form = TestMailForm(request.POST)
    if test_form.is_valid():
        address = test_form.cleaned_data["address"]
        try:
            send_test_mail(address)
        except (ValueError, mail_transport.MailError) as error:
            test_form.add_error("address", str(error))
        else:
            messages.success(request, f"Test mail sent to {address}.")
            return redirect("alerts:mail")
    relay_form = MailRelayForm(instance=MailRelaySettings.current())
    return render(
        request,
        "alerts/mail.html",
        {"form": relay_form, "can_change": True, **_mail_page(request, test_form)},
    )


@require_http_methods(["GET", "HEAD", "POST"])
def mail_relay(request):
    """The mail relay form of the mail page (a settings row: administrators change it)."""
    return single_row_settings(
        request,
        MailRelayForm,
        MailRelaySettings.current(),
        template="alerts/mail.html",
        saved="Mail relay saved: mail goes through it from now on.",
        name="alerts:mail",
        context=lambda form: _mail_page(
            request, TestMailForm(initial={"address": request.user.email})
        ),
    )


def _mail_page(request, test_form) -> dict:
    caught = _caught_dir()
    return {
        "test_form": test_form,
        "caught": caught_mail(caught) if caught else None,
        "settings": settings,
    }


@require_safe
def caught_message(request, key: str):
    return render(request, "alerts/caught_message.html", {"message": _caught_message(key)})


# The mail's own HTML, framed by its page: styled inline as mail is, so under a policy of its own
# that allows that and nothing else (no script, no request anywhere, no same-origin access).
CAUGHT_HTML_POLICY = (
    "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'"
)


@require_safe
@xframe_options_sameorigin
def caught_message_html(request, key: str):
    response = HttpResponse(_caught_message(key).html, content_type="text/html; charset=utf-8")
    response["Content-Security-Policy"] = CAUGHT_HTML_POLICY
    return response


def _caught_message(key: str):
    caught = _caught_dir()
    message = next((m for m in caught_mail(caught) if m.key == key), None) if caught else None
    if message is None:
        raise Http404("no such message")
    return message
