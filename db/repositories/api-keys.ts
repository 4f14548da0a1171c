import { and, desc, eq, inArray, isNull, lt, or, sql } from '../orm.ts'
import type { Queryable } from '../client.ts'
import { apiKeys, projects, users, workspaces } from '../schema.ts'
import { newId } from '../ids.ts'
import { displayKey, generateKey, hashKey, type KeyKind } from '../keys.ts'
import { SettingsCache } from '../settings-cache.ts'

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

/** A key that is not revoked, with the user it acts as. */
export interface ActiveKey {
  id: string
  kind: KeyKind
  workspaceId: string
  userId: string
  email: string
  projectId: string | null
  readOnly: boolean
  expiresAt: Date | null
  /** When its use was last recorded (by this process, once it has recorded one). */
  lastUsedAt: Date | null
}

export function createApiKeysRepository(db: Queryable, cache = new SettingsCache()) {
  const active = cache.lookup<ActiveKey>()
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

    /** The key with this hash and the user it acts as, if it is neither revoked nor expired at `now`. */
    async findActive(hash: string, now: Date): Promise<ActiveKey | undefined> {
      const row = await active.get(hash, async () => {
        const [row] = await db
          .select({
            id: apiKeys.id,
            kind: apiKeys.kind,
            workspaceId: apiKeys.workspaceId,
            userId: apiKeys.userId,
            email: users.email,
            projectId: apiKeys.projectId,
            readOnly: apiKeys.readOnly,
            expiresAt: apiKeys.expiresAt,
            lastUsedAt: apiKeys.lastUsedAt,
          })
          .from(apiKeys)
          .innerJoin(users, eq(users.id, apiKeys.userId))
          // A removed member's keys are revoked with the removal; this holds even for one that was not.
          .where(and(eq(apiKeys.hash, hash), isNull(apiKeys.revokedAt), isNull(users.removedAt)))
        return row
      })
      // Expiry is checked here, on every use: a kept key expires on time.
      return row && (row.expiresAt === null || row.expiresAt > now) ? row : undefined
    },

    /** Records use, at most once a minute per key (the condition is in the UPDATE itself); the
     * key as found remembers it, so that its next uses within the minute send nothing. */
    async touch(key: ActiveKey, now: Date): Promise<void> {
      key.lastUsedAt = now
      const id = key.id
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

    /** Every key of the deployment (the operator's listing), newest first, with its workspace,
     * user and project named; optionally only one workspace, user (email) or kind. */
    async listAll(filter: { workspaceId?: string; email?: string; kinds?: KeyKind[] } = {}) {
      return db
        .select({
          id: apiKeys.id,
          workspaceId: apiKeys.workspaceId,
          workspaceName: workspaces.name,
          email: users.email,
          kind: apiKeys.kind,
          name: apiKeys.name,
          display: apiKeys.display,
          projectId: apiKeys.projectId,
          projectSlug: projects.slug,
          readOnly: apiKeys.readOnly,
          expiresAt: apiKeys.expiresAt,
          createdAt: apiKeys.createdAt,
          lastUsedAt: apiKeys.lastUsedAt,
          revokedAt: apiKeys.revokedAt,
        })
        .from(apiKeys)
        .innerJoin(users, eq(users.id, apiKeys.userId))
        .innerJoin(workspaces, eq(workspaces.id, apiKeys.workspaceId))
        .leftJoin(projects, eq(projects.id, apiKeys.projectId))
        .where(and(
          filter.workspaceId ? eq(apiKeys.workspaceId, filter.workspaceId) : undefined,
          filter.email ? eq(users.email, filter.email) : undefined,
          filter.kinds ? inArray(apiKeys.kind, filter.kinds) : undefined
        ))
        .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id))
    },

    async find(id: string) {
      const [row] = await db.select().from(apiKeys).where(eq(apiKeys.id, id))
      return row
    },

    /** Revokes a key; `userId` limits it to the user's own keys. Returns false if none matched. */
    async revoke(id: string, now: Date, userId?: string): Promise<boolean> {
      const rows = await cache.changes(db
        .update(apiKeys)
        .set({ revokedAt: sql`coalesce(${apiKeys.revokedAt}, ${now.toISOString()}::timestamptz)` })
        .where(and(eq(apiKeys.id, id), userId ? eq(apiKeys.userId, userId) : undefined))
        .returning({ id: apiKeys.id }))
      return rows.length > 0
    },
  }
}
