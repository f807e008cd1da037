"""What ties the ledger to Dagster: the resources its assets are given, the daily partitions, and the
Great Expectations suites run as blocking asset checks."""
