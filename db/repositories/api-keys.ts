import { and, desc, eq, inArray, isNull, lt, or, sql } from '../orm.ts'
import type { Queryable } from '../client.ts'
import { apiKeys, users } from '../schema.ts'
import { newId } from '../ids.ts'
import { displayKey, generateKey, hashKey, type KeyKind } from '../keys.ts'

export interface NewKey {
  workspaceId: string
  userId: string
  kind: KeyKind
  name?: string
  projectId?: string | null
  readOnly?: boolean
  expiresAt?: Date | null
  grantId?: string | null
}

export function createApiKeysRepository(db: Queryable) {
  return {
    /** Creates a key; the returned `key` is the only time the full secret exists. */
    async create(input: NewKey, tx: Queryable = db) {
      const key = generateKey(input.kind)
      const [row] = await tx
        .insert(apiKeys)
        .values({
          id: newId('key'),
          workspaceId: input.workspaceId,
          userId: input.userId,
          kind: input.kind,
          name: input.name ?? '',
          hash: hashKey(key),
          display: displayKey(key),
          projectId: input.projectId ?? null,
          readOnly: input.readOnly ?? false,
          expiresAt: input.expiresAt ?? null,
          grantId: input.grantId ?? null,
        })
        .returning()
      return { key, row: row! }
    },

    /** The key with this hash and the user it acts as, if it is neither revoked nor expired. */
    async findActive(hash: string, now: Date) {
      const [row] = await db
        .select({
          id: apiKeys.id,
          kind: apiKeys.kind,
          workspaceId: apiKeys.workspaceId,
          userId: apiKeys.userId,
          email: users.email,
          projectId: apiKeys.projectId,
          readOnly: apiKeys.readOnly,
          lastUsedAt: apiKeys.lastUsedAt,
        })
        .from(apiKeys)
        .innerJoin(users, eq(users.id, apiKeys.userId))
        .where(
          and(
            eq(apiKeys.hash, hash),
            isNull(apiKeys.revokedAt),
            or(isNull(apiKeys.expiresAt), sql`${apiKeys.expiresAt} > ${now.toISOString()}::timestamptz`)
          )
        )
      return row
    },

    /** Records use, at most once a minute per key (the condition is in the UPDATE itself). */
    async touch(id: string, now: Date): Promise<void> {
      const minuteAgo = new Date(now.getTime() - 60_000).toISOString()
      await db
        .update(apiKeys)
        .set({ lastUsedAt: now })
        .where(and(eq(apiKeys.id, id), or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, sql`${minuteAgo}::timestamptz`))))
    },

    async listForUser(userId: string, kinds: KeyKind[]) {
      return db
        .select()
        .from(apiKeys)
        .where(and(eq(apiKeys.userId, userId), inArray(apiKeys.kind, kinds)))
        .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id))
    },

    async find(id: string) {
      const [row] = await db.select().from(apiKeys).where(eq(apiKeys.id, id))
      return row
    },

    /** Revokes a key; `userId` limits it to the user's own keys. Returns false if none matched. */
    async revoke(id: string, now: Date, userId?: string): Promise<boolean> {
      const rows = await db
        .update(apiKeys)
        .set({ revokedAt: sql`coalesce(${apiKeys.revokedAt}, ${now.toISOString()}::timestamptz)` })
        .where(and(eq(apiKeys.id, id), userId ? eq(apiKeys.userId, userId) : undefined))
        .returning({ id: apiKeys.id })
      return rows.length > 0
    },
  }
}
