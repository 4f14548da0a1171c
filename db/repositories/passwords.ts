// Passwords: reset links (single use, one hour, kept as the SHA-256 of their token only) and
// the two ways a password is set — a reset through such a link, and a change by its owner —
// each one transaction that also spends the user's open links and ends their sessions.
import { and, eq, gt, gte, isNull, ne, sql } from '../orm.ts'
import type { Queryable } from '../client.ts'
import { passwordResets, sessions, users } from '../schema.ts'
import { generateSecret, hashKey, isLinkToken, linkTokenPrefixes } from '../keys.ts'

/** How long a reset link works. */
export const RESET_LINK_TTL_MS = 60 * 60 * 1000

/** What a reset link's token finds: nothing (unknown, malformed, its user removed), or a link that works, was used or has expired. */
export type ResetLinkState =
  | { state: 'valid' | 'used' | 'expired'; userId: string; email: string; expiresAt: Date }
  | undefined

export function createPasswordsRepository(db: Queryable) {
  return {
    /** A new reset link's token for the user, valid RESET_LINK_TTL_MS from `now`; only its hash is stored. */
    async issueReset(input: { userId: string; createdBy: string | null; now: Date }): Promise<{ token: string; expiresAt: Date }> {
      const token = generateSecret(linkTokenPrefixes.passwordReset)
      const expiresAt = new Date(input.now.getTime() + RESET_LINK_TTL_MS)
      await db.insert(passwordResets).values({ tokenHash: hashKey(token), userId: input.userId, createdBy: input.createdBy, createdAt: input.now, expiresAt })
      return { token, expiresAt }
    },

    /** The link a token names, as of `now`. A token that is not well-formed is looked up nowhere. */
    async findReset(token: string, now: Date): Promise<ResetLinkState> {
      if (!isLinkToken(token, linkTokenPrefixes.passwordReset)) return undefined
      const [row] = await db
        .select({ userId: passwordResets.userId, email: users.email, expiresAt: passwordResets.expiresAt, usedAt: passwordResets.usedAt })
        .from(passwordResets)
        .innerJoin(users, and(eq(users.id, passwordResets.userId), isNull(users.removedAt)))
        .where(eq(passwordResets.tokenHash, hashKey(token)))
      if (!row) return undefined
      const state = row.usedAt !== null ? 'used' : row.expiresAt <= now ? 'expired' : 'valid'
      return { state, userId: row.userId, email: row.email, expiresAt: row.expiresAt }
    },

    /**
     * How many reset links were made for the user since `since` by no one of the workspace
     * (created_by null: the forgot-password form's, and the operator's): the form's hourly limit.
     */
    async forgotLinksSince(userId: string, since: Date): Promise<number> {
      const [row] = await db
        .select({ n: sql<number>`count(*)::int` })
        .from(passwordResets)
        .where(and(eq(passwordResets.userId, userId), gte(passwordResets.createdAt, since), isNull(passwordResets.createdBy)))
      return row!.n
    },

    /**
     * Sets a new password through a reset link, once: the link is spent by a conditional UPDATE
     * (of two resets at once, one finds it unused), then in the same transaction the password is
     * set, every other open link of the user is spent and every session of the user ends. API
     * keys and OAuth grants are other credentials and stay. Resolves to the user, or undefined
     * when the link does not work (unknown, used, expired, its user removed): nothing changed.
     */
    async resetPassword(token: string, passwordHash: string, now: Date): Promise<{ userId: string; email: string; passwordChangedAt: Date; endedSessions: number } | undefined> {
      if (!isLinkToken(token, linkTokenPrefixes.passwordReset)) return undefined
      return db.transaction(async (tx) => {
        const [spent] = await tx
          .update(passwordResets)
          .set({ usedAt: now })
          .where(and(
            eq(passwordResets.tokenHash, hashKey(token)),
            isNull(passwordResets.usedAt),
            gt(passwordResets.expiresAt, now),
            sql`exists (select 1 from ${users} where ${users.id} = ${passwordResets.userId} and ${users.removedAt} is null)`
          ))
          .returning({ userId: passwordResets.userId })
        if (!spent) return undefined
        const [user] = await tx
          .update(users)
          .set({ passwordHash, passwordChangedAt: now })
          .where(and(eq(users.id, spent.userId), isNull(users.removedAt)))
          .returning({ id: users.id, email: users.email })
        // The join above saw the user; a removal committed since would have made this row vanish.
        if (!user) throw new Error('the user of a reset link disappeared during the reset')
        await tx.update(passwordResets).set({ usedAt: now }).where(and(eq(passwordResets.userId, user.id), isNull(passwordResets.usedAt)))
        const ended = await tx.delete(sessions).where(eq(sessions.userId, user.id)).returning({ sid: sessions.sid })
        return { userId: user.id, email: user.email, passwordChangedAt: now, endedSessions: ended.length }
      })
    },

    /**
     * Sets a new password chosen by its signed-in owner, in one transaction: the password, every
     * open reset link spent, and every session of the user ended but `exceptSid` (the stored id of
     * the session that made the change). Resolves to how many sessions ended.
     */
    async changePassword(userId: string, passwordHash: string, now: Date, exceptSid: string): Promise<{ passwordChangedAt: Date; endedSessions: number } | undefined> {
      return db.transaction(async (tx) => {
        const [user] = await tx
          .update(users)
          .set({ passwordHash, passwordChangedAt: now })
          .where(and(eq(users.id, userId), isNull(users.removedAt)))
          .returning({ id: users.id })
        if (!user) return undefined
        await tx.update(passwordResets).set({ usedAt: now }).where(and(eq(passwordResets.userId, userId), isNull(passwordResets.usedAt)))
        const ended = await tx.delete(sessions).where(and(eq(sessions.userId, userId), ne(sessions.sid, exceptSid))).returning({ sid: sessions.sid })
        return { passwordChangedAt: now, endedSessions: ended.length }
      })
    },
  }
}
