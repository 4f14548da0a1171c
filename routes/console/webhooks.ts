// Webhooks of a project (owners): the list with each one's state, a create form, the actions
// (rotate the secret, send a test, delete after a page that asks first and says how many
// undelivered messages go with it, redeliver a message) and a delivery log. A new or
// rotated secret is shown once (Post/Redirect/Get: it waits in the session, never in a URL,
// sealed under the server key, until the page shows it).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import listWebhooks from '../../tools/list-webhooks.ts'
import createWebhook from '../../tools/create-webhook.ts'
import rotateWebhookSecret from '../../tools/rotate-webhook-secret.ts'
import testWebhook from '../../tools/test-webhook.ts'
import deleteWebhook from '../../tools/delete-webhook.ts'
import listWebhookDeliveries from '../../tools/list-webhook-deliveries.ts'
import redeliverWebhook from '../../tools/redeliver-webhook.ts'
import updateWebhook from '../../tools/update-webhook.ts'
import { webhookEventTypes } from '../../schemas/webhooks.ts'
import { appError } from '../../core/errors.ts'
import { openFromSession, sealForSession, takeShownOnce } from './session.ts'
import { describe, flash, formPost, projectAccess, run, type Form } from './actions.ts'

const webhooksUrl = (project: string, webhook?: string) => `/console/projects/${encodeURIComponent(project)}/webhooks${webhook ? `?webhook=${encodeURIComponent(webhook)}` : ''}`

/** A webhook action from a console form: a refusal is a flash, and nothing changes. */
async function webhookAction(request: FastifyRequest, reply: FastifyReply, project: string, back: string, action: () => Promise<string | { secret: string; id: string }>) {
  try {
    const result = await action()
    if (typeof result === 'string') flash(request, 'ok', result)
    else {
      const access = await projectAccess(request, project)
      request.session.set('newWebhookSecret', { project: access?.id ?? '', id: result.id, sealedSecret: sealForSession(request.server, request, 'newWebhookSecret', result.secret), at: Date.now() })
    }
  } catch (err) {
    const status = (err as { statusCode?: number }).statusCode
    if (status === undefined || status >= 500) throw err
    flash(request, 'error', describe(err))
  }
  return reply.redirect(back, 303)
}

const webhookActions = {
  rotate: async (request: FastifyRequest, id: string) => {
    const rotated = await run(request, rotateWebhookSecret, { id })
    return { id, secret: rotated.secret }
  },
  test: async (request: FastifyRequest, id: string) => {
    await run(request, testWebhook, { id })
    return 'A test message is on its way; its delivery shows below.'
  },
  // After a 410 (disabled_reason) or a pause by hand: deliveries resume, the reason is cleared.
  enable: async (request: FastifyRequest, id: string) => {
    await run(request, updateWebhook, { id, enabled: true })
    return 'The webhook is enabled again: its messages go out from now on.'
  },
  delete: async (request: FastifyRequest, id: string) => {
    await run(request, deleteWebhook, { id })
    return 'The webhook is deleted.'
  },
}

/** The webhook of the path must be one of the path's project (whose owner the caller is). */
async function inProject(request: FastifyRequest, project: string, id: string) {
  const { items } = await run(request, listWebhooks, {}, project)
  if (!items.some((w) => w.id === id)) throw appError('NotFound', 'No such webhook in this project.')
}

export function webhookPages(app: FastifyInstance) {
  const form = formPost(app)

  app.get<{ Params: { project: string } }>('/console/projects/:project/webhooks', async (request, reply) => {
    const { items } = await run(request, listWebhooks, {}, request.params.project)
    const project = (await projectAccess(request, request.params.project))!
    const chosen = items.find((w) => w.id === (request.query as Form).webhook) ?? items[0]
    const log = chosen ? await run(request, listWebhookDeliveries, { id: chosen.id, page_size: 20 }) : undefined
    // Taken whichever project's it is; shown only on its own project's page.
    const taken = takeShownOnce(request, 'newWebhookSecret')
    const fresh = taken?.project === project.id ? taken : undefined
    const secret = fresh && openFromSession(app, request, 'newWebhookSecret', fresh.sealedSecret)
    return reply.page('webhooks', { title: `Webhooks · ${project.name}`, project, webhooks: items, chosen, log, secret: fresh && secret ? { id: fresh.id, secret } : null, events: webhookEventTypes })
  })

  app.post<{ Params: { project: string } }>('/console/projects/:project/webhooks', form, async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, string | string[] | undefined>
    const list = (v: string | string[] | undefined) => (Array.isArray(v) ? v : v ? [v] : [])
    const events = list(body.events)
    const signatures = list(body.signatures)
    const rateLimit = String(body.rate_limit ?? '').trim()
    const project = request.params.project
    return webhookAction(request, reply, project, webhooksUrl(project), async () => {
      const made = await run(request, createWebhook, {
        url: String(body.url ?? '').trim(),
        events,
        description: String(body.description ?? ''),
        ...(body.format ? { format: String(body.format) } : {}),
        // No box ticked: the default (v1); the tool's own refusal for anything else.
        ...(signatures.length > 0 ? { signatures } : {}),
        ...(rateLimit ? { rate_limit: /^\d+$/.test(rateLimit) ? Number(rateLimit) : rateLimit } : {}),
      } as never, project) // the form's text as sent: the operation's validation refuses what does not fit, naming the field
      return { id: made.id, secret: made.secret }
    })
  })

  for (const [name, action] of Object.entries(webhookActions)) {
    app.post<{ Params: { project: string; id: string } }>(`/console/projects/:project/webhooks/:id/${name}`, form, async (request, reply) => {
      const { project, id } = request.params
      return webhookAction(request, reply, project, webhooksUrl(project, name === 'delete' ? undefined : id), async () => {
        await inProject(request, project, id)
        return action(request, id)
      })
    })
  }

  // Deleting asks first, as revoking a key does: a GET page naming the webhook and the messages
  // it has not delivered yet (they are dropped with it), whose form is the only thing that deletes.
  app.get<{ Params: { project: string; id: string } }>('/console/projects/:project/webhooks/:id/delete', async (request, reply) => {
    const { project: ref, id } = request.params
    const { items } = await run(request, listWebhooks, {}, ref)
    const webhook = items.find((w) => w.id === id)
    if (!webhook) throw appError('NotFound', 'No such webhook in this project.')
    const project = (await projectAccess(request, ref))!
    const [pending, log] = await Promise.all([
      run(request, listWebhookDeliveries, { id, status: 'pending', page_size: 1 }),
      run(request, listWebhookDeliveries, { id, page_size: 1 }),
    ])
    return reply.page('delete-webhook', { title: 'Delete webhook', project, webhook, pending: pending.total, logged: log.total, base: webhooksUrl(project.slug) })
  })

  app.post<{ Params: { project: string; id: string; delivery: string } }>('/console/projects/:project/webhooks/:id/deliveries/:delivery/redeliver', form, async (request, reply) => {
    const { project, id, delivery } = request.params
    return webhookAction(request, reply, project, webhooksUrl(project, id), async () => {
      await inProject(request, project, id)
      await run(request, redeliverWebhook, { id, delivery })
      return 'The message is sent again, with the same webhook-id.'
    })
  })
}
