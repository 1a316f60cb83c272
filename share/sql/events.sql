-- events.sql: DuckDB views over the traces of many ranks (cut-events(5), schema 2).
--
-- Name the files first (the events view is checked when it is created; set trace_glob again
-- later to read other files), then read this file, then any recipe:
--   SET VARIABLE trace_glob = 'run/host=*/rank=*/*.jsonl';  -- a glob, or a list of globs
--   cat events.sql api-functions.sql | duckdb -cmd "SET VARIABLE trace_glob = 'run/*.jsonl'"
-- Optional: SET VARIABLE cut_datadir = '/usr/local/share/cut' (where api-categories.tsv is;
-- `make install` writes its DATADIR here) and SET VARIABLE gap_threshold = 1000000 (ns).
--
-- What it defines (all TEMP, so a persistent database is left alone):
--   cut_read(files)   the raw records of files: the envelope's columns, as written
--   cut_meta(files)   their header and process records: host and rank named there
--   cut_events(files) the records with host and rank filled in (from their process where
--                     they lack them) and an end_ts column
--   events            cut_events(getvariable('trace_glob')); the recipes read this view
--                     (load.sql turns it into a table read once, for several recipes)
--   cut_api_category(name)  cutstat's category of a driver API function
--   cut_api_flag(name, flag)  whether api-categories.tsv flags it so ('memset', 'submits'...)
--   cut_int(json)     an integer argument as cutstat reads one (number, or "0x.." / decimal string)
--   cut_is_collective(name)  whether a kernel is a collective's (NCCL, RCCL), by cut's one rule
--   cut_is_ioctl_call(name, args)  whether an ioctl-layer record is an ioctl a call counts
--   cut_call_ioctls(layer)  that layer's timed calls with the ioctls inside each (nioctl)
--
-- Why explicit columns: read_ndjson infers a schema from the first 20,480 records
-- (sample_size); a key first seen later is missing from it and `SELECT *` then fails with
-- "JSON transform error ... unknown key". cut-events(5) fixes the top-level members, so they
-- are named here with their types: ns times as BIGINT (exact; never DOUBLE), args as JSON
-- (any payload, read with args->>'bytes'). Members not in the envelope are ignored.
--
-- Why not hive_partitioning: DuckDB's hive columns replace a file column of the same name
-- (a record's own "rank" would be overwritten by the path's) and a glob that mixes layouts is
-- refused. So host= and rank= are taken from the path with regular expressions, and only when
-- the record does not say. A record lacking them is of a process, its pid on its host, and
-- takes its process's (the rule of share/lib/procs.h and cutstat(1)): some writers
-- left host and rank off a process's runtime and NVTX records while its other records carry
-- them. Host, in order: the record's, a "host=NAME/" directory, that of the earliest record of
-- its pid in the file that names one, the file's header, else NULL. Rank: the record's, a
-- "rank=N/" directory, that of the earliest record of its process (file, host, pid) that
-- carries one, the "rank" in the args of its process's meta "process" record, the file's (when
-- its process records name one rank only), else NULL.
--
-- Compressed traces (.gz, .zst) are read directly. Only the canonical schema 1/2 records are
-- read; pass traces in the older formats through cutmerge(1) first.

SET VARIABLE cut_datadir = COALESCE(getvariable('cut_datadir'), 'share/data');

CREATE OR REPLACE TEMP MACRO cut_read(files) AS TABLE
SELECT *
FROM read_ndjson(files,
    columns = {ts: 'BIGINT', dur: 'BIGINT', host: 'VARCHAR', rank: 'BIGINT', pid: 'BIGINT',
               tid: 'BIGINT', layer: 'VARCHAR', name: 'VARCHAR', cat: 'VARCHAR', ret: 'BIGINT',
               id: 'BIGINT', parent: 'BIGINT', pname: 'VARCHAR', nioctl: 'BIGINT',
               ioctl_ns: 'BIGINT', args: 'JSON'},
    filename = true, hive_partitioning = false);

-- The header and process records of files, with only the arguments that name a host or a
-- rank: reading args as a struct of two members is several times faster than as JSON. A
-- record whose args is not an object does not fit the struct: this scan skips it (the
-- records are read in full by cut_read).
CREATE OR REPLACE TEMP MACRO cut_meta(files) AS TABLE
SELECT filename, pid, name, args.host->>'$' AS host, TRY_CAST(args.rank->>'$' AS BIGINT) AS rank
FROM read_ndjson(files,
    columns = {layer: 'VARCHAR', name: 'VARCHAR', pid: 'BIGINT',
               args: 'STRUCT(host JSON, rank JSON)'},
    filename = true, hive_partitioning = false, ignore_errors = true)
