"""An ansible module: run a list of argv lists in order on the host, without a shell, in one
round trip; stop at the first that fails.

A console act on a pair is a few dozen `crm_resource` calls (a cleanup and a move per target);
as a loop of `command` tasks each one is a module sent to the server and started there (about a
second each over SSH, or on a loaded management server), and the operator waits half a minute
before Pacemaker even starts moving targets. Here they are one task: each argv is executed as it
is (Python's subprocess, no shell, nothing parsed), in order, and the first non-zero exit fails
the task naming the command and its stderr. The playbook checks the argv lists before this runs
(cluster.yml: Pacemaker's tools only, no name that reads as an option).

The provisioning playbooks send a server's per-target commands the same way (a read of each
device, the mkfs.lustre of those not formatted, the first mounts): a dozen targets a server
were a dozen round trips per loop.

Options: ``argvs`` (list of lists of strings); ``reads`` (boolean, default false): the commands
only read, so every one runs whatever its exit status, the task never fails on one and never
reports a change (the playbook judges each ``rc``). Returns ``results``: per command run, its
``argv``, ``rc``, ``stdout`` and ``stderr``; ``changed`` when at least one ran (never for
reads).

It runs on the servers' own Python (RHEL 8's platform-python is 3.6): no newer syntax here."""

from ansible.module_utils.basic import AnsibleModule

DOCUMENTATION = r"""
module: ostara_commands
short_description: Run argv lists in order, without a shell, stopping at the first failure.
options:
  argvs:
    description: The commands, each a list of its program and arguments.
    type: list
    elements: list
    required: true
  reads:
    description: The commands only read; run them all, report each exit status, change nothing.
    type: bool
    default: false
"""


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "argvs": {"type": "list", "elements": "list", "required": True},
            "reads": {"type": "bool", "default": False},
        },
        supports_check_mode=False,
    )
    reads = module.params["reads"]
    results = []
    for argv in module.params["argvs"]:
        words = [str(word) for word in argv]
        if not words:
            module.fail_json(
                msg="an empty command", results=results, changed=bool(results) and not reads
            )
        rc, stdout, stderr = module.run_command(words, check_rc=False)
        results.append({"argv": words, "rc": rc, "stdout": stdout, "stderr": stderr})
        if rc != 0 and not reads:
            module.fail_json(
                msg=f"{' '.join(words)} exited with {rc}: {stderr.strip() or stdout.strip()}",
                results=results,
                changed=len(results) > 1,
            )
    module.exit_json(changed=bool(results) and not reads, results=results)


if __name__ == "__main__":
    main()
