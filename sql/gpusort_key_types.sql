--
-- Sort keys that are not encoded whole: text under the C, a libc
-- (en_US.utf8) and an ICU (en-US-x-icu) collation, varchar, bytea, uuid,
-- interval, numeric, inet, bool, and types without an abbreviated key. The
-- GPU (or the CPU path) sorts by their leading bytes or abbreviated keys,
-- and the CPU orders the rows that tie (sort_keys.h). Each result equals
-- the native Sort's: the key sequence exactly, the rows as a multiset.
--
LOAD 'gpusort';
SET gpusort.min_rows = 0;
SET gpusort.cost_model = off;   -- the row threshold alone decides
SET gpusort.gpu_min_elements = 0;
SET max_parallel_workers_per_gather = 0;
\i sql/include/same_result.sql
\i sql/include/plan_lines.sql

-- the collations under test (test/setup.sh installs the en_US.UTF-8 locale)
CREATE COLLATION en_libc (provider = libc, locale = 'en_US.UTF-8');
CREATE COLLATION en_icu (provider = icu, locale = 'en-US');

-- strings of 0 to 2,000 bytes that share long prefixes, empty strings,
-- NULLs, multibyte UTF-8, case and accents (C and en_US order these
-- differently), duplicates
CREATE TABLE s (i int, t text, v varchar(2100), b bytea, grp int);
INSERT INTO s
SELECT i, x, x, convert_to(x, 'UTF8') || CASE WHEN i % 11 = 0 THEN '\x00'::bytea ELSE '' END, i % 7
FROM generate_series(1, 6000) i,
LATERAL (SELECT CASE i % 13
  WHEN 0 THEN NULL
  WHEN 1 THEN ''
  WHEN 2 THEN repeat('a', i % 2001)
  WHEN 3 THEN repeat('prefix/', 40) || (i % 97)::text
  WHEN 4 THEN (ARRAY['apple', 'Apple', 'APPLE', 'äpple', 'Äpfel', 'apfel', 'résumé', 'resume',
                     'Résumé', 'straße', 'strasse', 'Zebra', 'zebra', 'éclair', 'eclair'])[1 + i % 15]
  WHEN 5 THEN (ARRAY['日本語', '中文', '한국어', 'ελληνικά', 'русский', 'עברית', 'emoji 😀',
                     'naïve', 'coöperate', 'ﬁ ligature'])[1 + i % 10]
  WHEN 6 THEN 'customer_' || lpad((i % 500)::text, 9, '0')
  WHEN 7 THEN md5(i::text)
  WHEN 8 THEN ' ' || (i % 50)::text
  WHEN 9 THEN repeat('same sixteen b!!', 2) || (i % 300)::text
  ELSE substr(md5((i % 40)::text), 1, 1 + i % 9) END) x(x);
ANALYZE s;

-- single keys, every collation, all four ASC/DESC x NULLS orders
SELECT c, o, same_result(format('SELECT * FROM s ORDER BY t COLLATE %s %s', c, o), 't')
FROM unnest(ARRAY['"C"', 'en_libc', 'en_icu', '"POSIX"']) c,
     unnest(ARRAY['', 'NULLS FIRST', 'DESC', 'DESC NULLS LAST']) o
ORDER BY c, o;
SELECT same_result('SELECT * FROM s ORDER BY v', 'v');
SELECT same_result('SELECT * FROM s ORDER BY v COLLATE en_icu DESC', 'v');
SELECT same_result('SELECT * FROM s ORDER BY b', 'b');
SELECT same_result('SELECT * FROM s ORDER BY b DESC NULLS LAST', 'b');
-- a non-default operator class (text_pattern_ops: bytewise under any collation)
SELECT same_result('SELECT * FROM s ORDER BY t COLLATE en_icu USING ~<~', 't');
SELECT same_result('SELECT * FROM s ORDER BY t USING ~>~ NULLS LAST', 't');

