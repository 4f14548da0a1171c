// Console pages: sign-in, projects, Profile → MCP Access, keys, the review board, metrics,
// workspace settings and connected apps. Every action goes through the same operations as
// the APIs, acting as the signed-in user.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { requireUser } from './session.ts'
import { lineChart, sparkline } from './chart.ts'
import { changeBadge } from './format.ts'
import { sessionPrincipal } from '../../core/access.ts'
import { verifyPassword } from '../../core/passwords.ts'
import { statuses } from '../../schemas/opportunities.ts'
import listProjects from '../../tools/list-projects.ts'
import createProject from '../../tools/create-project.ts'
import getOverview from '../../tools/get-overview.ts'
import listOpportunities from '../../tools/list-opportunities.ts'
import reviewOpportunity from '../../tools/review-opportunity.ts'
import reviewOpportunities from '../../tools/review-opportunities.ts'
import getReviewHistory from '../../tools/get-review-history.ts'
import getDailyOps from '../../tools/get-daily-ops.ts'
import getDailyEventSummary from '../../tools/get-daily-event-summary.ts'
import { listWorkspaceTools, setToolEnabled } from '../../tools/workspace-tools.ts'
import createKey from '../../tools/create-key.ts'
import revokeKey from '../../tools/revoke-key.ts'
import listWebhooks from '../../tools/list-webhooks.ts'
import createWebhook from '../../tools/create-webhook.ts'
import rotateWebhookSecret from '../../tools/rotate-webhook-secret.ts'
import testWebhook from '../../tools/test-webhook.ts'
import deleteWebhook from '../../tools/delete-webhook.ts'
import listWebhookDeliveries from '../../tools/list-webhook-deliveries.ts'
import redeliverWebhook from '../../tools/redeliver-webhook.ts'
import { webhookEventTypes } from '../../schemas/webhooks.ts'
import type { Operation } from '../../core/operations.ts'
import { appError } from '../../core/errors.ts'
import { displayKey } from '../../db/keys.ts'
import { dailyEventSummaryCsv, dailyOpsCsv, opportunitiesCsv, sendCsv, type CsvExport } from '../exports.ts'
import type { Static } from '@sinclair/typebox'

/** How long a new key waits in the session for the page that shows it (the redirect is followed at once). */
const NEW_KEY_SHOWN_FOR_MS = 60_000

type Form = Record<string, string | undefined>

/**
 * Only local console paths may be redirect targets (no open redirect), written as a URL is
 * sent: printable ASCII. Anything else in a Location header (a NUL, a `☃`) makes Node throw
 * while writing the response, which took the whole process down.
 */
export function safeNext(next: string | undefined, fallback = '/console'): string {
  return next && /^\/(console|oauth)(\/|\?|$)[\x21-\x7e]*$/.test(next) && !next.startsWith('//') ? next : fallback
}

/** The IANA zones a new project may take, for the console's choice (UTC first). */
const TIME_ZONES = ['UTC', ...Intl.supportedValuesOf('timeZone').filter((z) => z !== 'UTC')]

/** A project with no event for this long shows its data freshness as a warning. */
const STALE_AFTER_MS = 24 * 3600 * 1000

/** The expiry choices of the key forms (a date input is offered beside them). */
const EXPIRY_CHOICES = [
  { days: 7, label: '7 days' },
  { days: 30, label: '30 days' },
  { days: 90, label: '90 days' },
  { days: 365, label: '1 year' },
] as const

/** The pages where keys are made, each with the page that shows a new key once. */
const keyPages = {
  keys: { list: '/console/keys', listTitle: 'Keys', shown: '/console/keys/new' },
  mcp: { list: '/console/profile/mcp-access', listTitle: 'MCP Access', shown: '/console/profile/mcp-access/new' },
} as const

