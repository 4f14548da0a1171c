DROP INDEX "events_stream_idx";--> statement-breakpoint
DROP INDEX "events_uuid_key";--> statement-breakpoint
CREATE INDEX "events_day_stream_idx" ON "events" USING btree ("project_id","day","distinct_id","occurred_at" DESC NULLS FIRST,"id" DESC NULLS FIRST);--> statement-breakpoint
CREATE UNIQUE INDEX "events_uuid_key" ON "events" USING btree ("project_id",((occurred_at at time zone 'UTC')::date),"uuid");