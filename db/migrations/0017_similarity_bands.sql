-- Similarity of opportunities with a bounded search (issue 28): MinHash bands of the words of
-- key_information, tied to the project, in an int[] with a GIN index. A text's candidates are
-- the rows sharing one of its bands (`&&`: 24 short posting lists), at most a fixed number per
-- tier, then ranked by pg_trgm's exact similarity() (db/repositories/opportunities.ts,
-- docs/design.md). The trigram index, whose scan read every posting list of a text's trigrams
-- and rechecked every row half-alike, is no longer used.
--
-- 64 MinHash values of the set of words (to_tsvector('simple'): lowercased, no stemming; first
-- 1,000 characters), hash i of a word = hashint4extended(hashtext(word), i). Bands:
--   0–15  "loose": values 0–31, 2 each (a pair at word Jaccard 0.5 shares one with p ≈ 0.99, 0.3: 0.78)
--   16–23 "strict": values 0–63, 8 each (Jaccard 0.9: p ≈ 0.98, 0.8: 0.77, 0.5: 0.03)
-- Each band is hashtext(project id, band number, its values). A text without words has none.
-- The index without fastupdate: a pending list (fastupdate's default) is read whole by every
-- search, and after a few thousand submissions that cost 100–400 ms a search (measured).
CREATE OR REPLACE FUNCTION opportunity_similarity_bands(project_id text, t text) RETURNS integer[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
  WITH mh AS (
    SELECT s, min((hashint4extended(w.h, s) >> 32)::int) AS m
    FROM (SELECT hashtext(x) AS h FROM unnest(tsvector_to_array(to_tsvector('simple'::regconfig, left(t, 1000)))) x) w
    CROSS JOIN generate_series(0, 63) s
    GROUP BY s
  )
  SELECT coalesce(array_agg(hashtext(project_id || ':' || band || ':' || mins) ORDER BY band), '{}')
  FROM (
    SELECT s / 2 AS band, string_agg(m::text, ',' ORDER BY s) AS mins FROM mh WHERE s < 32 GROUP BY 1
    UNION ALL
    SELECT 16 + s / 8, string_agg(m::text, ',' ORDER BY s) FROM mh GROUP BY 1
  ) b
$$;
--> statement-breakpoint
DROP INDEX "opportunities_key_information_trgm_idx";--> statement-breakpoint
ALTER TABLE "opportunities" ADD COLUMN "similarity_bands" integer[] GENERATED ALWAYS AS (opportunity_similarity_bands(project_id, key_information)) STORED NOT NULL;--> statement-breakpoint
CREATE INDEX "opportunities_similarity_bands_idx" ON "opportunities" USING gin ("similarity_bands") WITH (fastupdate=off);
