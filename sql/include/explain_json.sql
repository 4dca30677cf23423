-- explain_json(query): the top plan node of EXPLAIN (ANALYZE, COSTS OFF,
-- TIMING ON, FORMAT JSON) of the query, as jsonb.
CREATE OR REPLACE FUNCTION explain_json(q text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE j json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING ON, FORMAT JSON) ' || q INTO j;
  RETURN j::jsonb -> 0 -> 'Plan';
END $$;
