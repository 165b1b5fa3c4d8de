"""The Celery side: the app's settings, every task, the job registry, queues, outage waiting, the lost-job sweep."""
