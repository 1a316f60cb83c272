-- api-transfers.sql: cutstat(1)'s "Transfers": driver API calls of the transfer category with an
-- integer bytes argument, per direction (HtoD DtoH DtoD HtoH any memset): calls, bytes, time
-- inside the calls (ns) and bytes per ns (= GB/s; asynchronous copies return early, so this
-- is the calls' rate, not the copies': gpu-copies.sql has those).
-- Direction as cutstat decides it: the dir argument when it names one, else memset, HtoD, DtoH
-- or DtoD for a function flagged memset, htod, dtoh or dtod in api-categories.tsv, else any.
WITH x AS (
    SELECT name, dur, cut_int(args->'bytes') AS bytes, args->>'dir' AS dir
    FROM events
    WHERE layer = 'api' AND dur IS NOT NULL AND cut_api_category(name) = 'transfer'),
d AS (
    SELECT CASE
               WHEN dir IN ('HtoD', 'DtoH', 'DtoD', 'HtoH', 'any', 'memset') THEN dir
               WHEN cut_api_flag(name, 'memset') THEN 'memset'
               WHEN cut_api_flag(name, 'htod') THEN 'HtoD'
               WHEN cut_api_flag(name, 'dtoh') THEN 'DtoH'
               WHEN cut_api_flag(name, 'dtod') THEN 'DtoD'
               ELSE 'any' END AS dir, dur, bytes
    FROM x WHERE bytes IS NOT NULL)
SELECT dir, count(*) AS calls, CAST(sum(bytes) AS BIGINT) AS bytes,
       CAST(sum(dur) AS BIGINT) AS time_ns,
       CASE WHEN sum(dur) > 0 THEN sum(bytes) / sum(dur) ELSE 0 END AS gb_per_s
FROM d
GROUP BY dir
ORDER BY list_position(['HtoD', 'DtoH', 'DtoD', 'HtoH', 'any', 'memset'], dir);
