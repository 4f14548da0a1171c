-- Issue 14: ingestion writes a row per event into events and a row per first sighting into
-- daily_event_users; their foreign keys checked the project once per row (~15 % of the ingest
-- statement's time). The ingest statement takes project_id from the project row it locks (for
-- share), so it cannot write a row of a missing project; the cascade on a project's deletion is
-- kept by this trigger (events by project_seq, which leads their indexes).
ALTER TABLE "daily_event_users" DROP CONSTRAINT "daily_event_users_project_id_projects_id_fk";--> statement-breakpoint
ALTER TABLE "events" DROP CONSTRAINT "events_project_id_projects_id_fk";--> statement-breakpoint
CREATE FUNCTION projects_delete_event_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM events WHERE project_seq = OLD.seq;
  DELETE FROM daily_event_users WHERE project_id = OLD.id;
  RETURN OLD;
END $$;--> statement-breakpoint
CREATE TRIGGER projects_delete_event_rows AFTER DELETE ON projects FOR EACH ROW EXECUTE FUNCTION projects_delete_event_rows();
