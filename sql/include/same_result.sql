-- same_result(query, keys): 'same' when the query gives the same key sequence
-- (keys: a row expression over its columns) and the same multiset of rows
-- with GpuSort on as with it off; otherwise what differs.
CREATE OR REPLACE FUNCTION same_result(q text, keys text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  r_on text[]; r_off text[]; n bigint; bad bigint;
  keyq text := ' AS SELECT row_number() OVER () AS ord, ' || keys || ' FROM (' || q || ') sub';
  rowq text := format('SELECT array_agg(s::text ORDER BY s::text), count(*) FROM (%s) s', q);
BEGIN
  SET LOCAL gpusort.enabled = on;
  EXECUTE 'CREATE TEMP TABLE keys_on' || keyq;
  EXECUTE rowq INTO r_on, n;
  SET LOCAL gpusort.enabled = off;
  EXECUTE 'CREATE TEMP TABLE keys_off' || keyq;
  EXECUTE rowq INTO r_off;
  SET LOCAL gpusort.enabled = on;
  -- row comparison uses each type's equality: -0 = 0, NaN = NaN, NULL = NULL
  SELECT count(*) INTO bad FROM keys_on x_on FULL JOIN keys_off x_off USING (ord)
  WHERE x_on IS DISTINCT FROM x_off;
  DROP TABLE keys_on, keys_off;
  RETURN CASE WHEN bad > 0 THEN 'DIFFERENT key order'
              WHEN r_on IS DISTINCT FROM r_off THEN 'DIFFERENT rows'
              ELSE 'same (' || n || ' rows)' END;
END $$;