const consolePages: FastifyPluginAsync<{ publicUrl: string }> = async (app) => {
  function run<O extends Operation>(request: FastifyRequest, op: O, args: unknown, project?: string): Promise<Static<O['output']>> {
    return app.registry.invoke(op, args, { principal: sessionPrincipal(request.consoleUser), projectRef: project, surface: 'console', log: request.log })
  }

  function flash(request: FastifyRequest, kind: 'ok' | 'error', text: string) {
    request.session.set('flash', { kind, text })
  }

  const describe = (err: unknown) => {
    const e = err as { message?: string; details?: { path: string; message: string }[] }
    return e.details?.length ? e.details.map((d) => `${d.path || 'input'} ${d.message}`).join('; ') : (e.message ?? 'failed')
  }

  app.get('/console/login', async (request, reply) => {
    const query = request.query as Form
    if (request.session.get('userId')) return reply.redirect(safeNext(query.next))
    return reply.page('login', { title: 'Sign in', next: safeNext(query.next), email: '' })
  })

  app.post('/console/login', {
    preHandler: app.csrfProtection,
    config: { rateLimit: { max: 10, timeWindow: '5 minutes', keyGenerator: (req: FastifyRequest) => req.ip } },
  }, async (request, reply) => {
    const body = (request.body ?? {}) as Form
    const email = (body.email ?? '').trim().toLowerCase()
    const user = email ? await app.repos.users.findByEmail(email) : undefined
    // Verify against a dummy hash when the user does not exist, so timing does not reveal who does.
    const ok = await verifyPassword(body.password ?? '', user?.passwordHash ?? DUMMY_HASH)
    if (!user || !ok) {
      reply.code(401)
      // Said on the page itself: a failed sign-in stores nothing.
      return reply.page('login', { title: 'Sign in', next: safeNext(body.next), email, flash: { kind: 'error', text: 'Wrong email or password.' } })
    }
    await request.session.regenerate() // a new session id at sign-in: no fixation
    request.session.set('userId', user.id)
    return reply.redirect(safeNext(body.next))
  })

  // Everything below needs a signed-in user: one hook for the whole scope, before any route's own.
  await app.register(async (app) => {
    app.addHook('preHandler', requireUser)
    const form = { preHandler: app.csrfProtection }

    app.post('/console/logout', form, async (request, reply) => {
      await request.session.destroy()
      return reply.redirect('/console/login')
    })

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
      const overview = await run(request, getOverview, {}, request.params.project)
      const project = await app.repos.projects.access(sessionPrincipal(request.consoleUser), request.params.project)
      const now = app.now()
      const last = overview.last_event_at ? new Date(overview.last_event_at) : null
      const stale = !last || now.getTime() - last.getTime() > STALE_AFTER_MS
      return reply.page('overview', { title: project!.name, project, overview, statuses, stale, change: changeBadge })
    })

    app.get('/console/profile', async (_request, reply) => reply.page('profile', { title: 'Profile' }))

    /** Key rows for a table; `slugs` names the project a key is narrowed to. */
    function keyRows(rows: Awaited<ReturnType<typeof app.repos.apiKeys.listForUser>>, slugs = new Map<string, string>()) {
      const now = app.now()
      return rows.map((k) => ({
        id: k.id,
        kind: k.kind,
        name: k.name,
        display: k.display,
        projectSlug: k.projectId ? (slugs.get(k.projectId) ?? k.projectId) : null,
        readOnly: k.readOnly,
        expiresAt: k.expiresAt?.toISOString() ?? null,
        expired: k.expiresAt !== null && k.expiresAt <= now,
        createdAt: k.createdAt.toISOString(),
        lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
        revokedAt: k.revokedAt?.toISOString() ?? null,
      }))
    }

    /** The projects a key can be narrowed to (all the user's) and the ones an ingest key can record for. */
    async function keyProjects(request: FastifyRequest) {
      const { items } = await run(request, listProjects, {})
      return { all: items, writable: items.filter((p) => p.role !== 'viewer'), slugs: new Map(items.map((p) => [p.id, p.slug])) }
    }

    async function mcpAccess(request: FastifyRequest, reply: FastifyReply) {
      const [projects, rows] = await Promise.all([keyProjects(request), app.repos.apiKeys.listForUser(request.consoleUser.id, ['mcp'])])
      return reply.page('mcp-access', { title: 'MCP Access', projects: projects.all, expiryChoices: EXPIRY_CHOICES, keys: keyRows(rows, projects.slugs) })
    }

    /**
     * The scope fields of a create form (project, read_only, expires / expires_on) as create_key
     * arguments, or a sentence saying what is wrong. The project itself is checked by create_key.
     */
    function scopeArgs(body: Form, kind: 'mcp' | 'service' | 'ingest'): { args: Record<string, unknown> } | { error: string } {
      const args: Record<string, unknown> = {}
      const project = (body.project ?? '').trim()
      if (project) args.project = project
      if (kind !== 'ingest' && body.read_only !== undefined) {
        if (body.read_only !== 'on' && body.read_only !== 'true') return { error: 'Read-only is a checkbox: on or off.' }
        args.read_only = true
      }
      const onDate = (body.expires_on ?? '').trim()
      const days = (body.expires ?? 'never').trim()
      if (onDate) {
        // A date means "until the end of that day" (UTC); today is the earliest.
        const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(onDate)
        const end = m ? new Date(`${onDate}T23:59:59.999Z`) : undefined
        if (!m || !end || Number.isNaN(end.getTime()) || end.toISOString().slice(0, 10) !== onDate) return { error: `The expiry date '${onDate.slice(0, 20)}' is not a date (YYYY-MM-DD).` }
        if (end <= app.now()) return { error: `The expiry date ${onDate} is in the past: choose today or a later day.` }
        args.expires_at = end.toISOString()
      } else if (days !== 'never' && days !== '') {
        const choice = EXPIRY_CHOICES.find((c) => String(c.days) === days)
        if (!choice) return { error: `Expiry must be one of: never, ${EXPIRY_CHOICES.map((c) => c.label).join(', ')}.` }
        args.expires_at = new Date(app.now().getTime() + choice.days * 86_400_000).toISOString()
      }
      return { args }
    }

    /** Creates a key from a console form; a refusal (bad input, unknown project) is a flash and nothing is created. */
    async function createFromForm(request: FastifyRequest, reply: FastifyReply, page: keyof typeof keyPages, kind: 'mcp' | 'service' | 'ingest') {
      const body = (request.body ?? {}) as Form
      const name = (body.name ?? '').trim().slice(0, 100)
      const scope = scopeArgs(body, kind)
      if ('error' in scope) {
        flash(request, 'error', scope.error)
        return reply.redirect(keyPages[page].list, 303)
      }
      let key: string
      try {
        ({ key } = await run(request, createKey, { kind, name, ...scope.args }))
      } catch (err) {
        const status = (err as { statusCode?: number }).statusCode
        if (status === undefined || status >= 500) throw err
        flash(request, 'error', describe(err))
        return reply.redirect(keyPages[page].list, 303)
      }
      return showKeyOnce(request, reply, page, key, name)
    }

    /**
     * Post/Redirect/Get for a new key: the secret waits in the session (server side, never in a
     * URL) until the page that shows it is opened once — the browser follows the redirect at once —
     * and for a minute at most; a reload of that page creates nothing.
     */
    function showKeyOnce(request: FastifyRequest, reply: FastifyReply, page: keyof typeof keyPages, key: string, name: string) {
      request.session.set('newKey', { page, key, name, at: Date.now() })
      return reply.redirect(keyPages[page].shown, 303)
    }

    for (const [page, where] of Object.entries(keyPages) as [keyof typeof keyPages, (typeof keyPages)[keyof typeof keyPages]][]) {
      app.get(where.shown, async (request, reply) => {
        const slot = request.session.get('newKey')
        const fresh = slot?.page === page && Date.now() - slot.at <= NEW_KEY_SHOWN_FOR_MS ? slot : undefined
        if (slot?.page === page) request.session.set('newKey', undefined)
        return reply.page('new-key', {
          title: fresh ? 'Your new key' : 'Key already shown',
          where,
          newKey: fresh ? { key: fresh.key, name: fresh.name, display: displayKey(fresh.key) } : null,
        })
      })
    }

    app.get('/console/profile/mcp-access', (request, reply) => mcpAccess(request, reply))

    app.post('/console/profile/mcp-access', form, (request, reply) => createFromForm(request, reply, 'mcp', 'mcp'))

    async function keysPage(request: FastifyRequest, reply: FastifyReply) {
      const [projects, rows] = await Promise.all([
        keyProjects(request),
        app.repos.apiKeys.listForUser(request.consoleUser.id, ['service', 'ingest']),
      ])
      const keys = keyRows(rows, projects.slugs)
      return reply.page('keys', {
        title: 'Keys',
        projects: projects.writable,
        allProjects: projects.all,
        expiryChoices: EXPIRY_CHOICES,
        serviceKeys: keys.filter((k) => k.kind === 'service'),
        ingestKeys: keys.filter((k) => k.kind === 'ingest'),
      })
    }

    app.get('/console/keys', (request, reply) => keysPage(request, reply))

    app.post('/console/keys', form, async (request, reply) => {
      const body = (request.body ?? {}) as Form
      const kind = body.kind === 'ingest' ? 'ingest' : body.kind === 'service' ? 'service' : undefined
      if (!kind) {
        flash(request, 'error', 'Choose a service or an ingest key.')
        return reply.redirect('/console/keys', 303)
      }
      return createFromForm(request, reply, 'keys', kind)
    })

    // Revoking asks first: a GET page naming the key, whose form is the only thing that revokes.
    app.get<{ Params: { id: string } }>('/console/keys/:id/revoke', async (request, reply) => {
      const rows = await app.repos.apiKeys.listForUser(request.consoleUser.id, ['mcp', 'service', 'ingest'])
      const key = keyRows(rows.filter((k) => k.id === request.params.id))[0]
      if (!key) throw appError('NotFound', 'No such key: it may belong to someone else or never have existed.')
      const back = safeNext((request.query as Form).back, key.kind === 'mcp' ? '/console/profile/mcp-access' : '/console/keys')
      return reply.page('revoke-key', { title: 'Revoke key', key, back })
    })

    app.post<{ Params: { id: string } }>('/console/keys/:id/revoke', form, async (request, reply) => {
      const done = await run(request, revokeKey, { id: request.params.id }).then(() => true, (err: { statusCode?: number }) => {
        if (err.statusCode === 404 || err.statusCode === 400) return false
        throw err
      })
      flash(request, done ? 'ok' : 'error', done ? 'The key is revoked; it no longer works.' : 'No such key.')
      return reply.redirect(safeNext((request.body as Form).back, '/console/keys'), 303)
    })

    // The review board: a Board view (a column per status, each with its total and the first
    // cards) or a List view (full review forms), with the same filters and a text search.
    app.get<{ Params: { project: string } }>('/console/projects/:project/opportunities', async (request, reply) => {
      const query = request.query as Form
      const view = query.view === 'list' ? 'list' : 'board'
      const filters = {
        type: query.type || 'all',
        date: query.date || 'all',
        evaluation: query.evaluation || 'all',
        status: query.status || 'all',
        page: Number(query.page ?? 1),
        page_size: Number(query.page_size ?? 20),
      }
      const q = query.q?.trim() ?? ''
      const args = { ...filters, ...(q ? { q } : {}) }
      const project = await app.repos.projects.access(sessionPrincipal(request.consoleUser), request.params.project)
      let page
      let columns: { status: string; total: number; items: Static<(typeof listOpportunities)['output']>['items'] }[] = []
      try {
        if (view === 'list') page = await run(request, listOpportunities, args, request.params.project)
        else {
          // One listing per status with the other filters: each column's count is the API's total.
          const shown = filters.status === 'all' ? statuses : statuses.filter((s) => s === filters.status)
          if (shown.length === 0) await run(request, listOpportunities, args, request.params.project) // the bad status, as a 400
          columns = await Promise.all(
            shown.map(async (status) => {
              const { items, total } = await run(request, listOpportunities, { ...args, status, page: 1 }, request.params.project)
              return { status, total, items }
            })
          )
        }
      } catch (err) {
        if ((err as { statusCode?: number }).statusCode === 400) {
          reply.code(400)
          return reply.page('error', { title: 'Bad filter', heading: 'Those filters do not work', message: describe(err) })
        }
        throw err
      }
      const types = await app.repos.opportunities.types(project!.id)
      // A type filter that names no type of the project is still offered, so the choice shows it.
      if (filters.type !== 'all' && !types.includes(filters.type)) types.push(filters.type)
      const state = { ...Object.fromEntries(Object.entries(filters).map(([k, v]) => [k, String(v)])), ...(q ? { q } : {}), view }
      const link = (change: Record<string, string>) => `?${new URLSearchParams({ ...state, ...change }).toString()}`
      return reply.page('board', {
        title: `Review board · ${project!.name}`,
        project,
        filters,
        q,
        view,
        types,
        statuses,
        page,
        columns,
        back: request.url,
        link,
        pageUrl: (p: number) => link({ page: String(p) }),
        // The same filters, every page: the whole listing as CSV.
        csvUrl: `/console/projects/${encodeURIComponent(project!.slug)}/opportunities.csv?${new URLSearchParams({
          type: filters.type, date: filters.date, evaluation: filters.evaluation, status: filters.status, ...(q ? { q } : {}),
        }).toString()}`,
      })
    })

    // Several opportunities at once: one review_opportunities call, all or nothing.
    app.post<{ Params: { project: string } }>('/console/projects/:project/opportunities/bulk-review', form, async (request, reply) => {
      const body = request.body as Record<string, string | string[] | undefined>
      const back = safeNext(typeof body.back === 'string' ? body.back : undefined, `/console/projects/${encodeURIComponent(request.params.project)}/opportunities`)
      const ids = [body.event_ids ?? []].flat().filter((id) => id !== '')
      const args: Record<string, unknown> = { event_ids: [...new Set(ids)] }
      // "keep" (or nothing) leaves a field alone; "none" clears the evaluation.
      if (typeof body.status === 'string' && body.status !== '' && body.status !== 'keep') args.status = body.status
      if (typeof body.evaluation === 'string' && body.evaluation !== '' && body.evaluation !== 'keep') args.evaluation = body.evaluation === 'none' ? '' : body.evaluation
      if (ids.length === 0) flash(request, 'error', 'Select at least one opportunity first.')
      else if (args.status === undefined && args.evaluation === undefined) flash(request, 'error', 'Choose a status or an evaluation to apply.')
      else {
        try {
          const { items } = await run(request, reviewOpportunities, args, request.params.project)
          flash(request, 'ok', `${items.length} ${items.length === 1 ? 'opportunity' : 'opportunities'} changed.`)
        } catch (err) {
          const status = (err as { statusCode?: number }).statusCode
          if (status !== 400 && status !== 404) throw err
          flash(request, 'error', `Nothing changed: ${describe(err)}`)
        }
      }
      return reply.redirect(back, 303)
    })

    app.post<{ Params: { project: string; id: string } }>('/console/projects/:project/opportunities/:id/review', form, async (request, reply) => {
      const body = request.body as Form
      // The form carries every field; send only the ones the reviewer changed, as an API client would.
      const args: Record<string, string> = { event_id: request.params.id }
      // Browsers submit every newline of a form (the textarea and the hidden orig_note alike) as CRLF.
      const lf = (v: string | undefined) => v?.replace(/\r\n/g, '\n')
      for (const field of ['evaluation', 'status', 'note'] as const) {
        const value = field === 'note' ? lf(body.note) : body[field]
        const orig = field === 'note' ? lf(body.orig_note) : body[`orig_${field}`]
        if (value !== undefined && value !== orig) args[field] = value
      }
      try {
        if (Object.keys(args).length === 1) flash(request, 'ok', 'Nothing changed.')
        else {
          await run(request, reviewOpportunity, args, request.params.project)
          flash(request, 'ok', 'Review saved.')
        }
      } catch (err) {
        if ((err as { statusCode?: number }).statusCode !== 400) throw err
        flash(request, 'error', `Not saved: ${describe(err)}`)
      }
      const back = safeNext(body.back, `/console/projects/${encodeURIComponent(request.params.project)}/opportunities`)
      return reply.redirect(`${back}#${encodeURIComponent(request.params.id)}`)
    })

    app.get<{ Params: { project: string; id: string } }>('/console/projects/:project/opportunities/:id/history', async (request, reply) => {
      const history = await run(request, getReviewHistory, { event_id: request.params.id }, request.params.project)
      const project = await app.repos.projects.access(sessionPrincipal(request.consoleUser), request.params.project)
      return reply.page('history', { title: 'Review history', project, history })
    })

    app.get<{ Params: { project: string } }>('/console/projects/:project/metrics', async (request, reply) => {
      const window = (request.query as Form).window === '30d' ? '30d' : '7d'
      const [ops, summary] = await Promise.all([
        run(request, getDailyOps, { window }, request.params.project),
        run(request, getDailyEventSummary, { window }, request.params.project),
      ])
      const project = await app.repos.projects.access(sessionPrincipal(request.consoleUser), request.params.project)
      const dates = ops.days.map((d) => d.date)
      const series = [
        { className: 's1', label: 'new users (signups)', values: ops.days.map((d) => d.registered_users) },
        { className: 's2', label: 'daily users', values: ops.days.map((d) => d.daily_use_users) },
      ]
      // Two drawings of one chart: wide for desktops, and taller with fewer, larger labels for phones (CSS shows one).
      const chart = lineChart(dates, series, { className: 'wide' }) + lineChart(dates, series, { className: 'narrow', width: 420, height: 300, maxLabels: 5, fontSize: 13 })
      // The event summary as one row per event: its daily counts (oldest first) with a sparkline and the total.
      const names = [...new Set(summary.totals.map((t) => t.event))].sort()
      const events = names.map((event) => {
        const counts = summary.days.map((d) => d.events.find((e) => e.event === event)?.count ?? 0)
        const users = summary.days.map((d) => d.events.find((e) => e.event === event)?.unique_users ?? 0)
        return { event, counts, users, total: summary.totals.find((t) => t.event === event)?.count ?? 0, peakUsers: Math.max(0, ...users), spark: sparkline(summary.days.map((d) => d.date), counts) }
      })
      return reply.page('metrics', { title: `Metrics · ${project!.name}`, project, ops, summary, events, chart })
    })

    // Downloads: the same CSV as the API's, as the signed-in user (plain links: no script needed).
    async function download(request: FastifyRequest<{ Params: { project: string } }>, reply: FastifyReply, e: CsvExport, args: Record<string, string>) {
      let result
      try {
        result = await run(request, e.op, args, request.params.project)
      } catch (err) {
        if ((err as { statusCode?: number }).statusCode !== 400) throw err
        reply.code(400)
        return reply.page('error', { title: 'Bad filter', heading: 'That download does not work', message: describe(err) })
      }
      return sendCsv(reply, e, result)
    }
    /** The query's values for these names, an empty one left out (as the board's filter form sends it). */
    const chosen = (query: Form, names: readonly string[]) =>
      Object.fromEntries(names.flatMap((n) => {
        const value = n === 'q' ? query[n]?.trim() : query[n]
        return typeof value === 'string' && value !== '' ? [[n, value]] : []
      }))

    app.get<{ Params: { project: string } }>('/console/projects/:project/opportunities.csv', async (request, reply) =>
      download(request, reply, opportunitiesCsv, chosen(request.query as Form, ['type', 'date', 'evaluation', 'status', 'q'])))
    app.get<{ Params: { project: string } }>('/console/projects/:project/metrics.csv', async (request, reply) =>
      download(request, reply, dailyOpsCsv, chosen(request.query as Form, ['window'])))
    app.get<{ Params: { project: string } }>('/console/projects/:project/event-summary.csv', async (request, reply) =>
      download(request, reply, dailyEventSummaryCsv, chosen(request.query as Form, ['window'])))

    // Webhooks of a project (owners): the list with each one's state, a create form, the
    // actions, and a delivery log. A new or rotated secret is shown once (Post/Redirect/Get:
    // it waits in the session, never in a URL, until the page shows it).
    const webhooksUrl = (project: string, webhook?: string) => `/console/projects/${encodeURIComponent(project)}/webhooks${webhook ? `?webhook=${encodeURIComponent(webhook)}` : ''}`

    app.get<{ Params: { project: string } }>('/console/projects/:project/webhooks', async (request, reply) => {
      const { items } = await run(request, listWebhooks, {}, request.params.project)
      const project = (await app.repos.projects.access(sessionPrincipal(request.consoleUser), request.params.project))!
      const chosen = items.find((w) => w.id === (request.query as Form).webhook) ?? items[0]
      const log = chosen ? await run(request, listWebhookDeliveries, { id: chosen.id, page_size: 20 }) : undefined
      const slot = request.session.get('newWebhookSecret')
      const fresh = slot?.project === project.id && Date.now() - slot.at <= NEW_KEY_SHOWN_FOR_MS ? slot : undefined
      if (slot) request.session.set('newWebhookSecret', undefined)
      return reply.page('webhooks', { title: `Webhooks · ${project.name}`, project, webhooks: items, chosen, log, secret: fresh ?? null, events: webhookEventTypes })
    })

    /** A webhook action from a console form: a refusal is a flash, and nothing changes. */
    async function webhookAction(request: FastifyRequest, reply: FastifyReply, project: string, back: string, action: () => Promise<string | { secret: string; id: string }>) {
      try {
        const result = await action()
        if (typeof result === 'string') flash(request, 'ok', result)
        else {
          const access = await app.repos.projects.access(sessionPrincipal(request.consoleUser), project)
          request.session.set('newWebhookSecret', { project: access?.id ?? '', id: result.id, secret: result.secret, at: Date.now() })
        }
      } catch (err) {
        const status = (err as { statusCode?: number }).statusCode
        if (status === undefined || status >= 500) throw err
        flash(request, 'error', describe(err))
      }
      return reply.redirect(back, 303)
    }

    app.post<{ Params: { project: string } }>('/console/projects/:project/webhooks', form, async (request, reply) => {
      const body = (request.body ?? {}) as Record<string, string | string[] | undefined>
      const events = (Array.isArray(body.events) ? body.events : body.events ? [body.events] : [])
      const project = request.params.project
      return webhookAction(request, reply, project, webhooksUrl(project), async () => {
        const made = await run(request, createWebhook, { url: String(body.url ?? '').trim(), events, description: String(body.description ?? '') }, project)
        return { id: made.id, secret: made.secret }
      })
    })

    const webhookActions = {
      rotate: async (request: FastifyRequest, id: string) => {
        const rotated = await run(request, rotateWebhookSecret, { id })
        return { id, secret: rotated.secret }
      },
      test: async (request: FastifyRequest, id: string) => {
        await run(request, testWebhook, { id })
        return 'A test message is on its way; its delivery shows below.'
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

    for (const [name, action] of Object.entries(webhookActions)) {
      app.post<{ Params: { project: string; id: string } }>(`/console/projects/:project/webhooks/:id/${name}`, form, async (request, reply) => {
        const { project, id } = request.params
        return webhookAction(request, reply, project, webhooksUrl(project, name === 'delete' ? undefined : id), async () => {
          await inProject(request, project, id)
          return action(request, id)
        })
      })
    }

    app.post<{ Params: { project: string; id: string; delivery: string } }>('/console/projects/:project/webhooks/:id/deliveries/:delivery/redeliver', form, async (request, reply) => {
      const { project, id, delivery } = request.params
      return webhookAction(request, reply, project, webhooksUrl(project, id), async () => {
        await inProject(request, project, id)
        await run(request, redeliverWebhook, { id, delivery })
        return 'The message is sent again, with the same webhook-id.'
      })
    })

    app.get('/console/workspace', async (request, reply) => {
      const { tools } = await run(request, listWorkspaceTools, {})
      return reply.page('workspace', { title: 'Workspace', tools, canEdit: request.consoleUser.workspaceRole === 'owner' })
    })

    app.post<{ Params: { name: string } }>('/console/workspace/tools/:name', form, async (request, reply) => {
      const enabled = (request.body as Form).enabled === 'true'
      await run(request, setToolEnabled, { name: request.params.name, enabled })
      flash(request, 'ok', `${request.params.name} is ${enabled ? 'enabled' : 'disabled'}.`)
      return reply.redirect('/console/workspace')
    })

    app.get('/console/connections', async (request, reply) => {
      const rows = await app.repos.oauth.connections(request.consoleUser.id)
      return reply.page('connections', { title: 'Connected apps', connections: rows.map((r) => ({ ...r, createdAt: r.createdAt.toISOString() })) })
    })

    app.post<{ Params: { id: string } }>('/console/connections/:id/revoke', form, async (request, reply) => {
      const done = await app.repos.oauth.revokeGrant(request.params.id, request.consoleUser.id, app.now())
      flash(request, done ? 'ok' : 'error', done ? 'Disconnected: its tokens no longer work.' : 'No such connection.')
      return reply.redirect('/console/connections')
    })
  })
}

// scrypt hash of a random password nobody knows: sign-in costs the same whether or not the email exists.
const DUMMY_HASH = 'scrypt$32768$8$1$c2FsdHNhbHRzYWx0c2FsdA==$3q2+7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA='

export default consolePages
