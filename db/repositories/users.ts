import { and, eq, isNull } from '../orm.ts'
import type { Queryable } from '../client.ts'
import { memberships, users } from '../schema.ts'
import { newId } from '../ids.ts'
import { SettingsCache } from '../settings-cache.ts'
import type { Role } from '../../schemas/atoms.ts'

export function createUsersRepository(db: Queryable, cache = new SettingsCache()) {
  return {
    async create(input: { workspaceId: string; email: string; passwordHash: string; workspaceRole?: 'owner' | 'member' }, tx: Queryable = db) {
      const [row] = await tx
        .insert(users)
        .values({
          id: newId('usr'),
          workspaceId: input.workspaceId,
          email: input.email.toLowerCase(),
          passwordHash: input.passwordHash,
          workspaceRole: input.workspaceRole ?? 'member',
        })
        .returning()
      return row!
    },

    /** The user with this email, unless removed from their workspace. */
    async findByEmail(email: string) {
      const [row] = await db.select().from(users).where(and(eq(users.email, email.toLowerCase()), isNull(users.removedAt)))
      return row
    },

    /** The user with this id, unless removed from their workspace. */
    async find(id: string) {
      const [row] = await db.select().from(users).where(and(eq(users.id, id), isNull(users.removedAt)))
      return row
    },

    /** The user with this email, removed or not (an email names one account, for good). */
    async findAnyByEmail(email: string) {
      const [row] = await db.select().from(users).where(eq(users.email, email.toLowerCase()))
      return row
    },

    /** Adds the user to a project, or changes the role of an existing membership. */
    async setMembership(input: { userId: string; projectId: string; role: Role; distinctId?: string | null }, tx: Queryable = db) {
      // A changed role or identity is what the project lookups keep.
      await cache.changes(tx
        .insert(memberships)
        .values({ userId: input.userId, projectId: input.projectId, role: input.role, distinctId: input.distinctId ?? null })
        .onConflictDoUpdate({
          target: [memberships.userId, memberships.projectId],
          set: { role: input.role, ...(input.distinctId !== undefined ? { distinctId: input.distinctId } : {}) },
        }))
    },

    async role(userId: string, projectId: string): Promise<Role | undefined> {
      const [row] = await db
        .select({ role: memberships.role })
        .from(memberships)
        .where(and(eq(memberships.userId, userId), eq(memberships.projectId, projectId)))
      return row?.role
    },
  }
}
