"""Provisioning server pairs: the job kind that builds planned pairs on the hosts and arrays.

One step per playbook of provisioning/ansible, each idempotent, so a retry or a re-run of a
finished job checks the hosts and changes nothing that is already as planned. The playbook
variables (plans, Pacemaker CIBs, array layouts, fence secrets) are worked out once per run of a
job and shared by its steps, from the inventory's rows as they are then (``pair_plan``). What
the playbooks find (volume group states from the arrays, where Pacemaker placed each target) is
recorded in the inventory by ``record_observations``.

The wizard and ``manage.py provision`` both start a job through ``start_provisioning``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction

from portal.inventory.models import ServerPair, StorageArray, Target
from portal.inventory.services import (
    ArrayAccessError,
    RowsDisagree,
    ansible_inventory,
    authkey_name,
    pair_authkey,
    pair_plan,
    pin_certificates,
    record_observations,
    rest_arrays,
    save_plans,
    take_from_virtual_rack,
)
from portal.inventory.services.arrays import (
    CONFIG_FILE,
    CollectorFiles,
    collector_dir,
    collector_files,
    password_secret,
)
from portal.jobs.choices import JobState, Mark
from portal.jobs.models import Job
from portal.jobs.registry import StepFailed, StepSpec, register
from portal.jobs.services import create_job, enqueue, marks_for
from portal.jobs.worker import StepRun
from provisioning.ha import HAConfigError, build_cib, first_push
from provisioning.ha.cluster import pdu_status_commands
from provisioning.ha.corosync import playbook_cluster
from provisioning.ha.plan import read_plan
from provisioning.playbook_vars import (
    FENCE_SECRET_SCRIPT,
    SENSOR_SOURCE,
    array_layout,
    target_list,
)
from provisioning.runner import run_playbook
from sensors.config import COLLECTORS

KIND = "provision_pair"
# After a built pair's fence devices changed: push its cluster configuration and point the
# partner's sensor at the new BMC, nothing else (no array, format or acceptance survey).
FENCING_KIND = "apply_fencing"
FENCING_STEPS = ("ha", "sensor", "verify")
# After an array's collector settings changed (addresses, monitor account, a cleared pin): the
# sensor step again, which moves the array between the REST collector and SMcli.
ARRAYS_KIND = "apply_array_collector"
ARRAYS_STEPS = ("sensor",)


@dataclass
class ProvisioningContext:
    """What every step of one run shares: the pairs (MDS pair first) and their variables."""

    pairs: list[ServerPair]
    inventory: dict
    variables: dict
    # Secret file name -> content, handed to the runner as files, never as variables.
    secrets: dict[str, str | bytes]

    @classmethod
    def for_job(cls, job: Job) -> ProvisioningContext:
        # The MDS pair (and its MGS) before the OSS pairs: "mds" sorts before "oss".
        pairs = list(job.pairs.select_related("filesystem").order_by("kind", "name"))
        if not pairs:
            raise StepFailed("this job has no server pairs to provision")
        try:
            variables = playbook_variables(pairs)
        except (RowsDisagree, HAConfigError) as error:
            # The inventory cannot be built as it stands: the reason, not a traceback.
            raise StepFailed(str(error)) from None
        return cls(
            pairs=pairs,
            inventory=ansible_inventory(pairs, settings.VIRTUAL_RACK),
            variables=variables,
            secrets={**fence_secrets(pairs), **cluster_keys(pairs)},
        )


def run_playbook_step(run: StepRun) -> None:
    """A provisioning step: run the playbook named like the step against the job's pairs."""
    context: ProvisioningContext = run.context
    console = run.console
    console.say(f"running {run.step.name}.yml on {', '.join(p.name for p in context.pairs)}")
    result = run_playbook(
        f"{run.step.name}.yml",
        context.inventory,
        context.variables,
        work_dir=settings.ANSIBLE_WORK_DIR,
        on_output=console.write,
        cancel=None,
        secrets=context.secrets,
    )
    console.say(result.summary())
    if not result.succeeded:
        raise StepFailed(result.summary())
    changed = record_observations(
        placements=_placements(context.pairs, result.facts),
        group_states=_group_states(result.facts),
    )
    if changed:
        console.say(f"recorded what the rack reports in the inventory ({changed} changed)")


