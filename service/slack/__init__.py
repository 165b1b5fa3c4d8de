"""Slack slash command: grammar, signature check, Block Kit messages, the blueprint and its task."""
