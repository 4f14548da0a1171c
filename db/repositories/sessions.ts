// Console sessions (the @fastify/session store) and the secrets the service keeps for itself.
import { eq, lte } from '../orm.ts'
import type { Queryable } from '../client.ts'
import { appSecrets, sessions } from '../schema.ts'
import { randomBase62 } from '../ids.ts'
import { sealContexts, type Sealer } from '../secret-box.ts'

export function createSessionsRepository(db: Queryable, box: Sealer) {
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

    /**
     * A secret made once and kept (so sessions survive restarts without configuration), sealed
     * under the server key: the first instance to start makes it, every other one opens it.
     */
    async secret(name: string): Promise<string> {
      const context = sealContexts.appSecret(name)
      await db.insert(appSecrets).values({ name, value: box.seal(randomBase62(64), context) }).onConflictDoNothing()
      const [row] = await db.select({ value: appSecrets.value }).from(appSecrets).where(eq(appSecrets.name, name))
      return box.open(row!.value, context)
    },
  }
}
