-- Triage: tags, comments, saved views, assignees, merges and the similarity of opportunities.
-- pg_trgm ships with PostgreSQL's contrib (a trusted extension: a database owner may create it)
-- and with PGlite (loaded by db/client.ts).
CREATE EXTENSION IF NOT EXISTS pg_trgm;
--> statement-breakpoint
CREATE TABLE "comments" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"opportunity_id" text NOT NULL,
	"parent_id" text,
	"author_user_id" text,
	"body" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"edited_at" timestamp with time zone,
	"deleted_at" timestamp with time zone,
	CONSTRAINT "comments_body_length" CHECK (char_length("comments"."body") <= 4000)
);
--> statement-breakpoint
CREATE TABLE "opportunity_tags" (
	"opportunity_id" text NOT NULL,
	"tag_id" text NOT NULL,
	"project_id" text NOT NULL,
	"received_at" timestamp with time zone NOT NULL,
	CONSTRAINT "opportunity_tags_opportunity_id_tag_id_pk" PRIMARY KEY("opportunity_id","tag_id")
);
--> statement-breakpoint
CREATE TABLE "saved_views" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"user_id" text NOT NULL,
	"name" text NOT NULL,
	"filters" jsonb NOT NULL,
	"shared" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tags" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "opportunities" ADD COLUMN "report_count" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "opportunities" ADD COLUMN "merged_into" text;--> statement-breakpoint
ALTER TABLE "opportunities" ADD COLUMN "merged_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "opportunities" ADD COLUMN "merged_by" text;--> statement-breakpoint
ALTER TABLE "opportunities" ADD COLUMN "assignee_user_id" text;--> statement-breakpoint
ALTER TABLE "review_history" ADD COLUMN "action" text DEFAULT 'review' NOT NULL;--> statement-breakpoint
ALTER TABLE "comments" ADD CONSTRAINT "comments_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "comments" ADD CONSTRAINT "comments_opportunity_id_opportunities_id_fk" FOREIGN KEY ("opportunity_id") REFERENCES "public"."opportunities"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "comments" ADD CONSTRAINT "comments_parent_id_comments_id_fk" FOREIGN KEY ("parent_id") REFERENCES "public"."comments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "comments" ADD CONSTRAINT "comments_author_user_id_users_id_fk" FOREIGN KEY ("author_user_id") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "opportunity_tags" ADD CONSTRAINT "opportunity_tags_opportunity_id_opportunities_id_fk" FOREIGN KEY ("opportunity_id") REFERENCES "public"."opportunities"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "opportunity_tags" ADD CONSTRAINT "opportunity_tags_tag_id_tags_id_fk" FOREIGN KEY ("tag_id") REFERENCES "public"."tags"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "opportunity_tags" ADD CONSTRAINT "opportunity_tags_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "saved_views" ADD CONSTRAINT "saved_views_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "saved_views" ADD CONSTRAINT "saved_views_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tags" ADD CONSTRAINT "tags_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "comments_opportunity_idx" ON "comments" USING btree ("opportunity_id","created_at","id");--> statement-breakpoint
CREATE INDEX "opportunity_tags_listing_idx" ON "opportunity_tags" USING btree ("tag_id","received_at" DESC NULLS FIRST,"opportunity_id");--> statement-breakpoint
CREATE UNIQUE INDEX "saved_views_owner_name_key" ON "saved_views" USING btree ("project_id","user_id",lower("name"));--> statement-breakpoint
CREATE UNIQUE INDEX "tags_project_name_key" ON "tags" USING btree ("project_id",lower("name"));--> statement-breakpoint
ALTER TABLE "opportunities" ADD CONSTRAINT "opportunities_merged_into_opportunities_id_fk" FOREIGN KEY ("merged_into") REFERENCES "public"."opportunities"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "opportunities" ADD CONSTRAINT "opportunities_merged_by_users_id_fk" FOREIGN KEY ("merged_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "opportunities" ADD CONSTRAINT "opportunities_assignee_user_id_users_id_fk" FOREIGN KEY ("assignee_user_id") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "opportunities_assignee_idx" ON "opportunities" USING btree ("project_id","assignee_user_id","received_at" DESC NULLS FIRST,"id");--> statement-breakpoint
CREATE INDEX "opportunities_merged_into_idx" ON "opportunities" USING btree ("merged_into") WHERE "opportunities"."merged_into" is not null;--> statement-breakpoint
CREATE INDEX "opportunities_key_information_trgm_idx" ON "opportunities" USING gin ("key_information" gin_trgm_ops);--> statement-breakpoint
ALTER TABLE "opportunities" ADD CONSTRAINT "opportunities_report_count_check" CHECK ("opportunities"."report_count" >= 1);--> statement-breakpoint
ALTER TABLE "opportunities" ADD CONSTRAINT "opportunities_not_merged_into_itself" CHECK ("opportunities"."merged_into" <> "opportunities"."id");
--> statement-breakpoint
-- A merged opportunity leaves the counts (and so the listing's totals): the counters count only
-- rows with no merged_into, and a merge or an unmerge moves a row out of or back into them.
CREATE OR REPLACE FUNCTION opportunity_counts_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO opportunity_counts AS c (project_id, contribution_type, status, evaluation, n)
  SELECT project_id, contribution_type, status, evaluation, count(*) FROM new_rows WHERE merged_into IS NULL
  GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
  ON CONFLICT (project_id, contribution_type, status, evaluation) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION opportunity_counts_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE opportunity_counts c SET n = c.n - d.n
  FROM (SELECT project_id, contribution_type, status, evaluation, count(*) AS n FROM old_rows WHERE merged_into IS NULL GROUP BY 1, 2, 3, 4) d
  WHERE c.project_id = d.project_id AND c.contribution_type = d.contribution_type
    AND c.status = d.status AND c.evaluation = d.evaluation;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION opportunity_counts_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO opportunity_counts AS c (project_id, contribution_type, status, evaluation, n)
  SELECT project_id, contribution_type, status, evaluation, sum(d) FROM (
    SELECT project_id, contribution_type, status, evaluation, 1 AS d FROM new_rows WHERE merged_into IS NULL
    UNION ALL
    SELECT project_id, contribution_type, status, evaluation, -1 AS d FROM old_rows WHERE merged_into IS NULL
  ) x
  GROUP BY 1, 2, 3, 4 HAVING sum(d) <> 0 ORDER BY 1, 2, 3, 4
  ON CONFLICT (project_id, contribution_type, status, evaluation) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END $$;
