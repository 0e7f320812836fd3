"""Column statistics as data, without SQL or I/O: Hive's Thrift model of statistics and catalog objects, partition
names, NDV sketches, quantile (KLL) sketches, the merge rules up the levels, drift between two states and
frequent items. The metastore stores these; Spark's side (`stats`) gathers them."""
