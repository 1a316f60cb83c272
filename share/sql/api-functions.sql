-- api-functions.sql: the driver API functions table of cutstat(1), over every trace of the
-- glob together: per function its calls, total, average, median, minimum, maximum and
-- sample standard deviation (ns), share of all driver API time (%), category, and the ioctls
-- made inside it and the time in them (cutmerge(1)'s counts, else counted as cutstat counts
-- them: cut_call_ioctls in events.sql; NULL for a trace without ioctls).
-- Counted as cutstat counts: layer api records with a dur; median the middle value, or the
-- mean of the two middle ones; standard deviation 0 for one call; category from
-- api-categories.tsv by name. Longest total first, then by name.
-- One rank only: add  AND rank = 3  to the WHERE clause; per rank: group by rank too.
WITH api AS (
    SELECT name, dur, nioctl, ioctl_ns FROM cut_call_ioctls('api')),
fns AS (
    SELECT name, count(*) AS calls, CAST(sum(dur) AS BIGINT) AS total_ns, median(dur) AS med_ns,
           min(dur) AS min_ns, max(dur) AS max_ns, COALESCE(stddev_samp(dur), 0) AS stddev_ns,
           CAST(sum(nioctl) AS BIGINT) AS ioctls, CAST(sum(ioctl_ns) AS BIGINT) AS ioctl_ns
    FROM api GROUP BY name)
SELECT name, cut_api_category(name) AS category, calls, total_ns, total_ns / calls AS avg_ns,
       med_ns, min_ns, max_ns, stddev_ns,
       100 * total_ns / sum(total_ns) OVER () AS time_pct, ioctls, ioctl_ns
FROM fns
ORDER BY total_ns DESC, name;
