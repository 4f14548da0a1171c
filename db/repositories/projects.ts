import { and, asc, eq, or, sql } from 'drizzle-orm'
import type { Db } from '../client.ts'
import { memberships, projects, users } from '../schema.ts'
import { newId } from '../../core/ids.ts'
import { effectiveRole, type Principal, type ProjectAccess } from '../../core/access.ts'

export type ProjectRow = typeof projects.$inferSelect
export type ProjectCardInput = Partial<Omit<typeof projects.$inferInsert, 'id' | 'workspaceId' | 'createdAt' | 'updatedAt'>>

export function createProjectsRepository(db: Db) {
  return {
    /** Creates a project and makes `ownerId` its owner, atomically. */
    async create(input: { workspaceId: string; ownerId: string } & ProjectCardInput & { slug: string; name: string }) {
      const { workspaceId, ownerId, ...card } = input
      return db.transaction(async (tx) => {
        const [row] = await tx.insert(projects).values({ ...card, id: newId('prj'), workspaceId }).returning()
        await tx.insert(memberships).values({ userId: ownerId, projectId: row!.id, role: 'owner' })
        return row!
      })
    },

    /** Projects with this id or slug in any workspace (operator commands only). */
    async findAnywhere(ref: string): Promise<ProjectRow[]> {
      return db.select().from(projects).where(or(eq(projects.id, ref), eq(projects.slug, ref))).limit(5)
    },

    /** A project of the workspace by id or slug, regardless of who asks. */
    async findInWorkspace(workspaceId: string, ref: string): Promise<ProjectRow | undefined> {
      const [row] = await db
        .select()
        .from(projects)
        .where(and(eq(projects.workspaceId, workspaceId), or(eq(projects.id, ref), eq(projects.slug, ref))))
        .limit(1)
      return row
    },

    /**
     * The project `ref` (id or slug) as the principal may see it, with the role it acts
     * with there; undefined when it does not exist, is in another workspace, the user is no
     * member, or the key is narrowed to another project (all answer 404 alike).
     */
    async access(principal: Principal, ref: string): Promise<ProjectAccess | undefined> {
      const [row] = await db
        .select({
          id: projects.id,
          slug: projects.slug,
          name: projects.name,
          timezone: projects.timezone,
          role: memberships.role,
          distinctId: sql<string>`coalesce(${memberships.distinctId}, ${users.email})`,
        })
        .from(projects)
        .innerJoin(memberships, and(eq(memberships.projectId, projects.id), eq(memberships.userId, principal.userId)))
        .innerJoin(users, eq(users.id, memberships.userId))
        .where(
          and(
            eq(projects.workspaceId, principal.workspaceId),
            or(eq(projects.id, ref), eq(projects.slug, ref)),
            principal.projectId ? eq(projects.id, principal.projectId) : undefined
          )
        )
        .limit(1)
      if (!row) return undefined
      return { ...row, role: effectiveRole(row.role, principal) }
    },

    async listForUser(principal: Principal) {
      return db
        .select({ project: projects, role: memberships.role })
        .from(projects)
        .innerJoin(memberships, and(eq(memberships.projectId, projects.id), eq(memberships.userId, principal.userId)))
        .where(and(eq(projects.workspaceId, principal.workspaceId), principal.projectId ? eq(projects.id, principal.projectId) : undefined))
        .orderBy(asc(projects.createdAt), asc(projects.id))
    },

    async timezone(projectId: string): Promise<string | undefined> {
      const [row] = await db.select({ tz: projects.timezone }).from(projects).where(eq(projects.id, projectId))
      return row?.tz
    },
  }
}