WHERE layer = 'meta' AND name IN ('header', 'process');

CREATE OR REPLACE TEMP MACRO cut_events(files) AS TABLE
WITH meta AS MATERIALIZED (FROM cut_meta(files)),
files AS (
    SELECT filename, any_value(host) FILTER (WHERE name = 'header') AS host,
           CASE WHEN count(DISTINCT rank) FILTER (WHERE name = 'process') = 1
                THEN min(rank) FILTER (WHERE name = 'process') END AS rank
    FROM meta GROUP BY filename),
-- The host a record names (its own, or a host= directory), and in the process record the
-- rank its args name.
named AS (
    SELECT r.*,
           COALESCE(r.host, NULLIF(regexp_extract(r.filename, '(^|/)host=([^/]+)/', 2), ''))
               AS named_host,
           CASE WHEN r.layer = 'meta' AND r.name = 'process'
                THEN TRY_CAST(r.args->>'rank' AS BIGINT) END AS arg_rank
    FROM cut_read(files) r),
-- A record without a host is of its pid's process whose records name one (the earliest):
-- writers left host and rank off some records of a process whose others carry them.
hosted AS (
    SELECT n.*, COALESCE(n.named_host,
                         arg_min(n.named_host, n.ts) OVER (PARTITION BY n.filename, n.pid),
                         f.host) AS proc_host,
           f.rank AS file_rank
    FROM named n LEFT JOIN files f ON f.filename = n.filename)
SELECT h.ts, h.dur, h.proc_host AS host,
       COALESCE(h.rank,
                TRY_CAST(NULLIF(regexp_extract(h.filename, '(^|/)rank=([0-9]+)/', 2), '')
                         AS BIGINT),
                arg_min(h.rank, h.ts) OVER p,
                min(h.arg_rank) OVER p,
                h.file_rank) AS rank,
       h.pid, h.tid, h.layer, h.name, h.cat, h.ret, h.id, h.parent, h.pname, h.nioctl,
       h.ioctl_ns, h.args, h.filename,
       h.ts + COALESCE(h.dur, 0) AS end_ts
FROM hosted h
WINDOW p AS (PARTITION BY h.filename, h.proc_host, h.pid);

CREATE OR REPLACE TEMP VIEW events AS
FROM cut_events(COALESCE(getvariable('trace_glob'),
    error('cut: no traces: SET VARIABLE trace_glob = ''run/*/*.jsonl'' first')));

-- cutstat's categories and the functions' flags: share/data/api-categories.tsv (the flags a
-- third column, comma-separated, where a function has any), looked up by name, then with one
-- version suffix (_v2, _ptsz, _ptds) stripped at a time; "other" and no flags when none matches.
CREATE OR REPLACE TEMP TABLE cut_api_table AS
    SELECT name, category, COALESCE(flags, '') AS flags
    FROM read_csv(getvariable('cut_datadir') || '/api-categories.tsv', delim = '\t',
        header = false, comment = '#', quote = '', escape = '', auto_detect = false,
        null_padding = true, columns = {name: 'VARCHAR', category: 'VARCHAR', flags: 'VARCHAR'});
SET VARIABLE cut_api_categories = (SELECT map(list(name), list(category)) FROM cut_api_table);
SET VARIABLE cut_api_flags = (SELECT map(list(name), list(flags)) FROM cut_api_table);

CREATE OR REPLACE TEMP MACRO cut_strip(s) AS
    CASE WHEN length(s) > 5 THEN regexp_replace(s, '(_ptsz|_ptds|_v[0-9]+)$', '')
         ELSE regexp_replace(s, '_v[0-9]+$', '') END;

CREATE OR REPLACE TEMP MACRO cut_api_category(fn) AS COALESCE(
    getvariable('cut_api_categories')[fn],
    getvariable('cut_api_categories')[cut_strip(fn)],
    getvariable('cut_api_categories')[cut_strip(cut_strip(fn))],
    getvariable('cut_api_categories')[cut_strip(cut_strip(cut_strip(fn)))],
    'other');

