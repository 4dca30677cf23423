-- plan_lines(query): its EXPLAIN (COSTS OFF) lines, as rows to filter.
CREATE OR REPLACE FUNCTION plan_lines(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY EXECUTE 'EXPLAIN (COSTS OFF) ' || q;
END $$;
