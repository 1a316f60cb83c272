-- layers.sql: cutstat(1)'s summary numbers and "Time by layer", one row per layer that has
-- records (meta left out), plus the whole: traced_ns (first start to last end of any record
-- not meta), api_ns (sum of timed driver API calls), lost (events meta "lost" records count)
-- and untimed (driver API records without a dur) repeated on every row.
WITH ev AS (FROM events WHERE layer <> 'meta'),
whole AS (
    SELECT max(end_ts) - min(ts) AS traced_ns,
           CAST(COALESCE(sum(dur) FILTER (WHERE layer = 'api'), 0) AS BIGINT) AS api_ns,
           count(*) FILTER (WHERE layer = 'api' AND dur IS NULL) AS untimed
    FROM ev),
lost AS (
    SELECT CAST(COALESCE(sum(cut_int(args->'count')), 0) AS BIGINT) AS lost
    FROM events WHERE layer = 'meta' AND name = 'lost')
SELECT layer, count(*) AS events, CAST(COALESCE(sum(dur), 0) AS BIGINT) AS total_ns,
       any_value(whole.traced_ns) AS traced_ns, any_value(whole.api_ns) AS api_ns,
       any_value(lost.lost) AS lost, any_value(whole.untimed) AS untimed
FROM ev, whole, lost
GROUP BY layer
ORDER BY list_position(['nvtx', 'runtime', 'api', 'ioctl', 'kernel', 'irq', 'sched', 'gpu'],
    layer);
