// Copies everything one growthdesk database holds into another, empty one: how an embedded
// (PGlite) deployment moves to PostgreSQL with its data (`growthdesk admin copy-database`).
// Both are at the same migration (the target is migrated first). The copy is one transaction on
// the target: it lands whole or not at all. Rows travel as JSON, a page at a time through a
// cursor on the source, so a database of millions of events needs no more memory than a page.
import { sql } from './orm.ts'
import { rowsOf, type Database, type Queryable } from './client.ts'

export class CopyError extends Error {
  override name = 'CopyError'
}

export interface CopyResult {
  tables: { name: string; rows: number }[]
  sequences: number
}

/** Rows per round trip. */
const PAGE = 2000

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`

/** The app's tables (a partitioned table once, not each partition), in name order. */
async function tablesOf(db: Queryable): Promise<string[]> {
  const rows = rowsOf<{ name: string }>(await db.execute(sql`
    select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and c.relkind in ('r', 'p') and not c.relispartition
    order by c.relname`))
  return rows.map((r) => r.name)
}

/** The columns a row is written with: not generated (those are computed again), not dropped. */
async function writableColumns(db: Queryable, table: string): Promise<string[]> {
  const rows = rowsOf<{ name: string }>(await db.execute(sql`
    select a.attname as name from pg_attribute a
    where a.attrelid = ${`public.${ident(table)}`}::regclass and a.attnum > 0 and not a.attisdropped and a.attgenerated = ''
    order by a.attnum`))
  return rows.map((r) => r.name)
}

/**
 * Copies `source` into `target`. The target must hold no workspace yet (a database just
 * migrated, or one that only the migrations wrote to); rows the migrations wrote there too are
 * kept once. Triggers do not fire during the copy (session_replication_role = replica: the
 * rollups are copied as they are, not counted again), which needs a superuser on the target (or,
 * on PostgreSQL 15 and later, `GRANT SET ON PARAMETER session_replication_role`).
 */
export async function copyDatabase(source: Database, target: Database, progress: (line: string) => void = () => {}): Promise<CopyResult> {
  await target.migrate()
  const tables = await tablesOf(source.db)
  const targetTables = new Set(await tablesOf(target.db))
  const missing = tables.filter((t) => !targetTables.has(t))
  if (missing.length > 0) throw new CopyError(`The target has no table ${missing.join(', ')}: is it at the same version of growthdesk?`)
  const copied: CopyResult['tables'] = []
  let sequences = 0
  await target.db.transaction(async (out) => {
    const [{ workspaces }] = rowsOf<{ workspaces: number }>(await out.execute(sql`select count(*)::int as workspaces from workspaces`)) as [{ workspaces: number }]
    if (workspaces > 0) throw new CopyError(`The target holds data already (${workspaces} workspace${workspaces === 1 ? '' : 's'}): copy into a new, empty database.`)
    try {
      await out.execute(sql`set local session_replication_role = replica`)
    } catch (err) {
      throw new CopyError(`The target's user may not turn triggers off for the copy (${(err as Error).message}): connect as a superuser, or GRANT SET ON PARAMETER session_replication_role to it.`)
    }
    // Events go into the month partitions the target has yet to create (where events are partitioned).
    const ensure = rowsOf<{ ok: boolean }>(await out.execute(sql`select to_regproc('events_ensure_partitions') is not null as ok`))[0]
    if (ensure?.ok) {
      const [range] = rowsOf<{ lo: string | null; hi: string | null }>(await source.db.execute(sql`select min(day)::text as lo, max(day)::text as hi from events`))
      if (range?.lo && range.hi) await out.execute(sql`select events_ensure_partitions(${range.lo}::date, ${range.hi}::date)`)
    }
    for (const table of tables) {
      const columns = await writableColumns(out, table)
      const list = columns.map(ident).join(', ')
      let rows = 0
      await source.db.transaction(async (from) => {
        await from.execute(sql.raw(`declare growthdesk_copy no scroll cursor for select row_to_json(t)::text as j from ${ident(table)} t`))
        for (;;) {
          const page = rowsOf<{ j: string }>(await from.execute(sql.raw(`fetch ${PAGE} from growthdesk_copy`)))
          if (page.length === 0) break
          await out.execute(sql`
            insert into ${sql.raw(ident(table))} (${sql.raw(list)}) overriding system value
            select ${sql.raw(list)} from json_populate_recordset(null::${sql.raw(ident(table))}, ${`[${page.map((r) => r.j).join(',')}]`}::json)
            on conflict do nothing`)
          rows += page.length
        }
      })
      // What the migrations wrote on both sides is there once: the counts agree.
      const [{ n }] = rowsOf<{ n: number }>(await out.execute(sql.raw(`select count(*)::int as n from ${ident(table)}`))) as [{ n: number }]
      if (n !== rows) throw new CopyError(`${table}: ${rows} rows read, ${n} in the target after the copy.`)
      copied.push({ name: table, rows })
      if (rows > 0) progress(`${table}: ${rows} rows`)
    }
    // Every sequence where the source left it: the next id is the source's next id.
    const seqs = rowsOf<{ name: string }>(await source.db.execute(sql`
      select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and c.relkind = 'S' order by c.relname`))
    for (const { name } of seqs) {
      const [state] = rowsOf<{ last_value: string; is_called: boolean }>(await source.db.execute(sql.raw(`select last_value::text, is_called from ${ident(name)}`)))
      if (!state) continue
      await out.execute(sql`select setval(${`public.${ident(name)}`}::regclass, ${state.last_value}::bigint, ${state.is_called})`)
      sequences++
    }
  })
  return { tables: copied, sequences }
}
