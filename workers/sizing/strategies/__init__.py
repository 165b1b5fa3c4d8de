"""Strategies for jobs bigger than one GPU: sharding, adapters, checkpointing, tensor and pipeline parallel."""
