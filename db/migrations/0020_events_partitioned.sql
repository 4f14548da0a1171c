-- Issue 30: raw events partitioned by month of their day (docs/design.md, "Events partitioned by
-- day ranges"), so that EVENTS_RETENTION_DAYS drops whole months (plugins/event-retention.ts)
-- and the rollups, never touched, keep every day exact.
--
-- Lock: the conversion holds ACCESS EXCLUSIVE on events from its first statement to the end of
-- the migration's transaction (no ingestion, no event stream meanwhile; every other table is
-- free): about 9 s per million events on PostgreSQL 15 (docs/design.md has the run). Nothing is
-- lost or counted twice: the rows are copied in one INSERT … SELECT, ids kept, in the same
-- transaction that drops the old table.
LOCK TABLE "events" IN ACCESS EXCLUSIVE MODE;--> statement-breakpoint
ALTER TABLE "events" RENAME TO "events_unpartitioned";--> statement-breakpoint
ALTER INDEX "events_pkey" RENAME TO "events_unpartitioned_pkey";--> statement-breakpoint
ALTER INDEX "events_uuid_key" RENAME TO "events_unpartitioned_uuid_key";--> statement-breakpoint
ALTER INDEX "events_day_stream_idx" RENAME TO "events_unpartitioned_day_stream_idx";--> statement-breakpoint
CREATE TABLE "events" (
	"id" bigint DEFAULT nextval('events_id_seq'::regclass) NOT NULL,
	"project_id" text NOT NULL,
	"uuid" uuid NOT NULL,
	"event" text NOT NULL,
	"distinct_id" text NOT NULL,
	"occurred_at" timestamp with time zone NOT NULL,
	"day" date NOT NULL,
	"properties" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	"project_seq" integer NOT NULL
) PARTITION BY RANGE ("day");--> statement-breakpoint
-- The sequence goes with the new table (the old one's drop would take it along otherwise).
ALTER SEQUENCE "events_id_seq" OWNED BY "events"."id";--> statement-breakpoint
-- The month partitions covering [from_day, to_day], each named events_yYYYYmMM; those that exist
-- are left alone, so it is idempotent. Creators queue on an advisory lock (two instances creating
-- the same month would otherwise race); a month is created as a table of its own and then
-- attached, which takes SHARE UPDATE EXCLUSIVE on events (ingestion and reads go on), where
-- CREATE TABLE … PARTITION OF would take ACCESS EXCLUSIVE. No DEFAULT partition: a month that
-- holds rows there could not be created later. Returns how many months it created.
CREATE FUNCTION events_ensure_partitions(from_day date, to_day date) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  m date := date_trunc('month', from_day)::date;
  part text;
  created integer := 0;
BEGIN
  IF from_day IS NULL OR to_day IS NULL THEN RETURN 0; END IF;
  PERFORM pg_advisory_xact_lock(hashtext('events_ensure_partitions'));
  WHILE m <= to_day LOOP
    part := 'events_y' || to_char(m, 'YYYY') || 'm' || to_char(m, 'MM');
    IF NOT EXISTS (SELECT 1 FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                   WHERE i.inhparent = 'events'::regclass AND c.relname = part) THEN
      -- A table of that name left detached (a retention run stopped between detach and drop) goes first.
      IF to_regclass(quote_ident(part)) IS NOT NULL THEN EXECUTE format('DROP TABLE %I', part); END IF;
      EXECUTE format('CREATE TABLE %I (LIKE events INCLUDING DEFAULTS)', part);
      EXECUTE format('ALTER TABLE events ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', part, m, (m + interval '1 month')::date);
      created := created + 1;
    END IF;
    m := (m + interval '1 month')::date;
  END LOOP;
  RETURN created;
END $$;--> statement-breakpoint
SELECT events_ensure_partitions(min("day"), max("day")) FROM "events_unpartitioned";--> statement-breakpoint
INSERT INTO "events" ("id", "project_id", "uuid", "event", "distinct_id", "occurred_at", "day", "properties", "received_at", "project_seq")
  SELECT "id", "project_id", "uuid", "event", "distinct_id", "occurred_at", "day", "properties", "received_at", "project_seq" FROM "events_unpartitioned";--> statement-breakpoint
-- projects_delete_event_rows (migrations 0010, 0018) names events in its body, resolved when it
-- runs: from now on it deletes from the partitioned table.
DROP TABLE "events_unpartitioned";--> statement-breakpoint
-- The indexes after the copy (built in bulk, per partition). A partitioned table's unique index
-- must hold the partition key: the same uuid on the same day of the project is one event.
ALTER TABLE "events" ADD CONSTRAINT "events_id_day_pk" PRIMARY KEY ("id", "day");--> statement-breakpoint
CREATE UNIQUE INDEX "events_uuid_key" ON "events" USING btree ("project_seq", "uuid", "day");--> statement-breakpoint
CREATE INDEX "events_day_stream_idx" ON "events" USING btree ("project_seq","day","distinct_id","occurred_at" DESC NULLS FIRST,"id" DESC NULLS FIRST);
