// The month partitions of the raw events table (migration 0020; docs/design.md, "Events
// partitioned by day ranges"): created ahead and on demand through events_ensure_partitions(),
// listed, and dropped past EVENTS_RETENTION_DAYS. The rollups are never touched here.
import { sql } from '../orm.ts'
import { rowsOf, type Queryable } from '../client.ts'

/** A partition's name: events_yYYYYmMM, the month whose days it holds. */
const NAME = /^events_y(\d{4})m(\d{2})$/

/** The first day of a partition's month ('2026-11-01'), from its name. */
export const monthOf = (name: string) => {
  const m = NAME.exec(name)
  return m ? `${m[1]}-${m[2]}-01` : null
}

/** The first day of the month after `month` ('2026-12-01' for '2026-11-01'). */
export function nextMonth(month: string): string {
  const [y, m] = month.split('-').map(Number) as [number, number]
  return m === 12 ? `${String(y + 1).padStart(4, '0')}-01-01` : `${String(y).padStart(4, '0')}-${String(m + 1).padStart(2, '0')}-01`
}

/**
 * The months known to have a partition, per database handle (so per app, not per process: a test
 * process runs many apps on databases of their own). The ingest path asks the database only for
 * months not in it: the hot path makes no extra statement. A retention run forgets what it drops.
 */
const known = new WeakMap<object, Set<string>>()
const knownOf = (db: Queryable) => {
  let set = known.get(db)
  if (!set) known.set(db, (set = new Set()))
  return set
}

const HOUR_MS = 3_600_000
const monthKey = (ms: number) => {
  const d = new Date(ms)
  return d.getUTCFullYear() < 1 ? '0001-01-01' : `${d.toISOString().slice(0, 7)}-01`
}

/**
 * The months an event's day can fall in: its day in the project's zone is within 14 hours of its
 * UTC time (UTC−12 … UTC+14), so the months of both ends. The ingest path does not know the zone,
 * and one partition too many ahead of a boundary costs nothing.
 */
export function monthsOf(timestamps: Iterable<string>): string[] {
  const months = new Set<string>()
  // The bounds [from, to) of the month last added: most of a batch falls in it, and an instant
  // inside it needs no Date of its own (on the ingest path: ~1 ms of CPU per 1000 events without).
  let from = Infinity
  let to = -Infinity
  const add = (ms: number) => {
    if (ms >= from && ms < to) return
    months.add(monthKey(ms))
    const d = new Date(ms)
    d.setUTCDate(1)
    d.setUTCHours(0, 0, 0, 0)
    from = d.getTime()
    d.setUTCMonth(d.getUTCMonth() + 1)
    to = d.getTime()
  }
  for (const ts of timestamps) {
    const ms = Date.parse(ts)
    if (Number.isNaN(ms)) continue
    add(ms - 14 * HOUR_MS)
    add(ms + 14 * HOUR_MS)
  }
  return [...months]
}

/** Creates the partitions of these months where missing (one statement), and remembers them. */
async function ensureMonths(db: Queryable, months: string[]): Promise<number> {
  if (months.length === 0) return 0
  const result = await db.execute(sql`select coalesce(sum(events_ensure_partitions(m, m)), 0)::int as created from unnest(string_to_array(${months.join(',')}, ',')::date[]) m`)
  const set = knownOf(db)
  for (const m of months) set.add(m)
  return Number(rowsOf<{ created: number }>(result)[0]!.created)
}

/** A row that found no partition, however the driver (or drizzle's wrapper) reports it. */
function isMissingPartition(err: unknown): boolean {
  for (let e = err as { code?: unknown; message?: unknown; cause?: unknown } | undefined; e; e = e.cause as typeof e) {
    if (e.code === '23514' && typeof e.message === 'string' && e.message.includes('no partition')) return true
  }
  return false
}

/**
 * Runs an insert of events at these timestamps once their months have partitions. A month this
 * handle believed was there but another instance's retention dropped since is created and the
 * insert run once more (a single statement that failed wrote nothing).
 */
export async function withEventMonths<T>(db: Queryable, timestamps: string[], insert: () => Promise<T>): Promise<T> {
  const months = monthsOf(timestamps)
  const set = knownOf(db)
  await ensureMonths(db, months.filter((m) => !set.has(m)))
  try {
    return await insert()
  } catch (err) {
    if (!isMissingPartition(err)) throw err
    for (const m of months) set.delete(m)
    await ensureMonths(db, months)
    return insert()
  }
}

