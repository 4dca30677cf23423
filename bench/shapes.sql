-- bench/shapes.sql -- 24 query shapes, each in four runs: native Sort and
-- GpuSort, at default settings and tuned (work_mem 1GB, 8 workers per
-- Gather).  Run by bench/shapes.sh; psql variables: rows, runs, shapes
-- ('all' or a comma list of shape numbers).  A query's execution time
-- (EXPLAIN ANALYZE, TIMING OFF: no rows sent to a client), the wall time
-- of COPY and CREATE TABLE AS; median of `runs`, the four runs of a shape
-- interleaved round by round;
-- a statement past 90 s counts as a timeout.
\set ON_ERROR_STOP on
\pset footer off
SET client_min_messages = warning;
\pset pager off
CREATE EXTENSION IF NOT EXISTS gpusort;
SELECT set_config('bench.runs', :'runs', false);
DROP TABLE IF EXISTS w;
-- about 190-byte rows: ints, a float, numeric(12,2), a uuid, an e-mail, a
-- short name (shared prefixes), a code with a 17-byte common prefix, md5
CREATE UNLOGGED TABLE w AS
SELECT g AS id, (hashint8(g) % 1000000000)::int4 AS i, (hashint8(g + 1) % 1000000)::float4 / 7 AS f,
       (hashint8(g + 2) % 1000)::int4 AS grp,
       ((hashint8(g + 3) % 10000000)::numeric / 100)::numeric(12,2) AS amount,
       md5(g::text)::uuid AS u,
       (ARRAY['anna', 'john', 'maria', 'peter', 'li', 'sofia'])[1 + g % 6] || '.' ||
         substr(md5((g % 100003)::text), 1, 6) || '@' ||
         (ARRAY['example.com', 'mail.org', 'corp.net'])[1 + g % 3] AS email,
       (ARRAY['Anders', 'Andersen', 'Anderson', 'Andrea', 'Andreas', 'Müller', 'Mueller',
              'Möller', 'Moller', 'Østergaard', 'Ostergaard', 'van Dijk', 'Van Dyke'])[1 + g % 13] ||
         ' ' || (ARRAY['Jo', 'Jon', 'John', 'Johan', 'Johann', 'Johanna', 'Jörg'])[1 + (g / 13) % 7] ||
         ' ' || (hashint8(g + 4) % 100000)::text AS name,
       'ACME-REGION-0042-' || lpad((hashint8(g + 5) % 100000000)::text, 9, '0') AS code,
       md5((g + 6)::text) AS pad
FROM generate_series(1, :rows) g;
VACUUM ANALYZE w;
SELECT pg_size_pretty(pg_relation_size('w')) AS table_size, (pg_relation_size('w') / :rows)::int AS bytes_per_row;
-- a libc collation other than C where the system has one
SELECT coalesce((SELECT quote_ident(collname) FROM pg_collation
                 WHERE collprovider = 'c' AND collname NOT IN ('C', 'POSIX', 'ucs_basic', 'default')
                   AND collencoding IN (-1, 6)
                 ORDER BY collname LIKE 'en_US%' DESC, collname LIMIT 1), '"C"') AS libc_coll \gset
SELECT :'libc_coll' AS libc_collation;

