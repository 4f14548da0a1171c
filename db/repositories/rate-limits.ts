// Fair-use counters shared by the instances on one database (core/fair-use.ts keeps the live
// view in memory and sends what it counted here in batches).
import { lt, sql } from '../orm.ts'
import type { Queryable } from '../client.ts'
import { rateLimitHits } from '../schema.ts'

export interface WindowHits {
  key: string
  /** Start of the fixed window, epoch ms. */
  windowStart: number
  hits: number
}

export function createRateLimitsRepository(db: Queryable) {
  return {
    /**
     * Adds each row's hits to its window's counter in one statement and returns every
     * counter's new total (this instance's hits and everyone else's). Rows are locked in key
     * order, so two instances adding overlapping batches never deadlock.
     */
    async add(rows: WindowHits[]): Promise<WindowHits[]> {
      if (rows.length === 0) return []
      const sorted = [...rows].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.windowStart - b.windowStart))
      return db
        .insert(rateLimitHits)
        .values(sorted)
        .onConflictDoUpdate({ target: [rateLimitHits.key, rateLimitHits.windowStart], set: { hits: sql`${rateLimitHits.hits} + excluded.hits` } })
        .returning({ key: rateLimitHits.key, windowStart: rateLimitHits.windowStart, hits: rateLimitHits.hits })
    },

    /** Deletes the counters of windows that started before `windowStart`; resolves to how many. */
    async purgeBefore(windowStart: number): Promise<number> {
      const rows = await db.delete(rateLimitHits).where(lt(rateLimitHits.windowStart, windowStart)).returning({ key: rateLimitHits.key })
      return rows.length
    },
  }
}
