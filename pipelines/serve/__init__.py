"""`gpuledger serve`: a JSON API (/api/v1/), Prometheus metrics (/metrics) and a health check over the
published warehouse, each token seeing only its own teams (docs/serve.md)."""
