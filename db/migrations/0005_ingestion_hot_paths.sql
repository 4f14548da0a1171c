-- Ingestion hot paths (README, design notes): a 4-byte project number leads the event indexes,
-- the stream index leads with the day, and the per-day counters are sharded by connection.
ALTER TABLE "projects" ADD COLUMN "seq" integer NOT NULL GENERATED ALWAYS AS IDENTITY (sequence name "projects_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1);--> statement-breakpoint
CREATE UNIQUE INDEX "projects_seq_key" ON "projects" USING btree ("seq");--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "project_seq" integer;--> statement-breakpoint
UPDATE "events" SET "project_seq" = "projects"."seq" FROM "projects" WHERE "projects"."id" = "events"."project_id";--> statement-breakpoint
ALTER TABLE "events" ALTER COLUMN "project_seq" SET NOT NULL;--> statement-breakpoint
DROP INDEX "events_stream_idx";--> statement-breakpoint
DROP INDEX "events_uuid_key";--> statement-breakpoint
CREATE UNIQUE INDEX "events_uuid_key" ON "events" USING btree ("project_seq","uuid");--> statement-breakpoint
CREATE INDEX "events_day_stream_idx" ON "events" USING btree ("project_seq","day","distinct_id","occurred_at" DESC NULLS FIRST,"id" DESC NULLS FIRST);--> statement-breakpoint
ALTER TABLE "daily_event_counts" ADD COLUMN "shard" smallint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "project_event_stats" ADD COLUMN "shard" smallint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "daily_event_counts" DROP CONSTRAINT "daily_event_counts_project_id_day_event_pk";--> statement-breakpoint
ALTER TABLE "project_event_stats" DROP CONSTRAINT "project_event_stats_pkey";--> statement-breakpoint
ALTER TABLE "daily_event_counts" ADD CONSTRAINT "daily_event_counts_project_id_day_event_shard_pk" PRIMARY KEY("project_id","day","event","shard");--> statement-breakpoint
ALTER TABLE "project_event_stats" ADD CONSTRAINT "project_event_stats_project_id_shard_pk" PRIMARY KEY("project_id","shard");
