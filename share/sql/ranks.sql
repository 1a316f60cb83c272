-- ranks.sql: per rank, where the time went (a temporal breakdown, as HTA's): the rank's window
-- (first start to last end of its records, meta left out), and in it the time the GPU was
-- busy with any work of the rank, split by priority into compute (a kernel other than a
-- collective runs), comm (only a collective runs: cut_is_collective, events.sql), memcpy (only copies or memsets
-- run) and other (only other work, e.g. graph launches, is timed); idle is the window less
-- busy. The GPU times are lengths of unions of spans (overlapping work counted once), over
-- all devices of the rank; NULL for a rank without gpu records. Then the time in driver API
-- calls, runtime calls and ioctls (sums of durations, as cutstat's api_ns). Ranks are told
-- apart by host and rank.
WITH ev AS (FROM events WHERE layer <> 'meta'),
win AS (
    SELECT host, rank, min(ts) AS first_ts, max(end_ts) AS last_ts,
           CAST(COALESCE(sum(dur) FILTER (WHERE layer = 'api'), 0) AS BIGINT) AS api_ns,
           CAST(COALESCE(sum(dur) FILTER (WHERE layer = 'runtime'), 0) AS BIGINT) AS runtime_ns,
           CAST(COALESCE(sum(dur) FILTER (WHERE layer = 'ioctl'), 0) AS BIGINT) AS ioctl_ns
    FROM ev GROUP BY host, rank),
-- Each span of GPU work once in every set it belongs to.
spans AS (
    SELECT host, rank, s.set, ts, end_ts
    FROM ev, (VALUES ('all'), ('kernel'), ('compute'), ('kernel+copy')) s(set)
    WHERE layer = 'gpu' AND dur IS NOT NULL
      AND (s.set = 'all'
           OR (s.set = 'kernel' AND cat = 'kernel')
           OR (s.set = 'compute' AND cat = 'kernel' AND NOT cut_is_collective(name))
           OR (s.set = 'kernel+copy' AND cat IN ('kernel', 'memcpy', 'memset')))),
-- Union length: in start order, each span adds the part of it past every earlier end.
covered AS (
    SELECT host, rank, set,
           greatest(0, end_ts - greatest(ts, COALESCE(max(end_ts) OVER (
               PARTITION BY host, rank, set ORDER BY ts
               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), ts))) AS add_ns
    FROM spans),
u AS (
    SELECT host, rank,
           CAST(COALESCE(sum(add_ns) FILTER (WHERE set = 'all'), 0) AS BIGINT) AS busy,
           CAST(COALESCE(sum(add_ns) FILTER (WHERE set = 'kernel'), 0) AS BIGINT) AS kernel,
           CAST(COALESCE(sum(add_ns) FILTER (WHERE set = 'compute'), 0) AS BIGINT) AS compute,
           CAST(COALESCE(sum(add_ns) FILTER (WHERE set = 'kernel+copy'), 0) AS BIGINT) AS kc
    FROM covered GROUP BY host, rank)
SELECT w.host, w.rank, w.last_ts - w.first_ts AS window_ns,
       u.busy AS gpu_busy_ns, u.compute AS compute_ns, u.kernel - u.compute AS comm_ns,
       u.kc - u.kernel AS memcpy_ns, u.busy - u.kc AS gpu_other_ns,
       w.last_ts - w.first_ts - u.busy AS gpu_idle_ns,
       CASE WHEN w.last_ts > w.first_ts
            THEN 100 * (w.last_ts - w.first_ts - u.busy) / (w.last_ts - w.first_ts)
       END AS gpu_idle_pct,
       w.api_ns, w.runtime_ns, w.ioctl_ns
FROM win w LEFT JOIN u ON u.host IS NOT DISTINCT FROM w.host AND u.rank IS NOT DISTINCT FROM w.rank
ORDER BY w.host, w.rank;