export interface EventPartition {
  name: string
  /** First day it holds. */
  from: string
  /** First day it no longer holds. */
  to: string
}

export function createPartitionsRepository(db: Queryable) {
  /** The partitions attached to events, oldest first (a detach in progress left out). */
  async function list(): Promise<EventPartition[]> {
    const result = await db.execute(sql`
      select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = 'events'::regclass and not i.inhdetachpending order by c.relname`)
    return rowsOf<{ name: string }>(result).flatMap(({ name }) => {
      const from = monthOf(name)
      return from ? [{ name, from, to: nextMonth(from) }] : []
    })
  }

  return {
    list,

    /** Partitions for every month of [from, to] (days), known from then on to the ingest path; how many were created. */
    async ensure(from: string, to: string): Promise<number> {
      const result = await db.execute(sql`select events_ensure_partitions(${from}::date, ${to}::date) as created`)
      const set = knownOf(db)
      for (let m = `${from.slice(0, 7)}-01`; m <= to; m = nextMonth(m)) set.add(m)
      return Number(rowsOf<{ created: number }>(result)[0]!.created)
    },

    /**
     * How far back a project's raw events go: the first day of the oldest partition (raw events of
     * earlier days may have been dropped by retention; from that day on none were), or null when
     * the project has no events. One statement.
     */
    async rawEventsSince(projectId: string): Promise<string | null> {
      const result = await db.execute(sql`
        select case when exists (select 1 from daily_event_counts where project_id = ${projectId}) then (
          select min(c.relname) from pg_inherits i join pg_class c on c.oid = i.inhrelid
          where i.inhparent = 'events'::regclass and not i.inhdetachpending and c.relname ~ '^events_y[0-9]{4}m[0-9]{2}$') end as name`)
      const name = rowsOf<{ name: string | null }>(result)[0]?.name
      return name ? monthOf(name) : null
    },

    /** The first day of the oldest partition: raw events of earlier days may have been dropped. Null without partitions. */
    async oldestDay(): Promise<string | null> {
      return (await list())[0]?.from ?? null
    },

    /**
     * Drops every partition whose whole month ends on or before `cutoff` (a day): detached, then
     * dropped. `concurrently` (PostgreSQL ≥ 14) detaches with DETACH … CONCURRENTLY, which takes
     * SHARE UPDATE EXCLUSIVE on events (ingestion goes on) and must run outside a transaction;
     * otherwise DETACH takes ACCESS EXCLUSIVE for the moment of the catalog change. A run stopped
     * half-way is finished by the next one (a pending detach finalized, a detached month dropped).
     * Returns the names dropped.
     */
    async dropBefore(cutoff: string, options: { concurrently: boolean }): Promise<string[]> {
      const result = await db.execute(sql`
        select c.relname as name, coalesce(i.inhparent = 'events'::regclass, false) as attached, coalesce(i.inhdetachpending, false) as pending
        from pg_class c left join pg_inherits i on i.inhrelid = c.oid
        where c.relnamespace = (select relnamespace from pg_class where oid = 'events'::regclass)
          and c.relkind = 'r' and c.relname ~ '^events_y[0-9]{4}m[0-9]{2}$'
        order by c.relname`)
      const dropped: string[] = []
      if (options.concurrently) {
        const [version] = rowsOf<{ v: number }>(await db.execute(sql`select current_setting('server_version_num')::int as v`))
        options = { concurrently: Number(version!.v) >= 140000 }
      }
      for (const { name, attached, pending } of rowsOf<{ name: string; attached: boolean; pending: boolean }>(result)) {
        const from = monthOf(name)
        if (!from || nextMonth(from) > cutoff) continue
        const table = sql.identifier(name)
        if (pending) await db.execute(sql`alter table events detach partition ${table} finalize`)
        else if (attached) await db.execute(sql`alter table events detach partition ${table}${options.concurrently ? sql` concurrently` : sql``}`)
        await db.execute(sql`drop table if exists ${table}`)
        knownOf(db).delete(from)
        dropped.push(name)
      }
      return dropped
    },
  }
}