-- multi-key mixes of text, int and numeric, DESC and NULLS FIRST
SELECT same_result('SELECT * FROM s ORDER BY grp, t COLLATE en_icu DESC NULLS FIRST, i', 'grp, t, i');
SELECT same_result('SELECT * FROM s ORDER BY t NULLS FIRST, i DESC', 't, i');
SELECT same_result('SELECT * FROM s ORDER BY grp DESC, t COLLATE en_libc, i', 'grp, t, i');
SELECT same_result('SELECT * FROM s ORDER BY length(t), t, i', 'length(t), t, i');
SELECT same_result('SELECT * FROM s ORDER BY t, b DESC, grp', 't, b, grp');
-- the builtin provider's collations (17's ucs_basic and pg_c_utf8, 18's
-- pg_unicode_fast) order by code point, which is UTF-8's byte order: they
-- take the GPU byte prefix as "C" does.  (15 and 16 have none: true, untested.)
SELECT coalesce(bool_and(same LIKE 'same%'), true) AS builtin_same,
       coalesce(bool_and(byte_prefix), true) AS builtin_byte_prefix
FROM (SELECT same_result(format('SELECT * FROM s ORDER BY t COLLATE %I %s', collname, o), 't') AS same,
             EXISTS (SELECT 1 FROM plan_lines(format('SELECT * FROM s ORDER BY t COLLATE %I', collname)) l
                     WHERE l ~ 'GPU Key Prefix: t COLLATE \w+ \(first \d+ bytes\)') AS byte_prefix
      FROM pg_collation, unnest(ARRAY['', 'DESC NULLS FIRST']) o
      WHERE collprovider = 'b' AND collencoding IN (-1, 6)) x;

-- what the plans say: the GPU's key prefix, and the keys left native
SELECT plan_lines('SELECT * FROM s ORDER BY t');
SELECT plan_lines('SELECT * FROM s ORDER BY t COLLATE en_icu DESC, i');
SELECT plan_lines('SELECT * FROM s ORDER BY grp, t COLLATE en_libc');
-- a libc collation: the first 32 bytes of the strxfrm key, the order checked
SELECT plan_lines('SELECT * FROM s ORDER BY t COLLATE en_libc');

-- EXPLAIN ANALYZE: the bytes the first sort took (8, 16, 24 or 32, as a sample
-- of the rows needs), rows ordered on the CPU, and the refinement sorts
-- that split runs of prefixes shared past those bytes (16,384 tied rows at
-- least)
CREATE TABLE names AS
SELECT i, 'customer_' || lpad((i * 7919 % 40000)::text, 9, '0') AS name,
       repeat('x', 16) || (i % 1000)::text AS tied16,
       'customer_account_number_' || lpad((i * 7919 % 40000)::text, 9, '0') AS longname,
       md5(i::text) AS hash
