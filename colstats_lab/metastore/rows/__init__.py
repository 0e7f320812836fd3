"""The metastore's rows: plain functions and data over a database, which every repository shares and none owns
(a table's row, a partition's id, parameters, a storage descriptor's skew spec, the statistics segments, a
ValidWriteIdList, COLUMN_STATS_ACCURATE, Drill's units). No repository is imported here."""
