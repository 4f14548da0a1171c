// Saved views: a member's named filters of the listing, their own or shared with the project.
import { and, asc, desc, eq, or, sql } from '../orm.ts'
import { rowsOf, type Queryable } from '../client.ts'
import { savedViews, users } from '../schema.ts'
import { newId } from '../ids.ts'
import type { SavedView, ViewFilters } from '../../schemas/saved-views.ts'

const columns = {
  id: savedViews.id,
  userId: savedViews.userId,
  email: users.email,
  name: savedViews.name,
  filters: savedViews.filters,
  shared: savedViews.shared,
  createdAt: savedViews.createdAt,
  updatedAt: savedViews.updatedAt,
}
type Row = { id: string; userId: string; email: string; name: string; filters: unknown; shared: boolean; createdAt: Date; updatedAt: Date }

/** A view as `caller` sees it (`mine`: they saved it). */
function toView(row: Row, caller: string): SavedView {
  return {
    view_id: row.id,
    name: row.name,
    filters: row.filters as ViewFilters,
    shared: row.shared,
    owner: { id: row.userId, email: row.email },
    mine: row.userId === caller,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

export function createSavedViewsRepository(db: Queryable) {
  const select = (q: Queryable) => q.select(columns).from(savedViews).innerJoin(users, eq(users.id, savedViews.userId))

  return {
    /**
     * Saves the caller's view of that name (any case), or replaces it (its name as now written,
     * its filters and sharing; its id and created_at stay): one INSERT … ON CONFLICT on the
     * unique index saved_views_owner_name_key. drizzle names only columns as a conflict target,
     * and the index is on lower(name), hence the SQL.
     */
    async save(input: { projectId: string; userId: string; name: string; filters: ViewFilters; shared: boolean; now: Date }): Promise<{ view: SavedView; created: boolean }> {
      const now = input.now.toISOString()
      return db.transaction(async (tx) => {
        const [saved] = rowsOf<{ id: string; created: boolean }>(await tx.execute(sql`
          insert into saved_views (id, project_id, user_id, name, filters, shared, created_at, updated_at)
          values (${newId('view')}, ${input.projectId}, ${input.userId}, ${input.name}, ${JSON.stringify(input.filters)}::jsonb, ${input.shared}, ${now}::timestamptz, ${now}::timestamptz)
          on conflict (project_id, user_id, lower(name)) do update
            set name = excluded.name, filters = excluded.filters, shared = excluded.shared, updated_at = excluded.updated_at
          returning id, (xmax = 0) as created`))
        const [row] = await select(tx).where(eq(savedViews.id, saved!.id))
        return { view: toView(row!, input.userId), created: saved!.created }
      })
    },

    /** The caller's own views, then those others shared in the project; each by name. */
    async list(projectId: string, userId: string): Promise<SavedView[]> {
      const mine = eq(savedViews.userId, userId)
      const rows = await select(db)
        .where(and(eq(savedViews.projectId, projectId), or(mine, eq(savedViews.shared, true))))
        .orderBy(desc(mine), asc(sql`lower(${savedViews.name})`), asc(savedViews.name), asc(savedViews.id))
      return rows.map((row) => toView(row, userId))
    },

    /**
     * Deletes a view of the project if the caller saved it, or if it is shared and the caller
     * owns the project (`projectOwner`). `forbidden`: they see it (it is shared) but may not
     * delete it; `missing`: no view of the project they can see has that id.
     */
    async remove(input: { projectId: string; viewId: string; userId: string; projectOwner: boolean }): Promise<'deleted' | 'forbidden' | 'missing'> {
      const inProject = and(eq(savedViews.id, input.viewId), eq(savedViews.projectId, input.projectId))
      const allowed = input.projectOwner ? or(eq(savedViews.userId, input.userId), eq(savedViews.shared, true)) : eq(savedViews.userId, input.userId)
      const deleted = await db.delete(savedViews).where(and(inProject, allowed)).returning({ id: savedViews.id })
      if (deleted.length > 0) return 'deleted'
      const [visible] = await db.select({ id: savedViews.id }).from(savedViews).where(and(inProject, eq(savedViews.shared, true)))
      return visible ? 'forbidden' : 'missing'
    },
  }
}