CREATE TEMP TABLE shapes (n int, what text, q text);
INSERT INTO shapes VALUES
 (1, 'narrow row, int key', 'SELECT i FROM w ORDER BY i'),
 (2, 'wide row, float key', 'SELECT * FROM w ORDER BY f'),
 (3, 'wide row, two keys', 'SELECT * FROM w ORDER BY grp, f DESC'),
 (4, 'DESC NULLS FIRST', 'SELECT id, i FROM w ORDER BY i DESC NULLS FIRST'),
 (5, 'text under C (e-mail)', 'SELECT * FROM w ORDER BY email COLLATE "C"'),
 (6, 'text under ICU (names)', 'SELECT * FROM w ORDER BY name COLLATE "en-x-icu"'),
 (7, 'text under libc', format('SELECT id, name FROM w ORDER BY name COLLATE %s', :'libc_coll')),
 (8, 'text, 17-byte shared prefix', 'SELECT id, code FROM w ORDER BY code COLLATE "C"'),
 (9, 'numeric', 'SELECT id, amount FROM w ORDER BY amount DESC'),
 (10, 'uuid', 'SELECT * FROM w ORDER BY u'),
 (11, 'LIMIT 10', 'SELECT * FROM w ORDER BY i LIMIT 10'),
 (12, 'LIMIT 10k', 'SELECT * FROM w ORDER BY f LIMIT 10000'),
 (13, 'LIMIT 200k', 'SELECT * FROM w ORDER BY id DESC LIMIT 200000'),
 (14, 'LIMIT 1M', 'SELECT * FROM w ORDER BY f DESC LIMIT 1000000'),
 (15, 'OFFSET', format('SELECT * FROM w ORDER BY i OFFSET %s', :rows - 100)),
 (16, 'window', 'SELECT id, row_number() OVER (ORDER BY f DESC) FROM w'),
 (17, 'sorted GROUP BY', 'SELECT i, count(*), sum(f) FROM w GROUP BY i'),
 (18, 'DISTINCT', 'SELECT DISTINCT i FROM w'),
 (19, 'merge join', 'SELECT a.id, b.id FROM w a JOIN w b ON a.i = b.i WHERE a.grp < 100 AND b.grp > 900'),
 (20, 'UNION', 'SELECT i FROM w WHERE grp < 500 UNION SELECT i FROM w WHERE grp >= 500'),
 (21, 'ORDER BY in a subquery', 'SELECT * FROM (SELECT id, f FROM w ORDER BY f) s WHERE id % 3 = 0'),
 (22, 'ORDER BY in a CTE', 'WITH c AS MATERIALIZED (SELECT id, i FROM w ORDER BY i) SELECT count(*) FROM c'),
 (23, 'COPY (SELECT ... ORDER BY) TO', 'COPY (SELECT * FROM w ORDER BY f) TO ''/dev/null'''),
 (24, 'CREATE TABLE AS ... ORDER BY', 'CREATE TEMP TABLE ctas AS SELECT * FROM w ORDER BY i');
DELETE FROM shapes WHERE :'shapes' <> 'all' AND n <> ALL (string_to_array(:'shapes', ',')::int[]);

CREATE TEMP TABLE configs (c int, config text, gpusort bool, tuned bool);
INSERT INTO configs VALUES (1, 'native', false, false), (2, 'native tuned', false, true),
  (3, 'GpuSort', true, false), (4, 'GpuSort tuned', true, true);

-- one statement's wall time in ms under a config (NULL: timed out)
CREATE FUNCTION pg_temp.timed(q text, gpusort bool, tuned bool) RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz; j jsonb;
BEGIN
  PERFORM set_config('gpusort.enabled', gpusort::text, true);
  PERFORM set_config('work_mem', CASE WHEN tuned THEN '1GB' ELSE '4MB' END, true);
  PERFORM set_config('max_parallel_workers_per_gather', CASE WHEN tuned THEN '8' ELSE '2' END, true);
  PERFORM set_config('statement_timeout', '90s', true);
  DROP TABLE IF EXISTS ctas;
  t0 := clock_timestamp();
  BEGIN
    IF q ~* '^(SELECT|WITH)' THEN
      -- a query: its execution time, without SPI keeping the rows it returns
      EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ' || q INTO j;
      RETURN round((j -> 0 ->> 'Execution Time')::numeric, 1);
    END IF;
    EXECUTE q;
  EXCEPTION WHEN query_canceled THEN
    RETURN NULL;
  END;
  RETURN round(extract(epoch FROM clock_timestamp() - t0)::numeric * 1000, 1);
END $$;

-- the first GpuSort query of a session opens the GPU
SELECT pg_temp.timed('SELECT i FROM w ORDER BY i LIMIT 100000', true, false) AS warmup_ms;

