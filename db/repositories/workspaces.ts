import { eq, sql } from '../orm.ts'
import type { Queryable } from '../client.ts'
import { workspaces } from '../schema.ts'
import { newId } from '../ids.ts'
import { SettingsCache } from '../settings-cache.ts'

export function createWorkspacesRepository(db: Queryable, cache = new SettingsCache()) {
  const disabled = cache.lookup<string[]>()
  return {
    async create(name: string, tx: Queryable = db) {
      const [row] = await tx.insert(workspaces).values({ id: newId('wsp'), name }).returning()
      return row!
    },

    /** Every workspace with its number of users and projects, oldest first (the operator's listing). */
    async listAll() {
      return db
        .select({
          id: workspaces.id,
          name: workspaces.name,
          createdAt: workspaces.createdAt,
          // Spelled out: drizzle writes a column of a select's own table unqualified, which inside
          // the subquery would name the subquery's column.
          users: sql<number>`(select count(*)::int from users u where u.workspace_id = "workspaces"."id")`,
          projects: sql<number>`(select count(*)::int from projects p where p.workspace_id = "workspaces"."id")`,
          disabledTools: workspaces.disabledTools,
        })
        .from(workspaces)
        .orderBy(workspaces.createdAt, workspaces.id)
    },

    /** The workspace's name, or undefined when there is no such workspace. */
    async name(id: string): Promise<string | undefined> {
      const [row] = await db.select({ name: workspaces.name }).from(workspaces).where(eq(workspaces.id, id))
      return row?.name
    },

    async count(): Promise<number> {
      const [row] = await db.select({ n: sql<number>`count(*)::int` }).from(workspaces)
      return row!.n
    },

    async disabledTools(id: string): Promise<string[]> {
      const found = await disabled.get(id, async () => {
        const [row] = await db.select({ disabled: workspaces.disabledTools }).from(workspaces).where(eq(workspaces.id, id))
        return row?.disabled
      })
      return found ?? []
    },

    /** Enables or disables one tool in one statement (no read-modify-write). */
    async setToolEnabled(id: string, tool: string, enabled: boolean): Promise<string[] | undefined> {
      const [row] = await cache.changes(db
        .update(workspaces)
        .set({
          disabledTools: enabled
            ? sql`array_remove(${workspaces.disabledTools}, ${tool})`
            : sql`(select array_agg(distinct t order by t) from unnest(array_append(${workspaces.disabledTools}, ${tool})) t)`,
        })
        .where(eq(workspaces.id, id))
        .returning({ disabled: workspaces.disabledTools }))
      return row?.disabled
    },
  }
}
