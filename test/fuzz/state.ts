// What "changes nothing" means for the fuzz test: every table of the database, as row counts
// and a hash of the rows, taken before and after a batch of bad requests.
import type { FastifyInstance } from 'fastify'
import { rowsOf } from '../../db/client.ts'
import { sql } from '../../db/orm.ts'

/**
 * Columns left out of the hash: they change on reads and refusals by design. A table is never
 * left out whole: a new table is hashed the day it is created.
 */
export const IGNORED: Record<string, { paths: string[][]; why: string }> = {
  api_keys: { paths: [['last_used_at']], why: 'a successful authentication records when a key was last used (at most once a minute)' },
  sessions: {
    paths: [['expires_at'], ['last_seen_at'], ['data', 'cookie'], ['data', 'flash']],
    why: 'a signed-in request extends the session (rolling expiry) and is a sighting (last_seen_at); a refused console form leaves its message in the session as a flash',
  },
}

/** Tables left out whole, each with its reason: they count requests, bad ones included. */
export const COUNTERS: Record<string, string> = {
  rate_limit_hits: 'fair-use counters (shared on PostgreSQL): every request is counted, a refused one too, by design',
}

export interface Snapshot {
  [table: string]: { rows: number; hash: string }
}

/** Every base table of the schema the app uses, read at each call so a new table is included. */
export async function snapshot(app: FastifyInstance): Promise<Snapshot> {
  const tables = rowsOf<{ name: string }>(await app.db.execute(sql.raw(
    "select relname as name from pg_class where relnamespace = current_schema()::regnamespace and relkind in ('r', 'p') order by 1"
  ))).map((r) => r.name).filter((name) => !(name in COUNTERS))
  const parts = tables.map((name) => {
    if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`unexpected table name ${name}`)
    let row = 'to_jsonb(r)'
    for (const path of IGNORED[name]?.paths ?? []) row = `(${row} #- '{${path.join(',')}}')`
    // A sum of 64-bit row hashes: independent of row order, so nothing is sorted or concatenated.
    return `select '${name}' as name, count(*)::int as rows, coalesce(sum(hashtextextended(x::text, 0)::numeric), 0)::text as hash from (select ${row} as x from "${name}" r) s`
  })
  const result = rowsOf<{ name: string; rows: number; hash: string }>(await app.db.execute(sql.raw(parts.join(' union all '))))
  return Object.fromEntries(result.map((r) => [r.name, { rows: Number(r.rows), hash: r.hash }]))
}

/** The tables whose rows differ between two snapshots, with their counts. */
export function changedTables(before: Snapshot, after: Snapshot): string[] {
  const names = new Set([...Object.keys(before), ...Object.keys(after)])
  return [...names].filter((n) => before[n]?.hash !== after[n]?.hash || before[n]?.rows !== after[n]?.rows)
    .map((n) => `${n}: ${before[n]?.rows ?? '-'} → ${after[n]?.rows ?? '-'} rows`)
}
