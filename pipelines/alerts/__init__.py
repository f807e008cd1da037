"""Alert delivery: the messages, the channels that carry them, the delivery pass and the actions
alerts run (docs/plans.md#delivery). Imports only pipelines.lib; the sensor and the CLI sit on top."""
