"""A job spec's model (preset, totals, layer list, ONNX file) resolved to the sizing core's statistics."""
