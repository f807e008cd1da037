"""Apache Spark as a second engine for the same sql/ files (docs/spark.md)."""