def run_sensor_step(run: StepRun) -> None:
    """The sensor step: the arrays' REST collector on this management server first (their
    certificates pinned or checked), then the servers' sensors, which stop reading through
    SMcli the arrays the collector now reads. Re-running it moves an existing appliance."""
    console = run.console
    if changed := take_from_virtual_rack(settings.VIRTUAL_RACK):
        console.say(f"virtual rack: management addresses of {', '.join(changed)} from rack.json")
    arrays = rest_arrays()
    try:
        pin_certificates(arrays, console.say)
        files = collector_files(arrays, collector_dir())
    except ArrayAccessError as error:
        raise StepFailed(str(error)) from None
    console.say(
        f"the array collector reads {', '.join(a.name for a in arrays)}"
        if arrays
        else "no array has management addresses: the servers read the arrays through SMcli"
    )
    if arrays or (collector_dir() / CONFIG_FILE).exists():
        _run_collector_play(run, arrays, files)
    # The servers' variables were worked out before this step took addresses: again, now.
    run.context.variables.update(server_array_variables(run.context.pairs))
    run_playbook_step(run)


def _run_collector_play(run: StepRun, arrays: list[StorageArray], files: CollectorFiles) -> None:
    """collector.yml: write the collector's files, or remove them when it reads nothing (the
    collector follows them by itself; on a virtual rack the play also starts it). Each array's
    monitor password is a secret file of the run, copied to its password file."""
    console = run.console
    result = run_playbook(
        "collector.yml",
        {"all": {"hosts": {"localhost": _management_server()}}},
        {
            "ostara_collector_enabled": bool(arrays),
            "ostara_collector_dir": str(collector_dir()),
            "ostara_collector_config": files.config,
            "ostara_collector_arrays": [a.name for a in arrays],
            "ostara_virtual": settings.VIRTUAL_RACK is not None,
            "ostara_sensor_source": str(SENSOR_SOURCE),
        },
        work_dir=settings.ANSIBLE_WORK_DIR,
        on_output=console.write,
        cancel=None,
        secrets={password_secret(name): text for name, text in files.passwords.items()},
    )
    console.say(result.summary())
    if not result.succeeded:
        raise StepFailed(result.summary())


def _management_server() -> dict:
    return {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}


def server_array_variables(pairs: list[ServerPair]) -> dict:
    """Which arrays each pair's servers still read through SMcli (those without management
    addresses), and what the servers collect when they read none: all but the arrays."""
    rest = set(
        StorageArray.objects.filter(pair__in=pairs)
        .exclude(management_a="")
        .values_list("name", flat=True)
    )
    return {
        "ostara_smcli_arrays": {
            pair.name: [a.name for a in pair.arrays.order_by("name") if a.name not in rest]
            for pair in pairs
        },
        "ostara_server_collectors": [c for c in COLLECTORS if c not in ("array", "santricity")],
    }


def _placements(pairs: list[ServerPair], facts: dict[str, dict]) -> dict[str, str | None]:
    """Label -> host of every target of the pairs, when the playbook said where they run."""
    placed = {
        target["label"]: host
        for host, host_facts in facts.items()
        for target in host_facts.get("placed_here", [])
    }
    if not any("placed_here" in host_facts for host_facts in facts.values()):
        return {}
    labels = Target.objects.filter(volume_group__array__pair__in=pairs).values_list(
        "label", flat=True
    )
    return {label: placed.get(label) for label in labels}


def _group_states(facts: dict[str, dict]) -> dict[tuple[str, str], str]:
    """(array, volume group) -> state, as array.yml read them from the arrays."""
    return {
        (array, group): state
        for host_facts in facts.values()
        for array, groups in (host_facts.get("array_group_states") or {}).items()
        for group, state in groups
    }


def fence_user(pair: ServerPair) -> dict | None:
    """The BMC user the pair's IPMI fence devices log in as (one per cluster, as in the CIB).

    The servers step asks for a user per server; when they differ, the first server's is used
    and the other must accept it (the recipe has one fence user per pair).
    """
    users = [s.bmc_username for s in pair.servers.order_by("hostname") if s.bmc_username]
    return {"ipmi_username": users[0]} if users else None


