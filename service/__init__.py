"""The faces of gpugauge: the HTTP API, the CLI and the Slack command; thin over the core."""
