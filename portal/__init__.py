"""The Ostara portal: the Django project and its apps."""

# Load the Celery app with Django, so that tasks sent from the portal go to its broker.
from workers.celery_app import app as celery_app  # noqa: E402

__all__ = ["celery_app"]
