DROP INDEX "events_stream_idx";--> statement-breakpoint
DROP INDEX "memories_project_idx";--> statement-breakpoint
DROP INDEX "opportunities_recent_idx";--> statement-breakpoint
DROP INDEX "opportunities_status_idx";--> statement-breakpoint
DROP INDEX "opportunities_type_idx";--> statement-breakpoint
DROP INDEX "opportunities_evaluation_idx";--> statement-breakpoint
CREATE INDEX "opportunities_status_type_idx" ON "opportunities" USING btree ("project_id","status","contribution_type","received_at" DESC NULLS FIRST,"id");--> statement-breakpoint
CREATE INDEX "events_stream_idx" ON "events" USING btree ("project_id","distinct_id","occurred_at" DESC NULLS FIRST,"id" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "memories_project_idx" ON "memories" USING btree ("project_id","created_at" DESC NULLS FIRST,"id");--> statement-breakpoint
CREATE INDEX "opportunities_recent_idx" ON "opportunities" USING btree ("project_id","received_at" DESC NULLS FIRST,"id");--> statement-breakpoint
CREATE INDEX "opportunities_status_idx" ON "opportunities" USING btree ("project_id","status","received_at" DESC NULLS FIRST,"id");--> statement-breakpoint
CREATE INDEX "opportunities_type_idx" ON "opportunities" USING btree ("project_id","contribution_type","received_at" DESC NULLS FIRST,"id");--> statement-breakpoint
CREATE INDEX "opportunities_evaluation_idx" ON "opportunities" USING btree ("project_id","evaluation","received_at" DESC NULLS FIRST,"id");