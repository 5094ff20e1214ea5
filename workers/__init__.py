"""The Celery workers: the app lives in ``celery_app``; tasks live in each portal app's tasks.py."""
