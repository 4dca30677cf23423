-- explain_json(query): the top plan node of EXPLAIN (ANALYZE, COSTS OFF,
-- TIMING ON, FORMAT JSON) of the query, as jsonb.
CREATE OR REPLACE FUNCTION explain_json(q text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE j json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING ON, FORMAT JSON) ' || q INTO j;
  RETURN j::jsonb -> 0 -> 'Plan';
END $$;

-- explain_json_later(q, later): the same for q planned under the current
-- settings and run only after the SQL later (a SET): a plan kept in a
-- prepared statement meets settings its planning did not see, as a plan
-- meets more rows than the planner expected.
CREATE OR REPLACE FUNCTION explain_json_later(q text, later text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE j json;
BEGIN
  EXECUTE 'PREPARE explain_later AS ' || q;
  EXECUTE 'EXPLAIN (COSTS OFF) EXECUTE explain_later';
  EXECUTE later;
  EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING ON, FORMAT JSON) EXECUTE explain_later' INTO j;
  DEALLOCATE explain_later;
  RETURN j::jsonb -> 0 -> 'Plan';
END $$;
