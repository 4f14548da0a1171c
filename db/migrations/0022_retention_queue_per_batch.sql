-- Issue 31: ingestion's rollups at half their cost. Two per-row writes of the ingest statement go:
--  * retention_queue held one row per first sighting (a copy of each new daily_event_users row:
--    a heap tuple, two index entries and a sequence value each). It now holds one row per batch,
--    the batch's first sightings as arrays, and each new daily_event_users row carries that queue
--    row's id (batch; null for rows written otherwise: a rebuild, a bulk load). What a user had
--    applied before is their daily_event_users rows whose batch is no longer queued, the same set
--    as "their rows less every row still queued": a row and its batch's queue row commit together,
--    so any snapshot sees both or neither. retention_queue_user_idx ("still queued?" per row) goes.
--  * user_activity's foreign key checked the project once per new user; as for events and
--    daily_event_users (migration 0010), the ingest statement takes project_id from the project
--    row it share-locks, and a project's deletion deletes the rows by projects_delete_event_rows.
--    An AFTER trigger: the project is gone when user_activity's delete trigger runs, so it leaves
--    user_activity_days alone (whose own foreign key cascades), as under the cascade.
-- What is queued is folded first, by the former retention_apply (the queue's columns change),
-- with the queue locked so that no batch of a running instance queues a row after the fold
-- (a row left would make the NOT NULL columns below fail rather than be lost).
LOCK TABLE retention_queue IN ACCESS EXCLUSIVE MODE;
--> statement-breakpoint
SELECT retention_apply(q.project_id, 2147483647) FROM (SELECT DISTINCT project_id FROM retention_queue) q;
--> statement-breakpoint
ALTER TABLE "user_activity" DROP CONSTRAINT "user_activity_project_id_projects_id_fk";
--> statement-breakpoint
DROP INDEX "retention_queue_user_idx";--> statement-breakpoint
ALTER TABLE "daily_event_users" ADD COLUMN "batch" bigint;--> statement-breakpoint
ALTER TABLE "retention_queue" ADD COLUMN "events" text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "retention_queue" ADD COLUMN "days" date[] NOT NULL;--> statement-breakpoint
ALTER TABLE "retention_queue" ADD COLUMN "distinct_ids" text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "retention_queue" DROP COLUMN "event";--> statement-breakpoint
ALTER TABLE "retention_queue" DROP COLUMN "day";--> statement-breakpoint
ALTER TABLE "retention_queue" DROP COLUMN "distinct_id";
--> statement-breakpoint
CREATE OR REPLACE FUNCTION projects_delete_event_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM events WHERE project_seq = OLD.seq;
  DELETE FROM daily_event_users WHERE project_id = OLD.id;
  DELETE FROM user_activity WHERE project_id = OLD.id;
  DELETE FROM retention_queue WHERE project_id = OLD.id;
  DELETE FROM retention_cells WHERE project_id = OLD.id;
  DELETE FROM retention_cohorts WHERE project_id = OLD.id;
  RETURN OLD;
END $$;
--> statement-breakpoint
-- As in migration 0018, with the queue's rows being batches: it takes whole queued batches in
-- order while fewer than max_rows first sightings are taken (at least one batch, so a slice may
-- exceed max_rows by one batch) and returns how many first sightings it took. What a user had
-- applied before = their daily_event_users rows whose batch is not queued (this slice's batches
-- included: its DELETE is not seen by the rest of the statement).
CREATE OR REPLACE FUNCTION retention_apply(p text, max_rows integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE applied integer;
BEGIN
  -- Nothing queued that has committed: nothing to fold, no lock to take (a fold under way still
  -- shows the rows it took until it commits, so this never skips one).
  IF NOT EXISTS (SELECT 1 FROM retention_queue WHERE project_id = p) THEN RETURN 0; END IF;
  PERFORM pg_advisory_xact_lock(hashtextextended('growthdesk.retention:' || p, 0));
  WITH queued AS (
    SELECT id FROM retention_queue WHERE project_id = p
  ),
  taken AS (
    SELECT id FROM (
      SELECT id, sum(cardinality(events)) OVER (ORDER BY id) - cardinality(events) AS before_it
      FROM retention_queue WHERE project_id = p
    ) t WHERE before_it < max_rows
  ),
  batch AS (
    DELETE FROM retention_queue q USING taken t WHERE q.project_id = p AND q.id = t.id
    RETURNING q.events, q.days, q.distinct_ids
  ),
  entries AS (
    SELECT x.distinct_id, x.event, x.day FROM batch, unnest(batch.distinct_ids, batch.events, batch.days) AS x(distinct_id, event, day)
  ),
  b AS (SELECT DISTINCT distinct_id, event, day FROM entries),
  u AS (SELECT DISTINCT distinct_id FROM b),
  -- What was applied before: the users' rows whose batch is not queued (this slice's included:
  -- its deletion is not seen by the other parts of the statement).
  before AS (
    SELECT d.distinct_id, d.event, d.day
    FROM u JOIN daily_event_users d ON d.project_id = p AND d.distinct_id = u.distinct_id
    WHERE d.batch IS NULL OR NOT EXISTS (SELECT 1 FROM queued q WHERE q.id = d.batch)
  ),
  after AS (SELECT * FROM before UNION ALL SELECT * FROM b),
  starts AS (
    SELECT a.distinct_id, a.event, a.f AS f_after, o.f AS f_before
    FROM (SELECT distinct_id, event, min(day) AS f FROM after GROUP BY 1, 2) a
    LEFT JOIN (SELECT distinct_id, event, min(day) AS f FROM before GROUP BY 1, 2) o USING (distinct_id, event)
  ),
  kept AS (SELECT * FROM starts WHERE f_before = f_after),
  moved AS (SELECT * FROM starts WHERE f_before IS DISTINCT FROM f_after),
  delta AS (
    -- starts that kept their first day: only the batch's rows are new
    SELECT s.event AS se, x.event AS re, 'day' AS grain, s.f_after AS cohort, x.day - s.f_after AS k, 1 AS n
    FROM kept s JOIN b x ON x.distinct_id = s.distinct_id AND x.day >= s.f_after
    UNION ALL
    SELECT w.se, w.re, 'week', retention_week(w.f), (w.wk - retention_week(w.f)) / 7, 1
    FROM (SELECT DISTINCT s.distinct_id, s.event AS se, s.f_after AS f, x.event AS re, retention_week(x.day) AS wk
          FROM kept s JOIN b x ON x.distinct_id = s.distinct_id AND x.day >= s.f_after) w
    WHERE NOT EXISTS (SELECT 1 FROM before o WHERE o.distinct_id = w.distinct_id AND o.event = w.re AND o.day >= w.f
                      AND retention_week(o.day) = w.wk)
    UNION ALL
    -- starts that are new or moved earlier: out with what the old first day gave, in with the new
    SELECT s.event, x.event, 'day', s.f_before, x.day - s.f_before, -1
    FROM moved s JOIN before x ON x.distinct_id = s.distinct_id AND x.day >= s.f_before
    UNION ALL
    SELECT w.se, w.re, 'week', retention_week(w.f), (w.wk - retention_week(w.f)) / 7, -1
    FROM (SELECT DISTINCT s.distinct_id, s.event AS se, s.f_before AS f, x.event AS re, retention_week(x.day) AS wk
          FROM moved s JOIN before x ON x.distinct_id = s.distinct_id AND x.day >= s.f_before) w
    UNION ALL
    SELECT s.event, x.event, 'day', s.f_after, x.day - s.f_after, 1
    FROM moved s JOIN after x ON x.distinct_id = s.distinct_id AND x.day >= s.f_after
    UNION ALL
    SELECT w.se, w.re, 'week', retention_week(w.f), (w.wk - retention_week(w.f)) / 7, 1
    FROM (SELECT DISTINCT s.distinct_id, s.event AS se, s.f_after AS f, x.event AS re, retention_week(x.day) AS wk
          FROM moved s JOIN after x ON x.distinct_id = s.distinct_id AND x.day >= s.f_after) w
  ),
  cells AS (
    INSERT INTO retention_cells AS c (project_id, start_event, return_event, grain, cohort, k, users)
    SELECT p, se, re, grain, cohort, k, sum(n) FROM delta GROUP BY se, re, grain, cohort, k HAVING sum(n) <> 0
    ORDER BY se, re, grain, cohort, k
    ON CONFLICT (project_id, start_event, return_event, grain, cohort, k) DO UPDATE SET users = c.users + excluded.users
    RETURNING 1
  ),
  cohorts AS (
    INSERT INTO retention_cohorts AS c (project_id, event, day, users)
    SELECT p, event, day, sum(n) FROM (
      SELECT event, f_before AS day, -1 AS n FROM moved WHERE f_before IS NOT NULL
      UNION ALL SELECT event, f_after, 1 FROM moved
    ) m GROUP BY event, day HAVING sum(n) <> 0 ORDER BY event, day
    ON CONFLICT (project_id, event, day) DO UPDATE SET users = c.users + excluded.users
    RETURNING 1
  )
  SELECT (SELECT count(*) FROM entries) + 0 * ((SELECT count(*) FROM cells) + (SELECT count(*) FROM cohorts)) INTO applied;
  RETURN applied;
END $$;
