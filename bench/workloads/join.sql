-- join.sql — the bench's sqlite3 workload, on an in-memory database: a table built by a recursive CTE,
-- then a large self-join on a non-unique key (sqlite builds an automatic index) with aggregation.
-- Temporary tables and indexes stay in memory too, so the work is CPU-bound.
-- Usage: sqlite3 :memory: ".read join.sql"
PRAGMA temp_store = MEMORY;
CREATE TABLE t AS
  WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 400000)
  SELECT x AS id, (x * 7919) % 1000 AS k, hex(randomblob(8)) AS v FROM c;
SELECT count(*), sum((a.id + b.id) % 13), max(a.v < b.v) FROM t a JOIN t b ON a.k = b.k;
