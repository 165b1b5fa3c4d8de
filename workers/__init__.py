"""The work: sizing a training job, ranking offers, budget math, and thin Celery tasks around them."""
