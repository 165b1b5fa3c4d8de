"""Layer rules: each layer kind's shape, neurons, parameters, multiply-adds and kept values."""