CREATE TEMP TABLE timings (n int, c int, round int, ms numeric);
CREATE TEMP TABLE phases (id bigserial, n int, c int, plan text);
-- rounds of every shape, its four configs in turn (their order rotating)
DO $$
DECLARE runs int := current_setting('bench.runs')::int; r record; ms numeric;
BEGIN
  FOR k IN 1..runs LOOP
    FOR r IN SELECT * FROM shapes s, configs c ORDER BY s.n, (c.c + k) % 4 LOOP
      ms := pg_temp.timed(r.q, r.gpusort, r.tuned);
      INSERT INTO timings VALUES (r.n, r.c, k, ms);
      RAISE WARNING 'round % shape % % : % ms', k, r.n, r.config, coalesce(ms::text, 'timeout');
    END LOOP;
  END LOOP;
END $$;

\echo '== median ms of each shape and run'
WITH med AS (
  SELECT n, c, percentile_disc(0.5) WITHIN GROUP (ORDER BY coalesce(ms, 1e9)) AS ms
  FROM timings GROUP BY n, c)
SELECT n, what, :rows AS rows,
  max(ms) FILTER (WHERE c = 1) AS native,
  max(ms) FILTER (WHERE c = 2) AS native_tuned,
  max(ms) FILTER (WHERE c = 3) AS gpusort,
  max(ms) FILTER (WHERE c = 4) AS gpusort_tuned,
  round(max(ms) FILTER (WHERE c = 1) / nullif(max(ms) FILTER (WHERE c = 3), 0), 2) AS x_native,
  round(max(ms) FILTER (WHERE c = 2) / nullif(max(ms) FILTER (WHERE c = 4), 0), 2) AS x_tuned
FROM med JOIN shapes USING (n) GROUP BY n, what ORDER BY n;

\echo '== GpuSort at default settings: the phases of shapes 2, 5, 6, 13 and 16 (EXPLAIN ANALYZE, TIMING OFF), with the workers storing the rows (gpusort.parallel_fill = auto, the default) and without (off)'
SET gpusort.enabled = on;
DO $$
DECLARE r record; l text; fill text;
BEGIN
  FOREACH fill IN ARRAY ARRAY['auto', 'off'] LOOP
    PERFORM set_config('gpusort.parallel_fill', fill, false);
    FOR r IN SELECT * FROM shapes WHERE n IN (2, 5, 6, 13, 16) ORDER BY n LOOP
      FOR l IN EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) ' || r.q LOOP
        IF l ~ '(GpuSort|GpuSortFill|Gather|Rows Stored|Finished|Time:|Execution Time|Seq Scan)' THEN
          INSERT INTO phases (n, c, plan) VALUES (r.n, CASE fill WHEN 'auto' THEN 3 ELSE 5 END, l);
        END IF;
      END LOOP;
    END LOOP;
  END LOOP;
  RESET gpusort.parallel_fill;
END $$;
SELECT n, CASE c WHEN 3 THEN 'auto' ELSE 'off' END AS parallel_fill, plan FROM phases ORDER BY n, c, id;

\echo '== results checked: md5 of the sort-key sequence, GpuSort against native'
CREATE FUNCTION pg_temp.key_md5(q text, keys text, gpusort bool) RETURNS text LANGUAGE plpgsql AS $$
DECLARE h text;
BEGIN
  PERFORM set_config('gpusort.enabled', gpusort::text, true);
  EXECUTE format('SELECT md5(string_agg((%s)::text, E''\n'')) FROM (%s) s', keys, q) INTO h;
  RETURN h;
END $$;
SELECT n, what, pg_temp.key_md5(q, k, true) = pg_temp.key_md5(q, k, false) AS same_keys
FROM shapes JOIN (VALUES (2, 'f'), (5, 'email'), (6, 'name'), (13, 'id'), (14, 'f'), (4, 'i')) c(n, k) USING (n)
ORDER BY n;
