"""Budget reviews: many jobs priced at once, their picks, sweeps, totals, and buy-vs-rent; pure."""
