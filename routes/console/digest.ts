// A project's Digest page: the schedule (owners set, pause or delete it; the others read it)
// and a preview of the digest as it would go out now, with the same tools the APIs call.
import type { FastifyInstance } from 'fastify'
import getDigest from '../../tools/get-digest.ts'
import setDigest from '../../tools/set-digest.ts'
import deleteDigest from '../../tools/delete-digest.ts'
import previewDigest from '../../tools/preview-digest.ts'
import { weekdayNames } from '../../schemas/digests.ts'
import { changeBadge } from './format.ts'
import { describe, flash, formPost, projectAccess, run, type Form } from './actions.ts'

const digestUrl = (project: string) => `/console/projects/${encodeURIComponent(project)}/digest`

export function digestPages(app: FastifyInstance) {
  const form = formPost(app)

  app.get<{ Params: { project: string } }>('/console/projects/:project/digest', async (request, reply) => {
    const ref = request.params.project
    const { digest } = await run(request, getDigest, {}, ref)
    const asked = (request.query as Form).frequency
    const frequency = asked === 'daily' || asked === 'weekly' ? asked : undefined
    const preview = await run(request, previewDigest, frequency ? { frequency } : {}, ref)
    const project = (await projectAccess(request, ref))!
    return reply.page('digest', { title: `Digest · ${project.name}`, project, digest, preview, weekdays: weekdayNames, change: changeBadge })
  })

  app.post<{ Params: { project: string } }>('/console/projects/:project/digest', form, async (request, reply) => {
    const body = (request.body ?? {}) as Form
    const ref = request.params.project
    const frequency = body.frequency ?? ''
    // A form's values are text: numbers as numbers, anything else as sent (refused with a reason naming the field).
    const number = (v: string | undefined) => (v !== undefined && /^\d{1,2}$/.test(v) ? Number(v) : v)
    const args = {
      frequency,
      hour: number(body.hour),
      ...(frequency === 'weekly' ? { weekday: number(body.weekday) } : {}),
      enabled: body.enabled === 'on',
    }
    try {
      const set = await run(request, setDigest, args, ref)
      flash(request, 'ok', set.enabled ? 'The digest schedule is saved.' : 'The digest schedule is saved, paused.')
    } catch (err) {
      const status = (err as { statusCode?: number }).statusCode
      if (status === undefined || status >= 500) throw err
      flash(request, 'error', `The schedule was not saved: ${describe(err)}`)
    }
    return reply.redirect(digestUrl(ref), 303)
  })

  app.post<{ Params: { project: string } }>('/console/projects/:project/digest/delete', form, async (request, reply) => {
    const ref = request.params.project
    try {
      const { deleted } = await run(request, deleteDigest, {}, ref)
      flash(request, 'ok', deleted ? 'The digest schedule is deleted: no more digests go out.' : 'There was no digest schedule.')
    } catch (err) {
      const status = (err as { statusCode?: number }).statusCode
      if (status === undefined || status >= 500) throw err
      flash(request, 'error', describe(err))
    }
    return reply.redirect(digestUrl(ref), 303)
  })
}
