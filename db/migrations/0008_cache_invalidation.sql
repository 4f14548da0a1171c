-- Every instance keeps credentials, roles and settings in memory (db/settings-cache.ts): a change
-- to any of them, by whatever writes it (any instance, the CLI, psql), tells every instance to
-- drop what it holds. One notification per statement, after the row changes, delivered at commit
-- (never for a rolled-back change); the payload is the table's name. Only the columns a cached
-- entry holds count: recording a key's use (last_used_at) notifies nobody.
CREATE FUNCTION "growthdesk_settings_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('growthdesk_settings', TG_TABLE_NAME);
	RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "api_keys_settings_changed" AFTER UPDATE OF "revoked_at", "expires_at", "kind", "user_id", "workspace_id", "project_id", "read_only", "hash" OR DELETE OR TRUNCATE ON "api_keys" FOR EACH STATEMENT EXECUTE FUNCTION "growthdesk_settings_changed"();
--> statement-breakpoint
CREATE TRIGGER "users_settings_changed" AFTER UPDATE OF "email", "workspace_id" OR DELETE OR TRUNCATE ON "users" FOR EACH STATEMENT EXECUTE FUNCTION "growthdesk_settings_changed"();
--> statement-breakpoint
CREATE TRIGGER "workspaces_settings_changed" AFTER UPDATE OF "disabled_tools" OR DELETE OR TRUNCATE ON "workspaces" FOR EACH STATEMENT EXECUTE FUNCTION "growthdesk_settings_changed"();
--> statement-breakpoint
CREATE TRIGGER "projects_settings_changed" AFTER UPDATE OF "slug", "name", "timezone", "workspace_id" OR DELETE OR TRUNCATE ON "projects" FOR EACH STATEMENT EXECUTE FUNCTION "growthdesk_settings_changed"();
--> statement-breakpoint
CREATE TRIGGER "memberships_settings_changed" AFTER UPDATE OR DELETE OR TRUNCATE ON "memberships" FOR EACH STATEMENT EXECUTE FUNCTION "growthdesk_settings_changed"();
