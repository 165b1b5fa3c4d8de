"""Schemas of the service's own envelopes (jobs, health).

The job spec and result schemas are needed on both sides of the queue, so they live in workers/schemas/.
"""
