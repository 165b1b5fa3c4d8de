"""The data gpugauge ranks against: GPU specifications, cloud instances, prices, on-prem cards."""