def playbook_variables(pairs: list[ServerPair]) -> dict:
    """What the playbooks need beyond the inventory: each pair's plan and cluster
    configuration and the MGS NIDs. No secret: those are ``fence_secrets`` and
    ``cluster_keys``."""
    variables: dict = {
        "ostara_plans": {},
        # Pair -> its corosync.conf, the cluster's name and its nodes (corosync.yml).
        "ostara_corosync": {},
        "ostara_cibs": {},
        # Pair -> the same with its targets unmanaged, for a cluster that runs none yet (ha.yml).
        "ostara_first_cibs": {},
        "ostara_layouts": {},
        "ostara_targets": {},
        # Hostname -> the PDU fence agent's status of its outlet, for its partner's sensor.
        "ostara_pdu_status": {},
        "ostara_fence_secret_script": str(FENCE_SECRET_SCRIPT),
        "ostara_sensor_source": str(SENSOR_SOURCE),
        "ostara_sensor_interval": settings.OSTARA_SENSOR_INTERVAL,
        "ostara_bmc_interval": settings.OSTARA_BMC_INTERVAL,
        "ostara_partner_interval": settings.OSTARA_PARTNER_INTERVAL,
        "ostara_array_interval": settings.OSTARA_ARRAY_INTERVAL,
        "ostara_multipath_interval": settings.OSTARA_MULTIPATH_INTERVAL,
        "ostara_cluster_interval": settings.OSTARA_CLUSTER_INTERVAL,
        "ostara_lnet_interval": settings.OSTARA_LNET_INTERVAL,
        "ostara_influxdb_url": settings.OSTARA_SENSOR_INFLUXDB_URL,
        "ostara_influxdb_database": settings.INFLUXDB_DATABASE,
        "ostara_smcli": str(settings.VIRTUAL_RACK / "bin" / "SMcli")
        if settings.VIRTUAL_RACK
        else "SMcli",
    }
    variables.update(server_array_variables(pairs))
    for pair in pairs:
        plan = pair_plan(pair)  # the rows as they are now, never the record alone
        variables["ostara_plans"][pair.name] = plan
        variables["ostara_corosync"][pair.name] = playbook_cluster(plan)
        variables["ostara_cibs"][pair.name] = build_cib(plan, fence_user(pair))
        variables["ostara_first_cibs"][pair.name] = first_push(variables["ostara_cibs"][pair.name])
        variables["ostara_pdu_status"].update(
            pdu_status_commands(read_plan(plan), fence_user(pair))
        )
        variables["ostara_layouts"][pair.name] = array_layout(plan)
        variables["ostara_targets"][pair.name] = target_list(plan, pair.filesystem.mgs_nids)
    return variables


def fence_secrets(pairs: list[ServerPair]) -> dict[str, str]:
    """The files ha.yml copies verbatim to /etc/ostara/fence on both servers of each pair:
    ``bmc-<host>`` holds that server's BMC password and a newline (the fence-secret helper
    prints its first line). The runner keeps them in a 0600 file for the run only."""
    return {
        f"bmc-{server.hostname}": server.bmc_password + "\n"
        for pair in pairs
        for server in pair.servers.all()
        if server.bmc_password_encrypted
    }


def cluster_keys(pairs: list[ServerPair]) -> dict[str, bytes]:
    """The file corosync.yml copies to /etc/corosync/authkey on both servers of each pair:
    ``corosync-authkey-<pair>``, made once per pair and kept on the appliance."""
    return {authkey_name(pair.name): pair_authkey(pair.name) for pair in pairs}


def start_provisioning(
    specs: list[dict],
    credentials: dict[str, tuple[str, str]] | None = None,
    user=None,
    params: dict | None = None,
    monitor_credentials: dict[str, tuple[str, str]] | None = None,
) -> Job:
    """Save the specs' pairs and start the job that builds them; all or nothing.

    ``credentials`` maps a hostname to its BMC (user, password), ``monitor_credentials`` an
    array to its monitor account. Raises the planner's or the inventory's ``SpecError``
    (naming each field) and saves nothing when a spec is refused.
    """
    with transaction.atomic():
        pairs = save_plans(specs, credentials, monitor_credentials)
        names = " and ".join(pair.name for pair in pairs)
        job = create_job(
            KIND,
            f"Provision {names} of {pairs[0].filesystem.name}",
            pairs=pairs,
            user=user,
            params=params,
            marks=building(pairs),
        )
        enqueue(job)
    return job


