// Alerts of a project: every member sees them with their state and the recent firings and
// recoveries; owners create, pause or resume, and delete them. The same operations as the APIs.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import listAlerts from '../../tools/list-alerts.ts'
import createAlert from '../../tools/create-alert.ts'
import updateAlert from '../../tools/update-alert.ts'
import deleteAlert from '../../tools/delete-alert.ts'
import listAlertEvents from '../../tools/list-alert-events.ts'
import { alertConditions, alertMetrics } from '../../schemas/alerts.ts'
import { describe, flash, formPost, projectAccess, run, type Form } from './actions.ts'

const alertsUrl = (project: string) => `/console/projects/${encodeURIComponent(project)}/alerts`

/** An alert action from a form: a refusal (bad input, not an owner, gone) is a flash, and nothing changes. */
async function alertAction(request: FastifyRequest, reply: FastifyReply, project: string, action: () => Promise<string>) {
  try {
    flash(request, 'ok', await action())
  } catch (err) {
    const status = (err as { statusCode?: number }).statusCode
    if (status === undefined || status >= 500) throw err
    flash(request, 'error', describe(err))
  }
  return reply.redirect(alertsUrl(project), 303)
}

/** A number field as the tool takes it: left out when empty, the text as sent when not a number (refused naming it). */
const numberOrText = (text: string | undefined) => {
  const value = (text ?? '').trim()
  if (value === '') return undefined
  return Number.isFinite(Number(value)) ? Number(value) : value
}

export function alertPages(app: FastifyInstance) {
  const form = formPost(app)

  app.get<{ Params: { project: string } }>('/console/projects/:project/alerts', async (request, reply) => {
    const ref = request.params.project
    const [{ items }, log] = await Promise.all([run(request, listAlerts, {}, ref), run(request, listAlertEvents, { page_size: 20 }, ref)])
    const project = (await projectAccess(request, ref))!
    const names = new Map(items.map((a) => [a.id, a.name]))
    return reply.page('alerts', { title: `Alerts · ${project.name}`, project, alerts: items, log, names, metrics: alertMetrics, conditions: alertConditions })
  })

  app.post<{ Params: { project: string } }>('/console/projects/:project/alerts', form, async (request, reply) => {
    const body = (request.body ?? {}) as Form
    const project = request.params.project
    return alertAction(request, reply, project, async () => {
      const event = (body.event ?? '').trim()
      const threshold = numberOrText(body.threshold)
      const made = await run(request, createAlert, {
        name: body.name ?? '',
        metric: body.metric ?? '',
        condition: body.condition ?? '',
        ...(event !== '' ? { event } : {}),
        ...(threshold !== undefined ? { threshold } : {}),
      }, project)
      return `The alert “${made.name}” is set; it is evaluated at the project's next change or day close.`
    })
  })

  app.post<{ Params: { project: string; id: string } }>('/console/projects/:project/alerts/:id/enabled', form, async (request, reply) => {
    const { project, id } = request.params
    const enabled = ((request.body ?? {}) as Form).enabled === 'true'
    return alertAction(request, reply, project, async () => {
      const alert = await run(request, updateAlert, { alert_id: id, enabled }, project)
      return enabled ? `The alert “${alert.name}” is evaluated again.` : `The alert “${alert.name}” is paused.`
    })
  })

  app.post<{ Params: { project: string; id: string } }>('/console/projects/:project/alerts/:id/delete', form, async (request, reply) => {
    const { project, id } = request.params
    return alertAction(request, reply, project, async () => {
      await run(request, deleteAlert, { alert_id: id }, project)
      return 'The alert and its log are deleted.'
    })
  })
}
