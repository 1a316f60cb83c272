-- stragglers.sql: one row per collective kernel (cut_is_collective) and NVTX range name, over the ranks
-- (see straggler-ranks.sql for each rank's row): how many ranks ran it, the median of their
-- totals (ns), the slowest rank (largest total; the lowest rank on ties), its total and its
-- excess over the median (ns, %), and the fastest rank and its total. For ranges the slowest
-- rank is the straggler; for collectives the straggler is the one that waited least, the
-- fastest: the others were waiting for it. Largest excess first.
WITH work AS (
    SELECT 'collective' AS kind, name, rank, dur FROM events
    WHERE layer = 'gpu' AND cat = 'kernel' AND cut_is_collective(name) AND dur IS NOT NULL
    UNION ALL
    SELECT 'nvtx', name, rank, dur FROM events WHERE layer = 'nvtx' AND dur IS NOT NULL),
per AS (
    SELECT kind, name, rank, CAST(sum(dur) AS BIGINT) AS total_ns
    FROM work GROUP BY kind, name, rank)
SELECT kind, name, count(*) AS ranks, median(total_ns) AS median_total_ns,
       arg_min(rank, (-total_ns, rank)) AS slowest_rank, max(total_ns) AS slowest_total_ns,
       max(total_ns) - median(total_ns) AS excess_ns,
       CASE WHEN median(total_ns) > 0
            THEN 100 * (max(total_ns) - median(total_ns)) / median(total_ns) END AS excess_pct,
       arg_min(rank, (total_ns, rank)) AS fastest_rank, min(total_ns) AS fastest_total_ns
FROM per
GROUP BY kind, name
ORDER BY excess_ns DESC, kind, name;
