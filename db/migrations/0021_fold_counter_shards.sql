-- Issue 31: reads flat in counter shards. Concurrent ingestion spreads a day's counters over up
-- to 16 shard rows (daily_event_counts; 32 for user_activity_days), and every read sums them.
-- fold_counter_shards(at) moves every shard row of a day before the project's "today" (at, in
-- its time zone) into one row of shard -1, which ingestion never writes: a finished day is then
-- one row per (day, event) whatever the ingestion concurrency was. Sums are unchanged (a move,
-- not a recount), so reads stay exact before, during and after a fold.
--
-- Why it never deadlocks and never makes a batch wrong:
--  * it waits for nothing: other folds are turned away (a try-lock), a project being changed
--    (FOR UPDATE by a card or time-zone change) and every counter row a batch holds are skipped
--    (SKIP LOCKED) and folded next time, and its target rows (shard -1) are written by no one
--    else; so no cycle can include it;
--  * a row it took is locked in its latest version, then deleted and added to shard -1 in the
--    same statement: a batch that wants to add to it waits for the commit, finds it gone and
--    inserts a fresh shard row (READ COMMITTED), so nothing is counted twice or lost;
--  * the projects are share-locked first, as ingestion locks them: a time-zone change (which
--    deletes and rebuilds a project's rollups under FOR UPDATE) runs wholly before or after it,
--    so a rebuild never misses the shard -1 rows of a fold that committed under its feet.
-- project_event_stats is not folded: it has no day, so it holds at most 16 rows a project
-- whatever the history, and it is the one row every batch updates (a fold would contend with
-- live ingestion and the rows would be back within the minute).
-- The partial indexes hold only the rows not yet folded (today's, and late events'): the fold
-- finds its work without reading a project's history.
CREATE INDEX "daily_event_counts_unfolded_idx" ON "daily_event_counts" USING btree ("project_id","day") WHERE "shard" <> -1;
--> statement-breakpoint
CREATE INDEX "user_activity_days_unfolded_idx" ON "user_activity_days" USING btree ("project_id","day") WHERE "shard" <> -1;
--> statement-breakpoint
CREATE FUNCTION fold_counter_shards(at timestamptz) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  ids text[];
  folded integer;
  total integer := 0;
BEGIN
  IF NOT pg_try_advisory_xact_lock(7369826221) THEN
    RETURN 0;
  END IF;
  SELECT coalesce(array_agg(l.id), '{}') INTO ids FROM (
    SELECT p.id FROM projects p
    WHERE EXISTS (SELECT 1 FROM daily_event_counts c
                  WHERE c.project_id = p.id AND c.shard <> -1 AND c.day < (at AT TIME ZONE p.timezone)::date)
       OR EXISTS (SELECT 1 FROM user_activity_days u
                  WHERE u.project_id = p.id AND u.shard <> -1 AND u.day < (at AT TIME ZONE p.timezone)::date)
    ORDER BY p.id
    FOR SHARE OF p SKIP LOCKED) l;
  IF cardinality(ids) = 0 THEN
    RETURN 0;
  END IF;

  WITH picked AS (
    SELECT c.project_id, c.day, c.event, c.shard
    FROM daily_event_counts c JOIN projects p ON p.id = c.project_id
    WHERE c.project_id = ANY (ids) AND c.shard <> -1 AND c.day < (at AT TIME ZONE p.timezone)::date
    FOR UPDATE OF c SKIP LOCKED
  ), moved AS (
    DELETE FROM daily_event_counts d USING picked
    WHERE d.project_id = picked.project_id AND d.day = picked.day AND d.event = picked.event AND d.shard = picked.shard
    RETURNING d.project_id, d.day, d.event, d.events, d.unique_users
  )
  INSERT INTO daily_event_counts AS t (project_id, day, event, shard, events, unique_users)
  SELECT project_id, day, event, -1, sum(events), sum(unique_users) FROM moved
  GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (project_id, day, event, shard) DO UPDATE SET
    events = t.events + excluded.events,
    unique_users = t.unique_users + excluded.unique_users;
  GET DIAGNOSTICS folded = ROW_COUNT;
  total := total + folded;

  -- A day's users may go down (they came back later) and a shard row may be negative: a group
  -- that sums to 0 adds nothing (no row is made for it).
  WITH picked AS (
    SELECT u.project_id, u.day, u.shard
    FROM user_activity_days u JOIN projects p ON p.id = u.project_id
    WHERE u.project_id = ANY (ids) AND u.shard <> -1 AND u.day < (at AT TIME ZONE p.timezone)::date
    FOR UPDATE OF u SKIP LOCKED
  ), moved AS (
    DELETE FROM user_activity_days d USING picked
    WHERE d.project_id = picked.project_id AND d.day = picked.day AND d.shard = picked.shard
    RETURNING d.project_id, d.day, d.users
  )
  INSERT INTO user_activity_days AS t (project_id, day, shard, users)
  SELECT project_id, day, -1, sum(users) FROM moved
  GROUP BY 1, 2 HAVING sum(users) <> 0 ORDER BY 1, 2
  ON CONFLICT (project_id, day, shard) DO UPDATE SET users = t.users + excluded.users;
  GET DIAGNOSTICS folded = ROW_COUNT;
  RETURN total + folded;
END $$;
