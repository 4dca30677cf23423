-- check_sort(a): compares gpu_sort(a) with native ORDER BY of the same
-- values in all four ASC/DESC x NULLS FIRST/LAST combinations and with the
-- defaults; returns 'ok' or the names of the combinations that differ.
-- float4 results must also hold the same multiset of values as the input
-- (text forms, so that -0 and NaN payloads are not lost silently).
\set QUIET on
CREATE OR REPLACE FUNCTION check_sort(a int4[]) RETURNS text LANGUAGE sql AS $$
SELECT CASE WHEN a IS NULL THEN '-' ELSE coalesce(string_agg(v.name, ', '), 'ok') END FROM (VALUES
 ('default', gpu_sort(a) IS NOT DISTINCT FROM
    (SELECT coalesce(array_agg(x ORDER BY x), '{}') FROM unnest(a) x)),
 ('asc nulls first', gpu_sort(a, false, true) IS NOT DISTINCT FROM
    (SELECT coalesce(array_agg(x ORDER BY x NULLS FIRST), '{}') FROM unnest(a) x)),
 ('asc nulls last', gpu_sort(a, false, false) IS NOT DISTINCT FROM
    (SELECT coalesce(array_agg(x ORDER BY x NULLS LAST), '{}') FROM unnest(a) x)),
 ('desc', gpu_sort(a, true) IS NOT DISTINCT FROM
    (SELECT coalesce(array_agg(x ORDER BY x DESC), '{}') FROM unnest(a) x)),
 ('desc nulls first', gpu_sort(a, true, true) IS NOT DISTINCT FROM
    (SELECT coalesce(array_agg(x ORDER BY x DESC NULLS FIRST), '{}') FROM unnest(a) x)),
 ('desc nulls last', gpu_sort(a, true, false) IS NOT DISTINCT FROM
    (SELECT coalesce(array_agg(x ORDER BY x DESC NULLS LAST), '{}') FROM unnest(a) x))
) v(name, ok) WHERE a IS NOT NULL AND NOT v.ok
$$;
CREATE OR REPLACE FUNCTION check_sort(a float4[]) RETURNS text LANGUAGE sql AS $$
SELECT CASE WHEN a IS NULL THEN '-' ELSE coalesce(string_agg(v.name, ', '), 'ok') END FROM (VALUES
 ('default', gpu_sort(a) IS NOT DISTINCT FROM
    (SELECT coalesce(array_agg(x ORDER BY x), '{}') FROM unnest(a) x)),
 ('asc nulls first', gpu_sort(a, false, true) IS NOT DISTINCT FROM
    (SELECT coalesce(array_agg(x ORDER BY x NULLS FIRST), '{}') FROM unnest(a) x)),
 ('asc nulls last', gpu_sort(a, false, false) IS NOT DISTINCT FROM
    (SELECT coalesce(array_agg(x ORDER BY x NULLS LAST), '{}') FROM unnest(a) x)),
 ('desc', gpu_sort(a, true) IS NOT DISTINCT FROM
    (SELECT coalesce(array_agg(x ORDER BY x DESC), '{}') FROM unnest(a) x)),
 ('desc nulls first', gpu_sort(a, true, true) IS NOT DISTINCT FROM
    (SELECT coalesce(array_agg(x ORDER BY x DESC NULLS FIRST), '{}') FROM unnest(a) x)),
 ('desc nulls last', gpu_sort(a, true, false) IS NOT DISTINCT FROM
    (SELECT coalesce(array_agg(x ORDER BY x DESC NULLS LAST), '{}') FROM unnest(a) x)),
 ('same values', (SELECT coalesce(array_agg(x::text ORDER BY x::text), '{}') FROM unnest(gpu_sort(a)) x)
    IS NOT DISTINCT FROM (SELECT coalesce(array_agg(x::text ORDER BY x::text), '{}') FROM unnest(a) x)),
 ('same values desc', (SELECT coalesce(array_agg(x::text ORDER BY x::text), '{}') FROM unnest(gpu_sort(a, true)) x)
    IS NOT DISTINCT FROM (SELECT coalesce(array_agg(x::text ORDER BY x::text), '{}') FROM unnest(a) x))
) v(name, ok) WHERE a IS NOT NULL AND NOT v.ok
$$;
\set QUIET off
