-- gpu-kernels.sql: GPU time per kernel (layer gpu, cat kernel), like nsys's cuda_gpu_kern_sum:
-- per kernel name its instances, total, average, median, minimum, maximum and sample standard
-- deviation (ns, on the device), and its share of all kernel time (%). Longest total first.
-- Medians and deviations are those of api-functions.sql.
WITH k AS (
    SELECT name, count(*) AS instances, CAST(sum(dur) AS BIGINT) AS total_ns,
           median(dur) AS med_ns, min(dur) AS min_ns, max(dur) AS max_ns,
           COALESCE(stddev_samp(dur), 0) AS stddev_ns
    FROM events
    WHERE layer = 'gpu' AND cat = 'kernel' AND dur IS NOT NULL
    GROUP BY name)
SELECT name, instances, total_ns, total_ns / instances AS avg_ns, med_ns, min_ns, max_ns,
       stddev_ns, 100 * total_ns / sum(total_ns) OVER () AS time_pct
FROM k
ORDER BY total_ns DESC, name;
