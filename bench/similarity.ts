// npm run bench:similarity
//
// Which finds duplicates better: pg_trgm's trigram similarity of key_information (what the
// opportunities' trigram index serves) or full-text ranking over the search document (what
// `opportunities_search_idx` serves: type, key_information, reason and suggested action)? The
// labelled set (test/fixtures/similarity-set.json: clusters of the same finding in other words,
// and distractors) goes into a fresh in-memory PGlite with both indexes; every item's
// key_information is a query (itself excluded), and each method's first 5 answers are scored:
// precision@1, recall@5, MRR, and how often a distractor (no duplicate) gets no answer at all.
import { PGlite } from '@electric-sql/pglite'
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm'
import { readFileSync } from 'node:fs'
import { loadSimilaritySet, measure, type LabelledItem } from './similarity-metrics.ts'

const set = loadSimilaritySet()
const db = await PGlite.create({ extensions: { pg_trgm } })
await db.exec(`
  create extension pg_trgm;
  create table s (id text primary key, contribution_type text, key_information text, reason text, suggested_action text);
  create index s_trgm on s using gin (key_information gin_trgm_ops);
  create index s_fts on s using gin (to_tsvector('english', contribution_type || ' ' || key_information || ' ' || reason || ' ' || suggested_action));
`)
// The MinHash bands of migration 0017 (its first statement: the function), as a generated column.
const bandsFunction = readFileSync(new URL('../db/migrations/0017_similarity_bands.sql', import.meta.url), 'utf8').split('--> statement-breakpoint')[0]!
await db.exec(bandsFunction)
await db.exec(`
  alter table s add column b int[] generated always as (opportunity_similarity_bands('p', key_information)) stored;
  create index s_bands on s using gin (b);
`)
for (const i of set) {
  await db.query('insert into s values ($1, $2, $3, $4, $5)', [i.id, i.contribution_type, i.key_information, i.reason, i.suggested_action])
}

/** The query of a full-text method: the text's lexemes OR-ed (AND would need every word). */
const orQuery = 'replace(plainto_tsquery(\'english\', $1)::text, \' & \', \' | \')::tsquery'
const doc = 'to_tsvector(\'english\', contribution_type || \' \' || key_information || \' \' || reason || \' \' || suggested_action)'

/** What similarIn runs (db/repositories/opportunities.ts): candidates by band, ranked by similarity. */
const bands = (min: number) => `with q as (select opportunity_similarity_bands('p', $1) as qb)
  select id from (
    select id, similarity(key_information, $1) as sim from (
      (select id from (select id, b from s, q where id <> $2 and s.b && q.qb[17:24] limit 1000) r, q
       order by (select count(*) from unnest(r.b) x where x = any(q.qb[17:24])) desc limit 10)
      union
      (select id from (select id, b from s, q where id <> $2 and s.b && q.qb[1:16] limit 100) r, q
       order by (select count(*) from unnest(r.b) x where x = any(q.qb[1:16])) desc limit 30)
    ) c join s using (id)
  ) r where sim >= ${min} order by sim desc, id limit 5`

const methods: { name: string; setup?: string; sql: string }[] = [
  { name: 'MinHash bands, similarity ≥ 0.3 (chosen)', sql: bands(0.3) },
  { name: 'MinHash bands, similarity ≥ 0.25', sql: bands(0.25) },
  {
    name: 'pg_trgm similarity ≥ 0.3 (exhaustive)',
    setup: 'select set_config(\'pg_trgm.similarity_threshold\', \'0.3\', false)',
    sql: 'select id from s where id <> $2 and key_information % $1 order by similarity(key_information, $1) desc, id limit 5',
  },
  {
    name: 'pg_trgm similarity ≥ 0.2',
    setup: 'select set_config(\'pg_trgm.similarity_threshold\', \'0.2\', false)',
    sql: 'select id from s where id <> $2 and key_information % $1 order by similarity(key_information, $1) desc, id limit 5',
  },
  {
    name: 'pg_trgm similarity ≥ 0.25',
    setup: 'select set_config(\'pg_trgm.similarity_threshold\', \'0.25\', false)',
    sql: 'select id from s where id <> $2 and key_information % $1 order by similarity(key_information, $1) desc, id limit 5',
  },
  {
    name: 'pg_trgm word_similarity ≥ 0.5',
    setup: 'select set_config(\'pg_trgm.word_similarity_threshold\', \'0.5\', false)',
    sql: 'select id from s where id <> $2 and $1 <% key_information order by word_similarity($1, key_information) desc, id limit 5',
  },
  {
    name: 'full text, ts_rank, OR-ed terms',
    sql: `select id from s where id <> $2 and ${doc} @@ ${orQuery} order by ts_rank(${doc}, ${orQuery}) desc, id limit 5`,
  },
  {
    name: 'full text, ts_rank_cd, OR-ed terms',
    sql: `select id from s where id <> $2 and ${doc} @@ ${orQuery} order by ts_rank_cd(${doc}, ${orQuery}) desc, id limit 5`,
  },
  {
    name: 'full text of key_information, ts_rank, OR',
    sql: `select id from s where id <> $2 and to_tsvector('english', key_information) @@ ${orQuery} order by ts_rank(to_tsvector('english', key_information), ${orQuery}) desc, id limit 5`,
  },
  {
    name: 'full text, ts_rank, websearch (AND)',
    sql: `select id from s where id <> $2 and ${doc} @@ websearch_to_tsquery('english', $1) order by ts_rank(${doc}, websearch_to_tsquery('english', $1)) desc, id limit 5`,
  },
]

const clustered = set.filter((i) => i.cluster !== null)
console.log(`Labelled set: ${set.length} opportunities, ${new Set(clustered.map((i) => i.cluster)).size} clusters of duplicates (${clustered.length} queries), ${set.length - clustered.length} distractors.\n`)
const pct = (x: number) => `${(100 * x).toFixed(1)}%`.padStart(7)
console.log(`${'method'.padEnd(40)} ${'P@1'.padStart(7)} ${'R@5'.padStart(7)} ${'MRR'.padStart(7)} ${'no-dup empty'.padStart(13)} ${'ms/query'.padStart(9)}`)
for (const m of methods) {
  if (m.setup) await db.query(m.setup)
  const rank = async (item: LabelledItem) => (await db.query<{ id: string }>(m.sql, [item.key_information, item.id])).rows.map((r) => r.id)
  const started = performance.now()
  const q = await measure(set, rank)
  const ms = (performance.now() - started) / set.length
  console.log(`${m.name.padEnd(40)} ${pct(q.precisionAt1)} ${pct(q.recallAt5)} ${q.mrr.toFixed(3).padStart(7)} ${pct(q.distractorsEmpty).padStart(13)} ${ms.toFixed(2).padStart(9)}`)
}
await db.close()
