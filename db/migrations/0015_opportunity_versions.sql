-- Optimistic concurrency: every change of an opportunity bumps its version in the UPDATE that
-- makes it, and a precondition (If-Match, if_version) is a `version = $n` in that UPDATE.
-- Existing opportunities start at 1, as new ones do; a constant default adds the column
-- without rewriting the table (PostgreSQL 11+, PGlite).
ALTER TABLE "opportunities" ADD COLUMN "version" integer DEFAULT 1 NOT NULL;
