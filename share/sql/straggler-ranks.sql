-- straggler-ranks.sql: per collective kernel (layer gpu, cat kernel, cut_is_collective(name):
-- ncclKernel_*, ncclDevKernel_*, mangled or not) and per NVTX range name (layer nvtx spans), each rank's
-- count, total and mean (ns), the median of the ranks' totals (the middle one, or the mean of
-- the two middle ones), the rank's excess over it (ns, %) and its place (1: the largest
-- total). A rank slow in a range (compute) has the largest total there; a rank that reaches a
-- collective late makes the others wait inside it, so it has the smallest collective total.
WITH work AS (
    SELECT 'collective' AS kind, name, rank, dur FROM events
    WHERE layer = 'gpu' AND cat = 'kernel' AND cut_is_collective(name) AND dur IS NOT NULL
    UNION ALL
    SELECT 'nvtx', name, rank, dur FROM events WHERE layer = 'nvtx' AND dur IS NOT NULL),
per AS (
    SELECT kind, name, rank, count(*) AS count, CAST(sum(dur) AS BIGINT) AS total_ns,
           avg(dur) AS mean_ns
    FROM work GROUP BY kind, name, rank)
SELECT kind, name, rank, count, total_ns, mean_ns,
       median(total_ns) OVER w AS median_total_ns,
       total_ns - median(total_ns) OVER w AS excess_ns,
       CASE WHEN median(total_ns) OVER w > 0
            THEN 100 * (total_ns - median(total_ns) OVER w) / median(total_ns) OVER w END
           AS excess_pct,
       row_number() OVER (PARTITION BY kind, name ORDER BY total_ns DESC, rank) AS place
FROM per
WINDOW w AS (PARTITION BY kind, name)
ORDER BY kind, name, place;
