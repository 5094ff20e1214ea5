"""Users and groups are managed through Django's own admin pages."""
