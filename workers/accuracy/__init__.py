"""The sizing core against measurements: comparison rows, error summaries, and the fit of its factors."""
