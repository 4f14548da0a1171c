// Console sessions (the @fastify/session store) and the secrets the service keeps for itself.
import { and, desc, eq, lte, ne } from '../orm.ts'
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

    /** Saves a session; `userId` is who is signed in to it (null: nobody yet). Every save is a sighting (last_seen_at). */
    async set(sid: string, data: Record<string, unknown>, expiresAt: Date, userId: string | null = null): Promise<void> {
      const now = new Date()
      await db
        .insert(sessions)
        .values({ sid, data, expiresAt, userId, createdAt: now, lastSeenAt: now })
        .onConflictDoUpdate({ target: sessions.sid, set: { data, expiresAt, userId, lastSeenAt: now } })
    },

    /**
     * Saves a session read from the store before: its row only, never a new one. A session ended
     * meanwhile (signed out elsewhere, a password set) stays ended although a request it had in
     * flight saves it when that request ends. Resolves to whether the row was still there.
     */
    async update(sid: string, data: Record<string, unknown>, expiresAt: Date, userId: string | null = null): Promise<boolean> {
      const rows = await db.update(sessions).set({ data, expiresAt, userId, lastSeenAt: new Date() }).where(eq(sessions.sid, sid)).returning({ sid: sessions.sid })
      return rows.length > 0
    },

    /** The user's sessions still valid at `now`, the most recently seen first. */
    async listForUser(userId: string, now: Date) {
      const rows = await db
        .select({ sid: sessions.sid, data: sessions.data, createdAt: sessions.createdAt, lastSeenAt: sessions.lastSeenAt, expiresAt: sessions.expiresAt })
        .from(sessions)
        .where(eq(sessions.userId, userId))
        .orderBy(desc(sessions.lastSeenAt), desc(sessions.sid))
      return rows.filter((r) => r.expiresAt > now)
    },

    /** Ends the user's sessions (all of them, or all but `exceptSid`); resolves to how many. */
    async destroyForUser(userId: string, exceptSid?: string, tx: Queryable = db): Promise<number> {
      const rows = await tx
        .delete(sessions)
        .where(and(eq(sessions.userId, userId), exceptSid === undefined ? undefined : ne(sessions.sid, exceptSid)))
        .returning({ sid: sessions.sid })
      return rows.length
    },

    /** Ends one session of the user; false when the user has none with that (stored) id. */
    async destroyOfUser(userId: string, sid: string): Promise<boolean> {
      const rows = await db.delete(sessions).where(and(eq(sessions.userId, userId), eq(sessions.sid, sid))).returning({ sid: sessions.sid })
      return rows.length > 0
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
