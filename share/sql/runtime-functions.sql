-- runtime-functions.sql: the table of api-functions.sql for the CUDA runtime layer (cuda*
-- calls of libcudart): per function calls, total, average, median, minimum, maximum, sample
-- standard deviation (ns), share of all runtime time (%), category (the records' cat, else
-- the driver table's, else other) and the ioctls inside (as api-functions.sql counts them).
WITH rt AS (
    SELECT name, cat, dur, nioctl, ioctl_ns FROM cut_call_ioctls('runtime')),
fns AS (
    SELECT name, min(cat) AS cat, count(*) AS calls, CAST(sum(dur) AS BIGINT) AS total_ns,
           median(dur) AS med_ns, min(dur) AS min_ns, max(dur) AS max_ns,
           COALESCE(stddev_samp(dur), 0) AS stddev_ns,
           CAST(sum(nioctl) AS BIGINT) AS ioctls, CAST(sum(ioctl_ns) AS BIGINT) AS ioctl_ns
    FROM rt GROUP BY name)
SELECT name, COALESCE(cat, cut_api_category(name)) AS category, calls, total_ns,
       total_ns / calls AS avg_ns, med_ns, min_ns, max_ns, stddev_ns,
       100 * total_ns / sum(total_ns) OVER () AS time_pct, ioctls, ioctl_ns
FROM fns
ORDER BY total_ns DESC, name;
