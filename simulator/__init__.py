"""The virtual rack: Lustre servers and E-series-style arrays imitated at the operating-system
interface (files under /proc and /sys, commands with the real names), so that the sensors, the
playbooks and the portal run on it unchanged."""
