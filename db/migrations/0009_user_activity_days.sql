CREATE TABLE "user_activity_days" (
	"project_id" text NOT NULL,
	"day" date NOT NULL,
	"shard" smallint DEFAULT 0 NOT NULL,
	"users" bigint NOT NULL,
	CONSTRAINT "user_activity_days_project_id_day_shard_pk" PRIMARY KEY("project_id","day","shard")
);
--> statement-breakpoint
ALTER TABLE "user_activity_days" ADD CONSTRAINT "user_activity_days_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- users(day) = how many user_activity rows have last_active_day = day, per project, kept by
-- statement-level triggers from the exact rows each statement changed (OLD/NEW transition
-- tables, so concurrent ingestion cannot double-count or miss a move). Each backend adds to its
-- own shard (pid % 16) so concurrent batches do not queue on today's row; the UPDATE trigger uses
-- shards 16–31, because INSERT … ON CONFLICT fires both triggers one after the other, and a batch
-- holding rows of the first while waiting in the second could otherwise deadlock with another
-- batch of the same shard. Rows are written in key order. Deletes of a project being deleted
-- (the FK cascade) are skipped: its rows go with it.
CREATE FUNCTION user_activity_days_apply() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  s smallint := (pg_backend_pid() % 16 + CASE WHEN TG_OP = 'UPDATE' THEN 16 ELSE 0 END)::smallint;
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO user_activity_days AS c (project_id, day, shard, users)
    SELECT project_id, last_active_day, s, count(*) FROM new_rows GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (project_id, day, shard) DO UPDATE SET users = c.users + excluded.users;
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO user_activity_days AS c (project_id, day, shard, users)
    SELECT project_id, day, s, sum(d) FROM (
      SELECT project_id, last_active_day AS day, 1 AS d FROM new_rows
      UNION ALL
      SELECT project_id, last_active_day, -1 FROM old_rows
    ) x
    GROUP BY 1, 2 HAVING sum(d) <> 0 ORDER BY 1, 2
    ON CONFLICT (project_id, day, shard) DO UPDATE SET users = c.users + excluded.users;
  ELSE
    INSERT INTO user_activity_days AS c (project_id, day, shard, users)
    SELECT o.project_id, o.last_active_day, s, -count(*) FROM old_rows o
    WHERE EXISTS (SELECT 1 FROM projects p WHERE p.id = o.project_id)
    GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (project_id, day, shard) DO UPDATE SET users = c.users + excluded.users;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER user_activity_days_insert AFTER INSERT ON user_activity
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION user_activity_days_apply();
--> statement-breakpoint
CREATE TRIGGER user_activity_days_update AFTER UPDATE ON user_activity
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION user_activity_days_apply();
--> statement-breakpoint
CREATE TRIGGER user_activity_days_delete AFTER DELETE ON user_activity
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION user_activity_days_apply();
--> statement-breakpoint
-- The rows of the data already there.
INSERT INTO user_activity_days (project_id, day, shard, users)
SELECT project_id, last_active_day, 0, count(*) FROM user_activity GROUP BY 1, 2;
--> statement-breakpoint
-- Nothing reads user_activity by day any more; without this index a moved day is a HOT update.
DROP INDEX "user_activity_day_idx";