FROM generate_series(1, 40000) i;
ANALYZE names;
CREATE FUNCTION finish_line(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF l ~ 'GPU Key Prefix|Finished on CPU|Order Checked' THEN RETURN NEXT l; END IF;
  END LOOP;
END $$;
SELECT same_result('SELECT * FROM names ORDER BY name', 'name');
SELECT finish_line('SELECT * FROM names ORDER BY name');
SELECT same_result('SELECT * FROM names ORDER BY longname', 'longname');
SELECT finish_line('SELECT * FROM names ORDER BY longname');
SELECT same_result('SELECT * FROM names ORDER BY longname DESC', 'longname');
SELECT same_result('SELECT * FROM names ORDER BY hash', 'hash');
SELECT finish_line('SELECT * FROM names ORDER BY hash');
SELECT same_result('SELECT * FROM names ORDER BY tied16 DESC, i', 'tied16, i');
SELECT finish_line('SELECT * FROM names ORDER BY tied16 DESC, i');
SELECT same_result('SELECT * FROM names ORDER BY name COLLATE en_icu', 'name');
SELECT finish_line('SELECT * FROM names ORDER BY name COLLATE en_icu');
-- under ICU the GPU sorts by the first 32 bytes of the ICU sort key: strings
-- the collation orders apart by accent or case, canonically equivalent
-- strings (precomposed and combining accents) and strings that differ only
-- by an ignorable character have equal or tied keys, and the collation's
-- comparator (with its byte-order tie-break) finishes them; a
-- nondeterministic collation leaves such strings equal
CREATE TABLE icu_hard AS
SELECT i, (ARRAY['Müller', 'Mueller', 'muller', 'MÜLLER', 'Muller', 'Möller', 'Moller',
                 'e' || U&'\0301' || 'tienne', U&'\00e9' || 'tienne', 'Etienne', 'étienne',
                 'a' || U&'\200b' || 'b', 'ab', 'Ab', 'a-b', 'a b', ''])[1 + i % 17]
          || CASE WHEN i % 3 = 0 THEN '' ELSE ' ' || (i % 97)::text END AS name
FROM generate_series(1, 20000) i;
INSERT INTO icu_hard VALUES (0, NULL);
SELECT same_result('SELECT * FROM icu_hard ORDER BY name COLLATE en_icu, i', 'name, i');
SELECT same_result('SELECT * FROM icu_hard ORDER BY name COLLATE en_icu DESC NULLS LAST, i DESC', 'name, i');
SELECT same_result('SELECT name COLLATE en_icu AS n FROM icu_hard ORDER BY 1', 'n');
CREATE COLLATION icu_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
SELECT same_result('SELECT name COLLATE icu_ci AS n, i FROM icu_hard ORDER BY 1, 2', 'lower(n), i');
-- a single ICU or libc key whose tied rows are many: threads sort the runs
-- (1 + max_parallel_workers_per_gather of them), by ICU or strcoll as the
-- comparator does
SET max_parallel_workers_per_gather = 2;
SELECT same_result('SELECT name COLLATE en_libc AS n FROM icu_hard ORDER BY 1 DESC', 'n');
SELECT finish_line('SELECT name COLLATE en_libc AS n FROM icu_hard ORDER BY 1 DESC');
SELECT same_result('SELECT name COLLATE en_icu AS n FROM icu_hard ORDER BY 1 DESC NULLS FIRST', 'n');
SELECT finish_line('SELECT name COLLATE en_icu AS n FROM icu_hard ORDER BY 1 DESC NULLS FIRST');
SELECT same_result('SELECT name COLLATE icu_ci AS n FROM icu_hard ORDER BY 1', 'lower(n)');
SELECT finish_line('SELECT name COLLATE icu_ci AS n FROM icu_hard ORDER BY 1');
SET max_parallel_workers_per_gather = 0;
SELECT finish_line('SELECT name COLLATE en_icu AS n FROM icu_hard ORDER BY 1');
DROP COLLATION icu_ci;
-- the same under a libc collation: strxfrm keys, and every adjacent pair of
-- the sorted rows checked with strcoll (past a bound too)
SELECT same_result('SELECT * FROM icu_hard ORDER BY name COLLATE en_libc, i', 'name, i');
SELECT same_result('SELECT * FROM icu_hard ORDER BY name COLLATE en_libc DESC NULLS LAST, i DESC', 'name, i');
SELECT same_result('SELECT name COLLATE en_libc AS n FROM icu_hard ORDER BY 1', 'n');
SELECT finish_line('SELECT * FROM icu_hard ORDER BY name COLLATE en_libc, i');
DROP TABLE icu_hard;
-- many rows of few values: runs of identical values are settled without a
-- comparison (text); bytea values that differ only by trailing zero bytes
-- are not identical
CREATE TABLE dup AS
SELECT i, 'group_' || (i % 300) AS g, repeat('y', 40) || (i % 50) AS longdup,
       convert_to('k' || (i % 40), 'UTF8') ||
         CASE i % 3 WHEN 0 THEN '\x00'::bytea WHEN 1 THEN '\x0000'::bytea ELSE '' END AS b
FROM generate_series(1, 40000) i;
ANALYZE dup;
SELECT same_result('SELECT * FROM dup ORDER BY g', 'g');
SELECT finish_line('SELECT * FROM dup ORDER BY g');
SELECT same_result('SELECT * FROM dup ORDER BY g DESC', 'g');
SELECT finish_line('SELECT * FROM dup ORDER BY g DESC');
SELECT same_result('SELECT * FROM dup ORDER BY longdup DESC', 'longdup');
SELECT finish_line('SELECT * FROM dup ORDER BY longdup DESC');
-- NULLs tie among themselves: settled too, ascending or descending
CREATE TABLE dupnull AS
SELECT i, CASE WHEN i % 3 = 0 THEN NULL ELSE 'group_' || (i % 300) END AS g
FROM generate_series(1, 40000) i;
ANALYZE dupnull;
SELECT same_result('SELECT * FROM dupnull ORDER BY g DESC', 'g');
SELECT finish_line('SELECT * FROM dupnull ORDER BY g DESC');
SELECT same_result('SELECT * FROM dupnull ORDER BY g NULLS FIRST', 'g');
SELECT finish_line('SELECT * FROM dupnull ORDER BY g NULLS FIRST');
SELECT same_result('SELECT * FROM dupnull ORDER BY g DESC NULLS LAST, i', 'g, i');
SELECT same_result('SELECT * FROM dup ORDER BY b', 'b');
SELECT same_result('SELECT * FROM dup ORDER BY b DESC, i', 'b, i');
SELECT same_result('SELECT * FROM dup ORDER BY g, i DESC', 'g, i');
-- values that end or differ around the bytes the first sort and the finish's
-- cache hold (8, 16, 24, 32, 40 and 48), many tied
CREATE TABLE edge AS
SELECT i, v, convert_to(v, 'UTF8') || CASE WHEN i % 5 = 0 THEN '\x00'::bytea ELSE '' END AS b
FROM generate_series(1, 40000) i,
LATERAL (SELECT repeat('p', (i % 10) * 5) || chr(97 + i % 3) ||
                CASE WHEN i % 7 = 0 THEN '' ELSE repeat('q', i % 11) || (i % 13)::text END AS v) x;
ANALYZE edge;
SELECT same_result('SELECT * FROM edge ORDER BY v', 'v');
SELECT same_result('SELECT * FROM edge ORDER BY v DESC', 'v');
SELECT same_result('SELECT * FROM edge ORDER BY b', 'b');
SELECT same_result('SELECT * FROM edge ORDER BY b DESC, i', 'b, i');
-- under budgets from too small to ample (20 to 26 MB for these 150,000
-- rows) the finish hands the rows to the tuplesort, goes without its byte
-- cache, or takes it: the same rows each time
CREATE TABLE wide_tie AS
SELECT repeat('p', (i % 6) * 5) || chr(97 + i % 3) ||
       CASE WHEN i % 7 = 0 THEN '' ELSE repeat('q', i % 11) || (i % 1013)::text END AS v
FROM generate_series(1, 150000) i;
ANALYZE wide_tie;
CREATE FUNCTION same_under_budgets(q text, keys text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text; out text := '';
BEGIN
  FOR mb IN 20..26 LOOP
    PERFORM set_config('gpusort.work_mem', mb || 'MB', true);
    r := same_result(q, keys);
    out := out || CASE WHEN r LIKE 'same%' THEN 's' ELSE ' ' || mb || ': ' || r END;
  END LOOP;
  PERFORM set_config('gpusort.work_mem', '-1', true);
  RETURN out;
END $$;
SELECT same_under_budgets('SELECT v FROM wide_tie ORDER BY v DESC', 'v');

-- GROUP BY, DISTINCT, window functions and merge joins on text
SET enable_hashjoin = off;
SET enable_nestloop = off;
SET enable_hashagg = off;
SELECT same_result('SELECT t, count(*), sum(i) FROM s GROUP BY t ORDER BY t', 't');
SELECT same_result('SELECT DISTINCT t COLLATE en_icu AS t FROM s ORDER BY 1', 't');
SELECT same_result('SELECT DISTINCT ON (grp, t) grp, t FROM s ORDER BY grp, t', 'grp, t');
SELECT same_result('SELECT grp, t, rank() OVER (PARTITION BY grp ORDER BY t COLLATE en_icu) FROM s', 'grp, t, rank');
SELECT same_result('SELECT a.i, b.i AS j, a.t FROM s a JOIN s b ON a.t = b.t WHERE a.i % 5 = 0 ORDER BY a.t, a.i, b.i', 't, i, j');
SELECT plan_lines('SELECT t, count(*) FROM s GROUP BY t');
SELECT plan_lines('SELECT a.i, b.i FROM s a JOIN s b ON a.t = b.t');
RESET enable_hashjoin;
RESET enable_nestloop;
RESET enable_hashagg;

-- numeric: many digits, trailing zeros (1.0 = 1.00), NaN and +-Infinity
CREATE TABLE num (i int, n numeric, m numeric(12,2));
INSERT INTO num
SELECT i, CASE i % 17
  WHEN 0 THEN NULL WHEN 1 THEN 'NaN' WHEN 2 THEN 'Infinity' WHEN 3 THEN '-Infinity'
  WHEN 4 THEN 1.0 WHEN 5 THEN 1.00 WHEN 6 THEN 1 WHEN 7 THEN -0.000
  WHEN 8 THEN ('1' || repeat('0', i % 60) || '.' || repeat('9', i % 40))::numeric
  WHEN 9 THEN ('-0.' || repeat('0', i % 30) || '1')::numeric
  WHEN 10 THEN 123456789012345678901234567890.123456789 + i
  ELSE ((hashint4(i) % 1000000) / 7.0)::numeric END,
  ((hashint4(i + 1) % 100000000) / 100.0)::numeric(12,2)
FROM generate_series(1, 5000) i;
ANALYZE num;
SELECT same_result('SELECT * FROM num ORDER BY n', 'n');
SELECT same_result('SELECT * FROM num ORDER BY n DESC NULLS LAST, i', 'n, i');
SELECT same_result('SELECT * FROM num ORDER BY m, n NULLS FIRST', 'm, n');
SELECT same_result('SELECT * FROM num ORDER BY i % 10, n DESC', 'i % 10, n');
SELECT plan_lines('SELECT * FROM num ORDER BY n');

-- uuid, bytea, bool, interval, inet, and types without an abbreviated key
CREATE TABLE misc (i int, u uuid, bo bool, iv interval, ip inet, mo money, arr int[]);
INSERT INTO misc
SELECT i,
       CASE WHEN i % 19 = 0 THEN NULL
            ELSE (lpad(to_hex(i % 300), 8, '0') || substr(md5(i::text), 9, 24))::uuid END,
       CASE i % 3 WHEN 0 THEN NULL WHEN 1 THEN true ELSE false END,
       CASE i % 9 WHEN 0 THEN NULL WHEN 1 THEN '1 mon' WHEN 2 THEN '30 days'
                  WHEN 3 THEN '720 hours' WHEN 4 THEN '-1 day 3 hours'
                  ELSE make_interval(months => i % 13, days => i % 40, secs => (i % 86400) * 1.5) END,
       CASE WHEN i % 23 = 0 THEN NULL
            ELSE ('10.' || (i % 256) || '.' || (i * 7 % 256) || '.0/' || (8 + i % 25))::inet END,
       ((i * 37 % 1000) / 100.0)::money,
       ARRAY[i % 5, i % 3]
FROM generate_series(1, 5000) i;
ANALYZE misc;
SELECT k, o, same_result(format('SELECT * FROM misc ORDER BY %s %s, i', k, o), k || ', i')
FROM unnest(ARRAY['u', 'bo', 'iv', 'ip']) k,
     unnest(ARRAY['', 'NULLS FIRST', 'DESC', 'DESC NULLS LAST']) o
ORDER BY k, o;
SELECT same_result('SELECT * FROM misc ORDER BY bo, mo DESC, i', 'bo, mo, i');
-- a uuid or an interval is encoded whole: rows that tie on it are equal by
-- it, and the keys after it are encoded too (the NULL uuids tie)
SELECT same_result('SELECT * FROM misc ORDER BY u, ip DESC, i', 'u, ip, i');
SELECT same_result('SELECT * FROM misc ORDER BY iv DESC, bo NULLS FIRST, u, i', 'iv, bo, u, i');
SELECT plan_lines('SELECT * FROM misc ORDER BY u, ip');
SELECT same_result('SELECT * FROM misc ORDER BY i % 4, arr, i', 'i % 4, arr, i');
SELECT plan_lines('SELECT * FROM misc ORDER BY u');
SELECT plan_lines('SELECT * FROM misc ORDER BY iv, i');
SELECT plan_lines('SELECT * FROM misc ORDER BY i % 4, arr');
-- keys with no GPU words first keep the native Sort
SELECT plan_lines('SELECT * FROM misc ORDER BY mo');
SELECT plan_lines('SELECT * FROM misc ORDER BY arr, i');

-- without the GPU (gpusort.device = cpu), a Gather Merge over a key sorted
-- by its bytes stays, so that the workers sort in parallel (one process
-- sorting everything is slower); abbreviated keys go to one GpuSort
SET gpusort.device = cpu;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT plan_lines('SELECT * FROM s ORDER BY t');
SELECT plan_lines('SELECT * FROM num ORDER BY n');
-- the workers encode abbreviated keys and byte prefixes as they store the
-- rows (GpuSortFill); without the leader scanning, they store every row
SET parallel_leader_participation = off;
SELECT same_result('SELECT * FROM num ORDER BY n', 'n');
SELECT same_result('SELECT * FROM num ORDER BY n DESC NULLS LAST, i', 'n, i');
SELECT same_result('SELECT * FROM names ORDER BY name COLLATE en_icu DESC', 'name');
SELECT same_result('SELECT * FROM s ORDER BY grp DESC, t COLLATE en_icu, i', 'grp, t, i');
CREATE FUNCTION stored_by_workers(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE j json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON, COSTS OFF, TIMING OFF) ' || q INTO j;
  RETURN jsonb_path_query_first(j::jsonb, 'strict $.**?(@."Custom Plan Provider" == "GpuSort")."Rows Stored by Workers"');
END $$;
SELECT stored_by_workers('SELECT * FROM num ORDER BY n');
SELECT stored_by_workers('SELECT * FROM names ORDER BY name COLLATE en_icu');
SELECT stored_by_workers('SELECT * FROM s ORDER BY grp DESC, t COLLATE en_icu, i');
RESET parallel_leader_participation;
RESET gpusort.device;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;

-- a small LIMIT over keys the CPU finishes keeps the native top-N heap sort
SELECT plan_lines('SELECT * FROM s ORDER BY t LIMIT 10');
SELECT same_result('SELECT * FROM s ORDER BY t, i LIMIT 100000 OFFSET 5990', 't, i');
SELECT same_result('SELECT * FROM names ORDER BY name DESC, i LIMIT 70000 OFFSET 30000', 'name, i');

-- gpu_sort() of any element type: the array ORDER BY gives (ties of equal
-- values, such as numeric 1.0 and 1.00, compare equal)
CREATE FUNCTION array_same(col text, tbl text, coll text, descending bool, nulls_first bool)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  c text := CASE WHEN coll IS NULL THEN '' ELSE ' COLLATE ' || coll END;
  ok bool;
BEGIN
  EXECUTE format('SELECT gpu_sort(array_agg(%1$s)%2$s, %3$L, %4$L) = '
                 'array_agg(%1$s%2$s ORDER BY %1$s%2$s %5$s NULLS %6$s) FROM %7$s',
                 col, c, descending, nulls_first, CASE WHEN descending THEN 'DESC' ELSE 'ASC' END,
                 CASE WHEN nulls_first THEN 'FIRST' ELSE 'LAST' END, tbl) INTO ok;
  RETURN CASE WHEN ok THEN 'same' ELSE 'DIFFERENT' END;
END $$;
SELECT col, coll, d, nf, array_same(col, tbl, coll, d, nf)
FROM (VALUES ('t', 's', '"C"'), ('t', 's', 'en_libc'), ('t', 's', 'en_icu'), ('b', 's', NULL),
             ('name', 'names', '"C"'), ('n', 'num', NULL), ('m', 'num', NULL), ('u', 'misc', NULL),
             ('iv', 'misc', NULL), ('ip', 'misc', NULL), ('bo', 'misc', NULL),
             ('mo', 'misc', NULL)) v(col, tbl, coll),
     (VALUES (false), (true)) x(d), (VALUES (false), (true)) y(nf)
ORDER BY col, coll, d, nf;
SELECT gpu_sort(ARRAY['b', 'A', NULL, 'a', 'B', '']::text[] COLLATE "C");
SELECT gpu_sort(ARRAY['b', 'A', NULL, 'a', 'B', '']::text[] COLLATE en_icu, true);
SELECT gpu_sort(ARRAY[1.0, 'NaN', '-Infinity', 0.001, 1.00, NULL, 'Infinity']::numeric[],
                nulls_first => true);
SELECT gpu_sort('{}'::text[]), gpu_sort(NULL::uuid[]), gpu_sort(ARRAY[NULL, NULL]::text[]);

DROP TABLE s, names, num, misc, dup, dupnull, edge, wide_tie;
DROP COLLATION en_libc;
DROP COLLATION en_icu;
