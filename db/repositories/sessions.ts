// Console sessions (the @fastify/session store) and the secrets the service keeps for itself.
import { eq, lte } from '../orm.ts'
import type { Queryable } from '../client.ts'
import { appSecrets, sessions } from '../schema.ts'
import { randomBase62 } from '../ids.ts'

export function createSessionsRepository(db: Queryable) {
  return {
    async get(sid: string, now: Date): Promise<Record<string, unknown> | undefined> {
      const [row] = await db.select().from(sessions).where(eq(sessions.sid, sid))
      if (!row || row.expiresAt <= now) return undefined
      return row.data as Record<string, unknown>
    },

    async set(sid: string, data: Record<string, unknown>, expiresAt: Date): Promise<void> {
      await db.insert(sessions).values({ sid, data, expiresAt }).onConflictDoUpdate({ target: sessions.sid, set: { data, expiresAt } })
    },

    async destroy(sid: string): Promise<void> {
      await db.delete(sessions).where(eq(sessions.sid, sid))
    },

    /** Deletes the sessions expired at `now`; resolves to how many. */
    async purgeExpired(now: Date): Promise<number> {
      const rows = await db.delete(sessions).where(lte(sessions.expiresAt, now)).returning({ sid: sessions.sid })
      return rows.length
    },

    /** A secret made once and kept (so sessions survive restarts without configuration). */
    async secret(name: string): Promise<string> {
      await db.insert(appSecrets).values({ name, value: randomBase62(64) }).onConflictDoNothing()
      const [row] = await db.select({ value: appSecrets.value }).from(appSecrets).where(eq(appSecrets.name, name))
      return row!.value
    },
  }
}
