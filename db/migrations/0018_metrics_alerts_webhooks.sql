-- Issue 29: what metrics that answer questions and come to the team keep.
--  * user_event_firsts: each user's first day of each event, kept at ingestion (the cohorts of
--    retention), and an index of daily_event_users by user (the days a cohort's users returned);
--    retention reads these, never the raw events;
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
CREATE TABLE "user_event_firsts" (
	"project_id" text NOT NULL,
	"event" text NOT NULL,
	"distinct_id" text NOT NULL,
	"first_day" date NOT NULL,
	CONSTRAINT "user_event_firsts_project_id_event_distinct_id_pk" PRIMARY KEY("project_id","event","distinct_id")
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
CREATE INDEX "user_event_firsts_cohort_idx" ON "user_event_firsts" USING btree ("project_id","event","first_day","distinct_id");--> statement-breakpoint
CREATE INDEX "daily_event_users_user_idx" ON "daily_event_users" USING btree ("project_id","event","distinct_id","day");--> statement-breakpoint
ALTER TABLE "webhooks" ADD CONSTRAINT "webhooks_signing_key_sealed_check" CHECK ("signing_key" is null or "signing_key" like 'enc:%');--> statement-breakpoint
ALTER TABLE "webhooks" ADD CONSTRAINT "webhooks_format_check" CHECK ("format" in ('standard', 'slack'));--> statement-breakpoint
ALTER TABLE "webhooks" ADD CONSTRAINT "webhooks_signature_schemes_check" CHECK ("signature_schemes" <@ array['v1', 'v1a']::text[] and cardinality("signature_schemes") >= 1);--> statement-breakpoint
ALTER TABLE "webhooks" ADD CONSTRAINT "webhooks_rate_limit_check" CHECK ("rate_limit" is null or "rate_limit" between 1 and 1000);
--> statement-breakpoint
-- The first days of the data already there.
INSERT INTO "user_event_firsts" ("project_id", "event", "distinct_id", "first_day")
SELECT "project_id", "event", "distinct_id", min("day") FROM "daily_event_users" GROUP BY 1, 2, 3;
