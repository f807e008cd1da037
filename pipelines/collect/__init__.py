"""Collectors: pull a cluster's data from its own systems into the landing zone (docs/collect.md)."""
