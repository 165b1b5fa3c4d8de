"""Schemas of the service's own envelopes (jobs, health); the job spec and result schemas live in workers/schemas/ (both sides of the queue)."""
