-- count.sql (tests/bench/bench-duckdb.sh): every record read through the events view.
SELECT count(*) AS records, count(DISTINCT rank) AS ranks FROM events;
