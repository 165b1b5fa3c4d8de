"""`gpugauge probe`: a few training steps of the user's own PyTorch model, measured (needs the `probe` extra)."""
