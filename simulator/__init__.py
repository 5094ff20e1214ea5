"""The virtual rack: Lustre servers and E-series-style arrays imitated at the operating-system
interface (files under /proc and /sys, commands with the real names), so that the sensors, the
playbooks and the portal run on it unchanged.

Modules: `state` (the rack directory and its lock), `topology` (servers, arrays, volume groups,
targets), `operations` (what the commands change), `workload` (jobs, scenarios, counters),
`counters` (Lustre 2.15 text formats), `procfs` (each server's root tree), `quota` (who owns
the data, the quota master's limits), `kernel_log` (each server's dev/kmsg), `perf`
(performance model), `cluster` (Pacemaker through crm_simulate), `failures` (the failure matrix),
`provision` (fast build of a plan), `commands` (the virtual tools), `cli` (`python -m
simulator`); its benchmark is `python -m benchmarks.rack`. See simulator/README.md.
"""
