-- gaps.sql: cutgaps(1)'s host gaps: per thread (host, rank, pid, tid) the window from the start
-- of its first driver API call to the end of its last, the time in calls (busy_ns), the idle
-- time between calls (idle_ns) and the number of gaps, as cutgaps -j's "threads" gives them;
-- then long_gaps and long_idle_ns, the gaps of at least gap_threshold ns (SET VARIABLE
-- gap_threshold = 5000000; 1 ms by default, as cutgaps -t), which cutgaps lists one by one.
-- As cutgaps counts: layer api records with a dur and a tid > 0; only outermost calls (a call
-- that starts before the latest end of the earlier calls of its thread is inside them); a gap is
-- the time from the end of one outermost call to the start of the next, when positive.
-- Ties in ts: the longer call is the outer one. cutgaps reads records in file order and takes
-- the first; on nested calls that end inside their caller (every capture) the two agree.
-- cutgaps needs sorted input and leaves out records that go back in time; this sorts by
-- itself, so it gives what cutgaps gives after cutmerge(1). cutgaps keys threads by tid,
-- this by host, rank, pid and tid (tids repeat across hosts).
-- cutgaps' device gaps (per stream, per process) follow what synchronizing calls observed
-- in time order; they are left to cutgaps.
WITH calls AS (
    SELECT host, rank, pid, tid, ts, dur, end_ts,
           max(end_ts) OVER (PARTITION BY host, rank, pid, tid ORDER BY ts, dur DESC
                             ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
    FROM events
    WHERE layer = 'api' AND dur IS NOT NULL AND tid > 0),
outer_calls AS (
    SELECT *, CASE WHEN ts > prev_end THEN ts - prev_end END AS gap
    FROM calls WHERE prev_end IS NULL OR ts >= prev_end)
SELECT host, rank, pid, tid, max(end_ts) - min(ts) AS window_ns,
       CAST(sum(dur) AS BIGINT) AS busy_ns, CAST(COALESCE(sum(gap), 0) AS BIGINT) AS idle_ns,
       count(gap) AS gaps,
       count(gap) FILTER (WHERE gap >= COALESCE(getvariable('gap_threshold'), 1000000))
           AS long_gaps,
       CAST(COALESCE(sum(gap) FILTER (
           WHERE gap >= COALESCE(getvariable('gap_threshold'), 1000000)), 0) AS BIGINT)
           AS long_idle_ns
FROM outer_calls
GROUP BY host, rank, pid, tid
ORDER BY host, rank, pid, tid;
