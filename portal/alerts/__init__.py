"""Alerts: rules, events, silences and the mail they send (DESIGN.md §8)."""
