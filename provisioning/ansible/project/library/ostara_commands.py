"""An ansible module: run a list of argv lists in order on the host, without a shell, in one
round trip; stop at the first that fails.

A console act on a pair is a few dozen `crm_resource` calls (a cleanup and a move per target);
as a loop of `command` tasks each one is a module sent to the server and started there (about a
second each over SSH, or on a loaded management server), and the operator waits half a minute
before Pacemaker even starts moving targets. Here they are one task: each argv is executed as it
is (Python's subprocess, no shell, nothing parsed), in order, and the first non-zero exit fails
the task naming the command and its stderr. The playbook checks the argv lists before this runs
(cluster.yml: Pacemaker's tools only, no name that reads as an option).

Options: ``argvs`` (list of lists of strings). Returns ``results``: per command run, its
``argv``, ``rc``, ``stdout`` and ``stderr``; ``changed`` when at least one ran.

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
"""


def main() -> None:
    module = AnsibleModule(
        argument_spec={"argvs": {"type": "list", "elements": "list", "required": True}},
        supports_check_mode=False,
    )
    results = []
    for argv in module.params["argvs"]:
        words = [str(word) for word in argv]
        if not words:
            module.fail_json(msg="an empty command", results=results, changed=bool(results))
        rc, stdout, stderr = module.run_command(words, check_rc=False)
        results.append({"argv": words, "rc": rc, "stdout": stdout, "stderr": stderr})
        if rc != 0:
            module.fail_json(
                msg=f"{' '.join(words)} exited with {rc}: {stderr.strip() or stdout.strip()}",
                results=results,
                changed=len(results) > 1,
            )
    module.exit_json(changed=bool(results), results=results)


if __name__ == "__main__":
    main()
