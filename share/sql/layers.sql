-- layers.sql: cutstat(1)'s summary numbers and "Time by layer", one row per layer that has
-- records (meta left out), plus the whole, repeated on every row: traced_ns (first start to
-- last end of any record not meta), api_ns (sum of timed driver API calls), lost (the events
-- meta "lost" records count) and untimed (driver API records without a dur); threads: the
-- distinct (host, pid, tid) with timed records of the layer (a host from the record, or its
-- process: events.sql).
WITH per AS (
    SELECT layer, count(*) AS events, CAST(COALESCE(sum(dur), 0) AS BIGINT) AS total_ns,
           min(ts) AS first_ts, max(end_ts) AS last_ts,
           count(*) FILTER (WHERE dur IS NULL) AS no_dur,
           count(DISTINCT (host, pid, tid)) FILTER (WHERE dur IS NOT NULL) AS threads,
           sum(cut_int(args->'count')) FILTER (WHERE name = 'lost') AS lost_count
    FROM events GROUP BY layer),
whole AS (
    SELECT max(last_ts) FILTER (WHERE layer <> 'meta')
               - min(first_ts) FILTER (WHERE layer <> 'meta') AS traced_ns,
           CAST(COALESCE(sum(total_ns) FILTER (WHERE layer = 'api'), 0) AS BIGINT) AS api_ns,
           CAST(COALESCE(sum(lost_count) FILTER (WHERE layer = 'meta'), 0) AS BIGINT) AS lost,
           CAST(COALESCE(sum(no_dur) FILTER (WHERE layer = 'api'), 0) AS BIGINT) AS untimed
    FROM per)
SELECT layer, events, total_ns, threads, traced_ns, api_ns, lost, untimed
FROM per, whole
WHERE layer <> 'meta'
ORDER BY list_position(['nvtx', 'runtime', 'api', 'ioctl', 'kernel', 'irq', 'sched', 'gpu'],
    layer);
