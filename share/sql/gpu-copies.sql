-- gpu-copies.sql: copies and memsets on the device (layer gpu, cat memcpy or memset) by
-- direction (HtoD DtoH DtoD HtoH from the name "memcpy HtoD", or memset): count, bytes (the
-- args' bytes), total, average, median, minimum and maximum time (ns) and the rate on the
-- device, bytes per ns (= GB/s).
WITH c AS (
    SELECT CASE WHEN cat = 'memset' THEN 'memset'
                ELSE COALESCE(NULLIF(regexp_extract(name, '^memcpy (.+)$', 1), ''), 'any')
           END AS dir,
           dur, cut_int(args->'bytes') AS bytes
    FROM events
    WHERE layer = 'gpu' AND cat IN ('memcpy', 'memset') AND dur IS NOT NULL)
SELECT dir, count(*) AS count, CAST(sum(bytes) AS BIGINT) AS bytes,
       CAST(sum(dur) AS BIGINT) AS total_ns, sum(dur) / count(*) AS avg_ns,
       median(dur) AS med_ns, min(dur) AS min_ns, max(dur) AS max_ns,
       CASE WHEN sum(dur) > 0 THEN sum(bytes) / sum(dur) END AS gb_per_s
FROM c
GROUP BY dir
ORDER BY list_position(['HtoD', 'DtoH', 'DtoD', 'HtoH', 'any', 'memset'], dir), dir;
