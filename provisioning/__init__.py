"""Provisioning: the SSU layout planner, the Pacemaker configuration builder, the ansible
project and the ansible-runner driver. Plain Python; imports nothing from the portal."""
