// Saved views in the console: the board offers the signed-in member's views and those shared
// with the project (links to the board with each view's filters), saves the board's current
// filters under a name and deletes a view; every action is the operation the APIs call.
// The board adds `savedViews: await savedViewsFor(request, project, filters)` to its page data
// and `<%~ include('saved-views', it) %>` to its template; /console/projects/:project/views
// shows the same part on a page of its own.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { appError } from '../../core/errors.ts'
import { roleAtLeast } from '../../core/access.ts'
import { normalizeFilters, sameFilters, viewFilterNames } from '../../schemas/saved-views.ts'
import listSavedViews from '../../tools/list-saved-views.ts'
import saveView from '../../tools/save-view.ts'
import deleteSavedView from '../../tools/delete-saved-view.ts'
import { describe, flash, formPost, projectAccess, run, safeNext } from './actions.ts'

const projectPath = (project: string) => `/console/projects/${encodeURIComponent(project)}`

/** The board showing these filters (only those that narrow it). */
export function boardUrl(project: string, filters: Record<string, unknown>): string {
  const query = new URLSearchParams(Object.entries(normalizeFilters(filters)).map(([k, v]) => [k, String(v)])).toString()
  return `${projectPath(project)}/opportunities${query ? `?${query}` : ''}`
}

/** The filters a form or query sends: the views' filter fields, those left empty are not set. */
function sentFilters(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(viewFilterNames.filter((name) => fields[name] !== undefined && fields[name] !== '').map((name) => [name, fields[name]]))
}

/**
 * What the `saved-views` part shows for `project` (a path's id or slug) and the board's current
 * filters (as the board holds them: `all` and '' are no filter; paging is ignored): the views,
 * each with its board link and whether it is the one shown; the filters the save form sends.
 */
export async function savedViewsFor(request: FastifyRequest, project: string, current: Record<string, unknown>) {
  const access = await projectAccess(request, project)
  if (!access) throw appError('NotFound', `Project '${project}' was not found.`)
  const { items } = await run(request, listSavedViews, {}, project)
  const filters = normalizeFilters(sentFilters(current))
  return {
    items: items.map((view) => ({
      ...view,
      url: boardUrl(access.slug, view.filters),
      current: sameFilters(view.filters, filters),
      // What delete_saved_view allows: its owner, or a project owner for a shared view.
      deletable: view.mine || (view.shared && access.role === 'owner'),
    })),
    /** The current filters, as the save form's hidden fields. */
    filters: Object.entries(filters).map(([name, value]) => ({ name, value: String(value) })),
    canShare: roleAtLeast(access.role, 'reviewer'),
    saveAction: `${projectPath(access.slug)}/views`,
    deleteAction: (id: string) => `${projectPath(access.slug)}/views/${encodeURIComponent(id)}/delete`,
    back: request.url,
  }
}

export function savedViewPages(app: FastifyInstance) {
  const form = formPost(app)

  app.get<{ Params: { project: string } }>('/console/projects/:project/views', async (request, reply) => {
    const savedViews = await savedViewsFor(request, request.params.project, request.query as Record<string, unknown>)
    const project = await projectAccess(request, request.params.project)
    return reply.page('saved-views-page', { title: `Saved views · ${project!.name}`, project, savedViews })
  })

  // Saves the filters sent (the board's current ones) under a name; then the board with them.
  app.post<{ Params: { project: string } }>('/console/projects/:project/views', form, async (request, reply) => {
    const body = request.body as Record<string, string | undefined>
    const filters = sentFilters(body)
    const back = safeNext(body.back, boardUrl(request.params.project, filters))
    try {
      const view = await run(request, saveView, { name: body.name ?? '', filters, shared: body.shared === 'on' }, request.params.project)
      flash(request, 'ok', `View “${view.name}” ${view.created ? 'saved' : 'replaced'}${view.shared ? ', shared with the project' : ''}.`)
      return reply.redirect(boardUrl(request.params.project, view.filters), 303)
    } catch (err) {
      const status = (err as { statusCode?: number }).statusCode
      if (status !== 400 && status !== 403) throw err
      flash(request, 'error', `View not saved: ${describe(err)}`)
      return reply.redirect(back, 303)
    }
  })

  app.post<{ Params: { project: string; view_id: string } }>('/console/projects/:project/views/:view_id/delete', form, async (request, reply) => {
    const body = request.body as Record<string, string | undefined>
    const back = safeNext(body.back, `${projectPath(request.params.project)}/opportunities`)
    try {
      await run(request, deleteSavedView, { view_id: request.params.view_id }, request.params.project)
      flash(request, 'ok', 'View deleted.')
    } catch (err) {
      const status = (err as { statusCode?: number }).statusCode
      if (status !== 400 && status !== 403 && status !== 404) throw err
      flash(request, 'error', `View not deleted: ${describe(err)}`)
    }
    return reply.redirect(back, 303)
  })
}