# The job's own steps. Apps above this one append theirs with ``add_provisioning_step`` (the
# surveys app adds the acceptance survey), so this app imports none of them.
STEPS: list[StepSpec] = [
    StepSpec(
        "preflight",
        "Preflight: hosts, Lustre tools, NIDs, arrays and drives as planned",
        run_playbook_step,
    ),
    StepSpec(
        "array", "Create volume groups, volumes and hot spares on the arrays", run_playbook_step
    ),
    StepSpec("lnet", "Configure and start LNet", run_playbook_step),
    StepSpec(
        "format", "Format the targets (mkfs.lustre with both service nodes)", run_playbook_step
    ),
    StepSpec("mount", "Mount each target on its primary server", run_playbook_step),
    StepSpec(
        "corosync",
        "Set up the Corosync cluster (two heartbeat links) and start Pacemaker",
        run_playbook_step,
    ),
    StepSpec(
        "ha",
        "Push the Pacemaker configuration with fencing and wait for the targets",
        run_playbook_step,
    ),
    StepSpec(
        "sensor",
        "Install, configure and start the Ostara sensor on every server and the array "
        "collector on this management server",
        run_sensor_step,
    ),
    StepSpec(
        "verify", "Verify: mounted where Pacemaker says, registered, healthy", run_playbook_step
    ),
]


def built(pair: ServerPair) -> bool:
    return Job.objects.filter(kind=KIND, pairs=pair, state=JobState.SUCCEEDED).exists()


def building(pairs: list[ServerPair]) -> dict[str, str]:
    """The job's marks: a pair never built is being built (grey, its sensors not yet heard);
    a built one provisioned again has its targets moved, stopped and started."""
    found: dict[str, str] = {}
    for pair in pairs:
        found.update(marks_for(Mark.MOVES if built(pair) else Mark.BUILDS, pair))
    return found


def start_fencing_update(pair: ServerPair, user=None) -> Job | None:
    """The job that applies a change of the pair's fence devices to its running cluster, or
    None when the pair has not been built yet (its provisioning job applies them when it runs).

    Until it has run, the cluster fences through the devices it had: an administrator who
    changed a BMC address must not be left with a cluster that fences the old one.
    """
    if not built(pair):
        return None
    title = f"Apply the fence devices of {pair.name}"
    # Its Pacemaker configuration is pushed again and its sensors restarted.
    job = create_job(
        FENCING_KIND, title, pairs=[pair], user=user, marks=marks_for(Mark.MOVES, pair)
    )
    enqueue(job)
    return job


def start_array_collector_update(pair: ServerPair, user=None) -> Job | None:
    """The job that applies a change of how the collector reaches the pair's arrays, or None
    when the pair has not been built yet (its provisioning job's sensor step applies it)."""
    if not built(pair):
        return None
    title = f"Apply the array collector of {pair.name}"
    job = create_job(ARRAYS_KIND, title, pairs=[pair], user=user)
    enqueue(job)
    return job


def _register() -> None:
    register(KIND, "Provision server pairs", STEPS, context=ProvisioningContext.for_job)
    register(
        FENCING_KIND,
        "Apply fence devices",
        [step for step in STEPS if step.name in FENCING_STEPS],
        context=ProvisioningContext.for_job,
    )
    register(
        ARRAYS_KIND,
        "Apply the array collector",
        [step for step in STEPS if step.name in ARRAYS_STEPS],
        context=ProvisioningContext.for_job,
    )


def add_provisioning_step(step: StepSpec) -> None:
    """Run ``step`` after the provisioning job's own steps (replacing a step of its name, so a
    module imported again does not add it twice)."""
    STEPS[:] = [existing for existing in STEPS if existing.name != step.name] + [step]
    _register()


_register()
