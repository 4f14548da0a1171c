// The console's home and a project's front page: the projects list with its New project form,
// and a project's overview (its numbers, a chart of its last 30 days, data freshness and review statuses).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { changeBadge } from './format.ts'
import { statuses } from '../../schemas/opportunities.ts'
import listProjects from '../../tools/list-projects.ts'
import createProject from '../../tools/create-project.ts'
import getOverview from '../../tools/get-overview.ts'
import getDailyOps from '../../tools/get-daily-ops.ts'
import { lineChart, type Series } from './chart.ts'
import { flash, formPost, projectAccess, run, type Form } from './actions.ts'

/** The IANA zones a new project may take, for the console's choice (UTC first). */
const TIME_ZONES = ['UTC', ...Intl.supportedValuesOf('timeZone').filter((z) => z !== 'UTC')]

/** A project with no event for this long shows its data freshness as a warning. */
const STALE_AFTER_MS = 24 * 3600 * 1000

export function projectPages(app: FastifyInstance) {
  const form = formPost(app)
  const emptyProjectForm = { name: '', slug: '', timezone: 'UTC', description: '' }

  async function homePage(request: FastifyRequest, reply: FastifyReply, projectForm = emptyProjectForm, projectError?: { message: string; fields: Record<string, string> }) {
    const { items } = await run(request, listProjects, {})
    return reply.page('home', { title: 'Projects', projects: items, projectForm, projectError, timeZones: TIME_ZONES })
  }

  app.get('/console', (request, reply) => homePage(request, reply))

  // Create a project: create_project as the signed-in user. A refused form is shown again with
  // its values and the reasons (nothing is created); a created project is a redirect to its page.
  app.post('/console/projects', form, async (request, reply) => {
    const body = (request.body ?? {}) as Form
    const values = {
      name: (body.name ?? '').trim(),
      slug: (body.slug ?? '').trim(),
      timezone: (body.timezone ?? '').trim() || 'UTC',
      description: (body.description ?? '').replace(/\r\n/g, '\n').trim(),
    }
    let created
    try {
      created = await run(request, createProject, { name: values.name, slug: values.slug, timezone: values.timezone, ...(values.description ? { description: values.description } : {}) })
    } catch (err) {
      const e = err as { statusCode?: number; message?: string; details?: { path: string; message: string }[] }
      if (e.statusCode === undefined || e.statusCode >= 500) throw err
      const fields: Record<string, string> = {}
      for (const d of e.details ?? []) {
        const field = d.path.replace(/^\//, '').split('/')[0] || 'input'
        // The schema's own words for a slug are a regular expression; say it for people.
        const message = field === 'slug' && /pattern/i.test(d.message) ? 'must be lowercase letters, digits and dashes, such as my-app' : d.message
        fields[field] = fields[field] ? `${fields[field]}; ${message}` : message
      }
      reply.code(e.statusCode)
      const reasons = Object.entries(fields).map(([f, m]) => `${f} ${m}`).join('; ')
      const message = e.statusCode === 409 || !reasons ? (e.message ?? 'failed') : reasons
      return homePage(request, reply, values, { message: `The project was not created: ${message}`, fields })
    }
    flash(request, 'ok', `Project “${created.name}” created.`)
    return reply.redirect(`/console/projects/${encodeURIComponent(created.slug)}`, 303)
  })

  app.get<{ Params: { project: string } }>('/console/projects/:project', async (request, reply) => {
    const [overview, ops] = await Promise.all([
      run(request, getOverview, {}, request.params.project),
      run(request, getDailyOps, { window: '30d' }, request.params.project),
    ])
    const project = await projectAccess(request, request.params.project)
    const now = app.now()
    const last = overview.last_event_at ? new Date(overview.last_event_at) : null
    const stale = !last || now.getTime() - last.getTime() > STALE_AFTER_MS
    // The last 30 days as the metrics page draws them (its window ends today: a partial day, marked).
    const dates = ops.days.map((d) => d.date)
    const series: Series[] = [
      { className: 's1', label: 'new users (signups)', values: ops.days.map((d) => d.registered_users) },
      { className: 's2', label: 'daily users', values: ops.days.map((d) => d.daily_use_users) },
    ]
    const label = 'Signups and daily users, the last 30 days'
    const chart = lineChart(dates, series, { className: 'wide', height: 220, partialLast: true, label }) +
      lineChart(dates, series, { className: 'narrow', width: 420, height: 280, maxLabels: 5, fontSize: 13, partialLast: true, label })
    return reply.page('overview', { title: project!.name, project, overview, statuses, stale, change: changeBadge, chart, ops })
  })
}
