-- Secrets at rest are sealed under a server key that is never in the database (db/secret-box.ts):
-- a stored webhook secret or app secret is `enc:v1:<key id>:…`. A SQL migration cannot seal the
-- rows already there (it never sees the key): the app seals them at its next start, right after
-- the migrations (plugins/secrets.ts, idempotent: the `enc:` prefix is the marker). So these
-- constraints are added NOT VALID: every write from now on must be sealed (an older instance still
-- running cannot add a plaintext secret), the rows from before are not checked here, and the start
-- validates each constraint once nothing is plaintext any more. No table is rewritten or scanned.
ALTER TABLE "app_secrets" ADD CONSTRAINT "app_secrets_value_sealed_check" CHECK ("value" like 'enc:%') NOT VALID;--> statement-breakpoint
ALTER TABLE "webhooks" ADD CONSTRAINT "webhooks_secret_sealed_check" CHECK ("secret" like 'enc:%' and ("previous_secret" is null or "previous_secret" like 'enc:%')) NOT VALID;
