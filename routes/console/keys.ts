// API keys in the console: Profile → MCP Access (the user's MCP keys) and Keys (service and
// ingest keys), each with a create form whose new key is shown once, and revoking a key after
// a page that asks first.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import listProjects from '../../tools/list-projects.ts'
import createKey from '../../tools/create-key.ts'
import revokeKey from '../../tools/revoke-key.ts'
import { appError } from '../../core/errors.ts'
import { displayKey } from '../../db/keys.ts'
import { openFromSession, sealForSession, takeShownOnce } from './session.ts'
import { describe, flash, formPost, run, safeNext, type Form } from './actions.ts'

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

export function apiKeyPages(app: FastifyInstance) {
  const form = formPost(app)

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
   * URL, sealed under the server key: the session is stored in the database) until the page that
   * shows it is opened once — the browser follows the redirect at once — and for a minute at
   * most; a reload of that page creates nothing.
   */
  function showKeyOnce(request: FastifyRequest, reply: FastifyReply, page: keyof typeof keyPages, key: string, name: string) {
    request.session.set('newKey', { page, sealedKey: sealForSession(app, request, 'newKey', key), name, at: Date.now() })
    return reply.redirect(keyPages[page].shown, 303)
  }

  for (const [page, where] of Object.entries(keyPages) as [keyof typeof keyPages, (typeof keyPages)[keyof typeof keyPages]][]) {
    app.get(where.shown, async (request, reply) => {
      const fresh = takeShownOnce(request, 'newKey', (slot) => slot.page === page)
      const key = fresh && openFromSession(app, request, 'newKey', fresh.sealedKey)
      return reply.page('new-key', {
        title: key ? 'Your new key' : 'Key already shown',
        where,
        newKey: key ? { key, name: fresh.name, display: displayKey(key) } : null,
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
}
