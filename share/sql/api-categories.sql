-- api-categories.sql: cutstat(1)'s "Time by category (driver API)": per category the calls,
-- total (ns), share of driver API time and of the traced time (%), in cutstat's order.
-- Traced time: first start to last end of any record that is not meta, over all traces of the
-- glob (meaningful for one host's clock; per rank, group by rank).
WITH api AS (
    SELECT cut_api_category(name) AS category, calls, total_ns
    FROM (SELECT name, count(*) AS calls, sum(dur) AS total_ns
          FROM events WHERE layer = 'api' AND dur IS NOT NULL GROUP BY name)),
traced AS (SELECT max(end_ts) - min(ts) AS ns FROM events WHERE layer <> 'meta')
SELECT category, CAST(sum(calls) AS BIGINT) AS calls, CAST(sum(total_ns) AS BIGINT) AS total_ns,
       100 * sum(total_ns) / sum(sum(total_ns)) OVER () AS api_pct,
       100 * sum(total_ns) / any_value(traced.ns) AS traced_pct
FROM api, traced
GROUP BY category
ORDER BY list_position(['init', 'context', 'device', 'memory', 'transfer', 'launch', 'sync',
    'stream', 'event', 'module', 'graph', 'query', 'other'], category);
