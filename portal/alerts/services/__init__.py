"""Work of the alerts app across objects: ``outbox`` sends alert mail, ``mail_settings`` serves
the Settings → Mail page, ``relay`` checks the mail relay for the dashboard and /healthz."""
