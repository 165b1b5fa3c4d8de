"""Entry point for the `celery` command: `celery -A service.make_celery:celery_app inspect ping`."""

from service.app import create_app

flask_app = create_app()
celery_app = flask_app.extensions["celery"]
