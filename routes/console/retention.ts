// A project's retention page (issue 29), beside its Metrics page: the get_retention grid
// (views/retention-grid.eta, a partial that takes the tool's answer and nothing else, so the
// metrics page can show it too) with a form for the events, the period and the cohorts' window.
import type { FastifyInstance } from 'fastify'
import getRetention from '../../tools/get-retention.ts'
import { projectAccess, run, type Form } from './actions.ts'

export function retentionPages(app: FastifyInstance) {
  app.get<{ Params: { project: string } }>('/console/projects/:project/retention', async (request, reply) => {
    const query = request.query as Form
    const period = query.period === 'week' ? 'week' : 'day'
    // Weeks read best over a month of cohorts; days over a week.
    const window = query.window === '7d' || query.window === '30d' ? query.window : period === 'week' ? '30d' : '7d'
    const event = (value: string | undefined) => (value?.trim() ? value.trim() : undefined)
    const retention = await run(request, getRetention, {
      period,
      window,
      ...(event(query.start_event) ? { start_event: event(query.start_event) } : {}),
      ...(event(query.return_event) ? { return_event: event(query.return_event) } : {}),
    }, request.params.project)
    const project = await projectAccess(request, request.params.project)
    return reply.page('retention', { title: `Retention · ${project!.name}`, project, retention })
  })
}