-- Whether the function has the flag (as classify.h's cut_api_flags says).
CREATE OR REPLACE TEMP MACRO cut_api_flag(fn, flag) AS list_contains(string_split(COALESCE(
    getvariable('cut_api_flags')[fn],
    getvariable('cut_api_flags')[cut_strip(fn)],
    getvariable('cut_api_flags')[cut_strip(cut_strip(fn))],
    getvariable('cut_api_flags')[cut_strip(cut_strip(cut_strip(fn)))],
    ''), ','), flag);

-- An integer argument as cutstat reads one: a JSON integer, or a string of decimal or 0x hex
-- digits; NULL otherwise (floats, negative strings, anything else).
CREATE OR REPLACE TEMP MACRO cut_int(j) AS CASE
    WHEN json_type(j) IN ('BIGINT', 'UBIGINT') THEN TRY_CAST(j AS BIGINT)
    WHEN json_type(j) = 'VARCHAR' AND regexp_matches(j->>'$', '^(0[xX][0-9a-fA-F]+|[0-9]+)$')
        THEN TRY_CAST(j->>'$' AS BIGINT)
    END;

-- The one rule for "this kernel is a collective", cut_is_collective() of share/lib/classify.c
-- (cut-events(5), Names): the identifier is the name, or, for an Itanium symbol "_Z<n>..." or
-- "_ZL<n>...", the n characters after the digits (all that is left when fewer); the kernel is a
-- collective when the identifier starts with "nccl" or "rccl" and its first run of letters
-- ends in "Kernel": ncclDevKernel_*, ncclSymkDevKernel_*, ncclKernel_*, mangled
-- (_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LLv) or not.
CREATE OR REPLACE TEMP MACRO cut_is_collective(n) AS COALESCE(regexp_matches(
    CASE WHEN regexp_matches(n, '^_ZL?[0-9]')
         THEN substr(n, length(regexp_extract(n, '^_ZL?[0-9]+')) + 1,
                     COALESCE(TRY_CAST(regexp_extract(n, '^_ZL?([0-9]+)', 1) AS BIGINT),
                              length(n)))
         ELSE n END,
    '^[nr]ccl[A-Za-z]*Kernel([^A-Za-z]|$)'), false);

-- Whether a record of the ioctl layer is an ioctl proper, which a call's nioctl counts
-- (cut_is_ioctl_call() of share/lib/classify.c): one with a "cmd" argument, or without
-- arguments unless named open, openat, close, mmap or munmap.
CREATE OR REPLACE TEMP MACRO cut_is_ioctl_call(n, a) AS CASE
    WHEN a IS NOT NULL THEN COALESCE(json_exists(a, '$.cmd'), false)
    ELSE n NOT IN ('open', 'openat', 'close', 'mmap', 'munmap') END;

-- The timed calls of layer l ('api', 'runtime') with the ioctls made inside each, as cutstat
-- counts them: cutmerge's nioctl and ioctl_ns where it wrote them; else, in a trace that has
-- ioctls (one straight from cutcapture), each ioctl counts in the call of the layer on its
-- thread that started last at or before it, if that call is still running: the innermost
-- around it, as cutstat counts, but for an ioctl made in an outer call after a call nested in
-- it (of the same layer) had ended, which cutstat counts in the outer call and this in none
-- (the wrappers leave out the calls a library makes to itself, so such nesting is rare; an
-- ASOF join keeps this linear in the trace). NULL for a trace without records of the ioctl
-- layer.
-- Columns: name, cat, dur, nioctl, ioctl_ns.
CREATE OR REPLACE TEMP MACRO cut_call_ioctls(l) AS TABLE
WITH calls AS (
    SELECT row_number() OVER () AS k, name, cat, dur, ts, end_ts, nioctl, ioctl_ns,
           COALESCE(host, '') AS h, COALESCE(rank, -1) AS r, pid, tid
    FROM events WHERE layer = l AND dur IS NOT NULL),
layer AS (FROM events WHERE layer = 'ioctl'),
ioctls AS (
    SELECT ts, COALESCE(dur, 0) AS dur, COALESCE(host, '') AS h, COALESCE(rank, -1) AS r,
           pid, tid
    FROM layer WHERE cut_is_ioctl_call(name, args)),
inside AS (
    SELECT c.k, count(*) AS n, CAST(sum(i.dur) AS BIGINT) AS ns
    FROM ioctls i ASOF JOIN calls c
        ON c.h = i.h AND c.r = i.r AND c.pid = i.pid AND c.tid = i.tid AND c.ts <= i.ts
    WHERE i.ts < c.end_ts AND c.nioctl IS NULL
    GROUP BY c.k)
SELECT c.name, c.cat, c.dur,
       CASE WHEN c.nioctl IS NOT NULL THEN c.nioctl
            WHEN EXISTS (FROM layer) THEN COALESCE(n.n, 0) END AS nioctl,
       CASE WHEN c.nioctl IS NOT NULL THEN c.ioctl_ns
            WHEN EXISTS (FROM layer) THEN COALESCE(n.ns, 0) END AS ioctl_ns
FROM calls c LEFT JOIN inside n ON n.k = c.k;
