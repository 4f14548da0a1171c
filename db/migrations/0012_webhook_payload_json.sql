-- json keeps a payload's members in the order written (jsonb sorts them). The change rewrites
-- the outbox table under a lock; rows already there keep jsonb's order (their signatures are
-- made from what is stored, so they still verify).
ALTER TABLE "webhook_deliveries" ALTER COLUMN "payload" SET DATA TYPE json;