-- Issue 30: read replicas with read-your-writes (db/replicas.ts). One row per caller that wrote
-- (`key:<keyId>` or `user:<userId>`): the primary's WAL insert position after its latest write.
-- A read by that caller may go to a replica only once the replica has replayed past it.
-- Unlogged: no WAL for a mark (a write costs no replication traffic), and after a crash of the
-- primary the table is empty, which only sends readers to replicas a little early (design.md).
CREATE UNLOGGED TABLE "read_marks" (
	"reader" text PRIMARY KEY NOT NULL,
	"lsn" pg_lsn NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL
);
