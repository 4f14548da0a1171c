-- Issue 29: what metrics that answer questions and come to the team keep.
--  * retention, exact from cells kept as events arrive (db/schema.ts retention_queue): the ingest
--    statement queues each first sighting, retention_apply() folds queued rows into the cells,
--    retention_rebuild() makes a project's cells again from daily_event_users (this migration,
--    a time-zone change, a bulk load); an index of daily_event_users by user serves the apply;
--  * alerts and alert_events (each firing and recovery), digests (one schedule per project);
--  * webhooks: the Slack format, v1a (ed25519) signatures beside v1, a per-endpoint rate limit,
--    and why the worker disabled an endpoint.
CREATE TABLE "alert_events" (
	"id" text PRIMARY KEY NOT NULL,
	"alert_id" text NOT NULL,
	"project_id" text NOT NULL,
	"kind" text NOT NULL,
	"day" date NOT NULL,
	"value" double precision NOT NULL,
	"detail" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"at" timestamp with time zone NOT NULL,
	CONSTRAINT "alert_events_kind_check" CHECK ("kind" in ('triggered', 'resolved'))
);
--> statement-breakpoint
CREATE TABLE "alerts" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"name" text NOT NULL,
	"metric" text NOT NULL,
	"event" text,
	"condition" text NOT NULL,
	"threshold" double precision,
	"enabled" boolean DEFAULT true NOT NULL,
	"state" text DEFAULT 'ok' NOT NULL,
	"last_value" double precision,
	"last_evaluated_at" timestamp with time zone,
	"created_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "alerts_metric_check" CHECK ("metric" in ('registrations', 'daily_users', 'event_count', 'event_users', 'pending_opportunities', 'oldest_pending_age_hours')),
	CONSTRAINT "alerts_condition_check" CHECK ("condition" in ('above', 'below', 'anomaly')),
	CONSTRAINT "alerts_state_check" CHECK ("state" in ('ok', 'firing'))
);
--> statement-breakpoint
CREATE TABLE "digests" (
	"project_id" text PRIMARY KEY NOT NULL,
	"frequency" text NOT NULL,
	"hour" smallint NOT NULL,
	"weekday" smallint,
	"enabled" boolean DEFAULT true NOT NULL,
	"last_period_end" date,
	"last_sent_at" timestamp with time zone,
	"created_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "digests_frequency_check" CHECK ("frequency" in ('daily', 'weekly')),
	CONSTRAINT "digests_hour_check" CHECK ("hour" between 0 and 23),
	CONSTRAINT "digests_weekday_check" CHECK (("frequency" = 'daily' and "weekday" is null) or ("frequency" = 'weekly' and "weekday" between 1 and 7))
);
--> statement-breakpoint
CREATE TABLE "retention_cells" (
	"project_id" text NOT NULL,
	"start_event" text NOT NULL,
	"return_event" text NOT NULL,
	"grain" text NOT NULL,
	"cohort" date NOT NULL,
	"k" integer NOT NULL,
	"users" bigint NOT NULL,
	CONSTRAINT "retention_cells_project_id_start_event_return_event_grain_cohort_k_pk" PRIMARY KEY("project_id","start_event","return_event","grain","cohort","k")
);
--> statement-breakpoint
CREATE TABLE "retention_cohorts" (
	"project_id" text NOT NULL,
	"event" text NOT NULL,
	"day" date NOT NULL,
	"users" bigint NOT NULL,
	CONSTRAINT "retention_cohorts_project_id_event_day_pk" PRIMARY KEY("project_id","event","day")
);
--> statement-breakpoint
CREATE TABLE "retention_queue" (
	"project_id" text NOT NULL,
	"id" bigint GENERATED ALWAYS AS IDENTITY (sequence name "retention_queue_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"event" text NOT NULL,
	"day" date NOT NULL,
	"distinct_id" text NOT NULL,
	CONSTRAINT "retention_queue_project_id_id_pk" PRIMARY KEY("project_id","id")
);
--> statement-breakpoint
ALTER TABLE "webhooks" ADD COLUMN "format" text DEFAULT 'standard' NOT NULL;--> statement-breakpoint
ALTER TABLE "webhooks" ADD COLUMN "signature_schemes" text[] DEFAULT '{v1}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "webhooks" ADD COLUMN "signing_key" text;--> statement-breakpoint
ALTER TABLE "webhooks" ADD COLUMN "public_key" text;--> statement-breakpoint
ALTER TABLE "webhooks" ADD COLUMN "rate_limit" integer;--> statement-breakpoint
ALTER TABLE "webhooks" ADD COLUMN "disabled_reason" text;--> statement-breakpoint
ALTER TABLE "alert_events" ADD CONSTRAINT "alert_events_alert_id_alerts_id_fk" FOREIGN KEY ("alert_id") REFERENCES "public"."alerts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alert_events" ADD CONSTRAINT "alert_events_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alerts" ADD CONSTRAINT "alerts_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alerts" ADD CONSTRAINT "alerts_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "digests" ADD CONSTRAINT "digests_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "digests" ADD CONSTRAINT "digests_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "alert_events_project_idx" ON "alert_events" USING btree ("project_id","at" DESC NULLS LAST,"id");--> statement-breakpoint
CREATE INDEX "alert_events_alert_idx" ON "alert_events" USING btree ("alert_id","at" DESC NULLS LAST,"id");--> statement-breakpoint
CREATE INDEX "alerts_project_idx" ON "alerts" USING btree ("project_id","created_at","id");--> statement-breakpoint
CREATE INDEX "retention_queue_user_idx" ON "retention_queue" USING btree ("project_id","distinct_id","event","day");--> statement-breakpoint
CREATE INDEX "daily_event_users_user_idx" ON "daily_event_users" USING btree ("project_id","distinct_id","event","day");--> statement-breakpoint
ALTER TABLE "webhooks" ADD CONSTRAINT "webhooks_signing_key_sealed_check" CHECK ("signing_key" is null or "signing_key" like 'enc:%');--> statement-breakpoint
ALTER TABLE "webhooks" ADD CONSTRAINT "webhooks_format_check" CHECK ("format" in ('standard', 'slack'));--> statement-breakpoint
ALTER TABLE "webhooks" ADD CONSTRAINT "webhooks_signature_schemes_check" CHECK ("signature_schemes" <@ array['v1', 'v1a']::text[] and cardinality("signature_schemes") >= 1);--> statement-breakpoint
ALTER TABLE "webhooks" ADD CONSTRAINT "webhooks_rate_limit_check" CHECK ("rate_limit" is null or "rate_limit" between 1 and 1000);
--> statement-breakpoint
-- The Monday of a date's ISO week (pure date arithmetic: no time zone).
CREATE OR REPLACE FUNCTION retention_week(d date) RETURNS date LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$ SELECT d - (extract(isodow from d)::int - 1) $$;
--> statement-breakpoint
-- Folds up to max_rows queued first sightings of project p into its cells; returns how many it
-- took. One caller at a time per project (a transaction-level advisory lock, taken before the
-- statement that reads, so it sees every apply committed before it). What a user had applied
-- before = their daily_event_users rows less every row still queued (this batch's rows
-- included: its DELETE is not seen by the rest of the statement); a row and its queue entry
-- commit together, so any snapshot sees both or neither. What a user's rows contribute: for each
-- start event A (first day f = their least day of A), a day cell (A, B, f, d - f) per day d >= f
-- they did B, a week cell (A, B, week(f), weeks between) per week with such a day, and a cohort
-- (A, f). A start whose first day stays gains only the batch's rows; one that is new or moved
-- earlier takes out what the old first day gave and puts in what the new one gives.
CREATE OR REPLACE FUNCTION retention_apply(p text, max_rows integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE applied integer;
BEGIN
  -- Nothing queued that has committed: nothing to fold, no lock to take (a fold under way still
  -- shows the rows it took until it commits, so this never skips one).
  IF NOT EXISTS (SELECT 1 FROM retention_queue WHERE project_id = p) THEN RETURN 0; END IF;
  PERFORM pg_advisory_xact_lock(hashtextextended('growthdesk.retention:' || p, 0));
  WITH taken AS (
    SELECT id FROM retention_queue WHERE project_id = p ORDER BY id LIMIT max_rows
  ),
  batch AS (
    DELETE FROM retention_queue q USING taken t WHERE q.project_id = p AND q.id = t.id
    RETURNING q.distinct_id, q.event, q.day
  ),
  b AS (SELECT DISTINCT distinct_id, event, day FROM batch),
  u AS (SELECT DISTINCT distinct_id FROM b),
  -- What was applied before: the users' rows less every row still queued (this batch included:
  -- its deletion is not seen by the other parts of the statement).
  before AS (
    SELECT d.distinct_id, d.event, d.day
    FROM u JOIN daily_event_users d ON d.project_id = p AND d.distinct_id = u.distinct_id
    WHERE NOT EXISTS (SELECT 1 FROM retention_queue q
                      WHERE q.project_id = p AND q.distinct_id = d.distinct_id AND q.event = d.event AND q.day = d.day)
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
  SELECT (SELECT count(*) FROM batch) + 0 * ((SELECT count(*) FROM cells) + (SELECT count(*) FROM cohorts)) INTO applied;
  RETURN applied;
END $$;
--> statement-breakpoint
-- Everything of a project again from daily_event_users (migration, time-zone change, bulk load).
CREATE OR REPLACE FUNCTION retention_rebuild(p text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('growthdesk.retention:' || p, 0));
  DELETE FROM retention_queue WHERE project_id = p;
  DELETE FROM retention_cells WHERE project_id = p;
  DELETE FROM retention_cohorts WHERE project_id = p;
  WITH f AS (SELECT distinct_id, event, min(day) AS f FROM daily_event_users WHERE project_id = p GROUP BY 1, 2),
  cohorts AS (
    INSERT INTO retention_cohorts (project_id, event, day, users)
    SELECT p, event, f, count(*) FROM f GROUP BY event, f
  ),
  pairs AS (
    SELECT s.event AS se, x.event AS re, s.f, x.day
    FROM f s JOIN daily_event_users x ON x.project_id = p AND x.distinct_id = s.distinct_id AND x.day >= s.f
  )
  INSERT INTO retention_cells (project_id, start_event, return_event, grain, cohort, k, users)
  SELECT p, se, re, 'day', f, day - f, count(*) FROM pairs GROUP BY se, re, f, day - f
  UNION ALL
  SELECT p, se, re, 'week', retention_week(f), (wk - retention_week(f)) / 7, count(*)
  FROM (SELECT DISTINCT s.distinct_id, s.event AS se, x.event AS re, s.f, retention_week(x.day) AS wk
        FROM f s JOIN daily_event_users x ON x.project_id = p AND x.distinct_id = s.distinct_id AND x.day >= s.f) w
  GROUP BY se, re, retention_week(f), (wk - retention_week(f)) / 7;
END $$;
--> statement-breakpoint
-- A deleted project's retention rows go with its events (no foreign keys, as for daily_event_users).
CREATE OR REPLACE FUNCTION projects_delete_event_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM events WHERE project_seq = OLD.seq;
  DELETE FROM daily_event_users WHERE project_id = OLD.id;
  DELETE FROM retention_queue WHERE project_id = OLD.id;
  DELETE FROM retention_cells WHERE project_id = OLD.id;
  DELETE FROM retention_cohorts WHERE project_id = OLD.id;
  RETURN OLD;
END $$;
--> statement-breakpoint
-- The cells of the data already there.
SELECT retention_rebuild(id) FROM projects;
