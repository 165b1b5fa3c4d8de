"""Slack answers made by the worker: Block Kit messages, the server-side job store, delivery to response_url."""
