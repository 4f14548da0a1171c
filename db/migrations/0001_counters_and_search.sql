-- Exact opportunity totals per (project, type, status, evaluation), kept in step by
-- statement-level triggers, so listings and the overview never count a million rows.
CREATE FUNCTION opportunity_counts_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO opportunity_counts AS c (project_id, contribution_type, status, evaluation, n)
  SELECT project_id, contribution_type, status, evaluation, count(*) FROM new_rows
  GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
  ON CONFLICT (project_id, contribution_type, status, evaluation) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION opportunity_counts_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE opportunity_counts c SET n = c.n - d.n
  FROM (SELECT project_id, contribution_type, status, evaluation, count(*) AS n FROM old_rows GROUP BY 1, 2, 3, 4) d
  WHERE c.project_id = d.project_id AND c.contribution_type = d.contribution_type
    AND c.status = d.status AND c.evaluation = d.evaluation;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION opportunity_counts_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO opportunity_counts AS c (project_id, contribution_type, status, evaluation, n)
  SELECT project_id, contribution_type, status, evaluation, sum(d) FROM (
    SELECT project_id, contribution_type, status, evaluation, 1 AS d FROM new_rows
    UNION ALL
    SELECT project_id, contribution_type, status, evaluation, -1 AS d FROM old_rows
  ) x
  GROUP BY 1, 2, 3, 4 HAVING sum(d) <> 0 ORDER BY 1, 2, 3, 4
  ON CONFLICT (project_id, contribution_type, status, evaluation) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER opportunities_counts_insert AFTER INSERT ON opportunities
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION opportunity_counts_insert();
--> statement-breakpoint
CREATE TRIGGER opportunities_counts_delete AFTER DELETE ON opportunities
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION opportunity_counts_delete();
--> statement-breakpoint
CREATE TRIGGER opportunities_counts_update AFTER UPDATE ON opportunities
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION opportunity_counts_update();
--> statement-breakpoint
-- Full-text search over what a team writes: opportunities and memories (search_signals).
CREATE INDEX opportunities_search_idx ON opportunities USING gin (
  to_tsvector('english', contribution_type || ' ' || key_information || ' ' || reason || ' ' || suggested_action)
);
--> statement-breakpoint
-- array_to_string is only STABLE in general; for text[] it cannot change, so this wrapper is safe.
CREATE FUNCTION memory_document(content text, tags text[]) RETURNS tsvector
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT to_tsvector('english', content || ' ' || array_to_string(tags, ' ')) $$;
--> statement-breakpoint
CREATE INDEX memories_search_idx ON memories USING gin (memory_document(content, tags));
