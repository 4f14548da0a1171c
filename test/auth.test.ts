import t from 'tap'
import { createHash } from 'node:crypto'
import { Writable } from 'node:stream'
import type { InjectOptions } from 'fastify'
import { buildApp, loggerOptions } from '../app.ts'
import { createKey, revokeKey } from '../bin/admin.ts'
import { generateKey } from '../db/keys.ts'
import { apiKeys } from '../db/schema.ts'
import { addProject, PUBLIC_URL, addMember, bearer, buildTestApp, fixedClock, recordKeyUses, seedWorkspace, testConfig, testDatabase } from './helpers/app.ts'

const base = (project: string) => `/api/v1/mcp/projects/${project}`
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** The key with one character of its random part changed: well-formed, checksum wrong. */
function tamper(key: string): string {
  const next = BASE62[(BASE62.indexOf(key[12]!) + 1) % 62]!
  return key.slice(0, 12) + next + key.slice(13)
}

const UNAUTHORIZED_CHALLENGE = 'Bearer realm="growthdesk"'
const INVALID_TOKEN_CHALLENGE = 'Bearer realm="growthdesk", error="invalid_token"'

/** The MCP endpoint only answers its own host name (DNS-rebinding protection). */
const MCP_HOST = new URL(PUBLIC_URL).host
const MCP_INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'auth-test', version: '1.0.0' } },
}

t.test('credentials and surfaces', async (t) => {
  const clock = fixedClock('2026-11-20T10:00:00Z')
  const app = await buildTestApp(t, { now: clock })
  const ws = await seedWorkspace(app)
  const project = ws.project.id
  const oauth = await app.repos.apiKeys.create({ workspaceId: ws.workspace.id, userId: ws.user.id, kind: 'oauth', name: 'test token' })
  const keys = { ...ws.keys, oauth: oauth.key }

  let lookups = 0
  const findActive = app.repos.apiKeys.findActive
  app.repos.apiKeys.findActive = async (...args: Parameters<typeof findActive>) => {
    lookups++
    return findActive(...args)
  }

  const dailyOps = (headers: Record<string, string> = {}, projectRef = project) =>
    app.inject({ method: 'GET', url: `${base(projectRef)}/daily-ops`, headers })
  const ingest = (headers: Record<string, string>, body: Record<string, unknown> = { project }) =>
    app.inject({ method: 'POST', url: '/v1/events', headers, payload: { ...body, events: [{ event: 'signup', distinct_id: 'user-1' }] } })

  t.test('project-side API takes gdm_ (and gdo_) keys only', async (t) => {
    for (const kind of ['mcp', 'oauth'] as const) {
      const res = await dailyOps(bearer(keys[kind]))
      t.equal(res.statusCode, 200, `${kind} accepted`)
      t.equal(res.json().project, project)
    }
    const service = await dailyOps(bearer(keys.service))
    t.equal(service.statusCode, 401)
    t.same(service.json(), {
      error: {
        code: 'unauthorized',
        message: 'This endpoint takes a project-side MCP API key (gdm_) or OAuth access token (gdo_); a service key (gds_) was sent.',
      },
    })
    t.equal(service.headers['www-authenticate'], INVALID_TOKEN_CHALLENGE)
    const ingestKey = await dailyOps(bearer(keys.ingest))
    t.equal(ingestKey.statusCode, 401)
    t.equal(ingestKey.json().error.code, 'unauthorized')
    t.match(ingestKey.json().error.message, /gdm_/)
    t.equal(
      ingestKey.json().error.message,
      'This endpoint takes a project-side MCP API key (gdm_) or OAuth access token (gdo_); an ingest key (gdi_) was sent.'
    )
    t.equal(ingestKey.headers['www-authenticate'], INVALID_TOKEN_CHALLENGE)
  })

  t.test('event ingestion takes ingest, service, mcp and oauth keys', async (t) => {
    const own = await ingest(bearer(keys.ingest), {})
    t.equal(own.statusCode, 200, 'an ingest key needs no project: it has one')
    t.same(own.json(), { accepted: 1, duplicates: 0 })
    for (const kind of ['service', 'mcp', 'oauth'] as const) {
      const res = await ingest(bearer(keys[kind]))
      t.equal(res.statusCode, 200, `${kind} accepted`)
      t.same(res.json(), { accepted: 1, duplicates: 0 })
    }
    const header = await app.inject({
      method: 'POST',
      url: '/v1/events',
      headers: { ...bearer(keys.service), 'x-service-project': ws.project.slug },
      payload: { events: [{ event: 'daily_use', distinct_id: 'user-2' }] },
    })
    t.equal(header.statusCode, 200, 'the project may come from X-Service-Project')
  })

  const toolsApi = app.hasRoute({ method: 'GET', url: '/v1/tools' })
  t.test('tools REST API takes service (and oauth) keys, refuses mcp and ingest', { skip: !toolsApi && 'GET /v1/tools does not exist yet' }, async (t) => {
    for (const kind of ['service', 'oauth'] as const) {
      const res = await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(keys[kind]) })
      t.equal(res.statusCode, 200, `${kind} accepted`)
    }
    for (const kind of ['mcp', 'ingest'] as const) {
      const res = await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(keys[kind]) })
      t.equal(res.statusCode, 401, `${kind} refused`)
      t.equal(res.json().error.code, 'unauthorized')
      t.match(res.json().error.message, /gds_/, 'the message names the kind the surface takes')
      t.match(res.headers['www-authenticate'], /^Bearer /)
    }
  })

  const mcpEndpoint = app.hasRoute({ method: 'POST', url: '/mcp' })
  t.test('MCP endpoint takes mcp, service and oauth keys, refuses ingest keys', { skip: !mcpEndpoint && 'POST /mcp does not exist yet' }, async (t) => {
    const call = (key: string) =>
      app.inject({
        method: 'POST',
        url: '/mcp',
        headers: { ...bearer(key), host: MCP_HOST, accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
        payload: MCP_INITIALIZE,
      })
    for (const kind of ['mcp', 'service', 'oauth'] as const) {
      const res = await call(keys[kind])
      t.equal(res.statusCode, 200, `${kind} accepted`)
      t.equal(res.json().id, 1)
      t.equal(res.json().result.protocolVersion, '2025-06-18', 'the initialize call was answered')
    }
    const refused = await call(keys.ingest)
    t.equal(refused.statusCode, 401)
    t.match(refused.json().error.message, /gdm_/)
    t.match(refused.json().error.message, /gds_/)
    t.equal(
      refused.headers['www-authenticate'],
      `Bearer realm="growthdesk", error="invalid_token", resource_metadata="${PUBLIC_URL}/.well-known/oauth-protected-resource/mcp"`
    )
    const missing = await app.inject({ method: 'POST', url: '/mcp', headers: { host: MCP_HOST, accept: 'application/json, text/event-stream' }, payload: MCP_INITIALIZE })
    t.equal(missing.statusCode, 401)
    t.equal(missing.headers['www-authenticate'], `Bearer realm="growthdesk", resource_metadata="${PUBLIC_URL}/.well-known/oauth-protected-resource/mcp"`)
  })

  t.test('a missing or non-Bearer Authorization header is refused', async (t) => {
    const none = await dailyOps()
    t.equal(none.statusCode, 401)
    t.equal(none.headers['www-authenticate'], UNAUTHORIZED_CHALLENGE)
    t.same(none.json(), {
      error: {
        code: 'unauthorized',
        message:
          'Authentication required: send the header Authorization: Bearer <key> with a project-side MCP API key (gdm_) or OAuth access token (gdo_).',
      },
    })
    const basic = await dailyOps({ authorization: `Basic ${Buffer.from(`user:${keys.mcp}`).toString('base64')}` })
    t.equal(basic.statusCode, 401)
    t.equal(basic.json().error.code, 'unauthorized')
    t.equal(basic.headers['www-authenticate'], UNAUTHORIZED_CHALLENGE)
    const bare = await dailyOps({ authorization: keys.mcp })
    t.equal(bare.statusCode, 401, 'a key without the scheme')
    const empty = await dailyOps({ authorization: 'Bearer ' })
    t.equal(empty.statusCode, 401, 'the scheme without a key')
    const two = await dailyOps({ authorization: `Bearer ${keys.mcp} ${keys.mcp}` })
    t.equal(two.statusCode, 401, 'two tokens')
    // RFC 6750: the scheme, spaces, then a b64token. A no-break space is not a separator.
    t.equal((await dailyOps({ authorization: `Bearer\u00a0${keys.mcp}` })).statusCode, 401, 'a no-break space after the scheme')
    t.equal((await dailyOps({ authorization: `Bearer ${keys.mcp}\u00a0` })).statusCode, 401, 'a no-break space after the key')
    t.equal((await dailyOps({ authorization: `Bearer   ${keys.mcp}  ` })).statusCode, 200, 'spaces around the key')
    const events = await ingest({})
    t.equal(events.statusCode, 401)
    t.equal(events.headers['www-authenticate'], UNAUTHORIZED_CHALLENGE)
    t.equal((await dailyOps({ authorization: `bearer ${keys.mcp}` })).statusCode, 200, 'the scheme is case-insensitive')
  })

  t.test('a tampered key is refused without a database look-up', async (t) => {
    const before = lookups
    for (const kind of ['mcp', 'service', 'ingest'] as const) {
      const res = await (kind === 'mcp' ? dailyOps(bearer(tamper(keys[kind]))) : ingest(bearer(tamper(keys[kind]))))
      t.equal(res.statusCode, 401, `tampered ${kind} key`)
      t.same(res.json(), {
        error: {
          code: 'unauthorized',
          message: 'The bearer credential is malformed or mistyped (it is not a growthdesk key, or its checksum does not match).',
        },
      })
      t.equal(res.headers['www-authenticate'], INVALID_TOKEN_CHALLENGE)
    }
    t.equal((await dailyOps(bearer('not-a-key'))).statusCode, 401)
    t.equal((await dailyOps(bearer(keys.mcp.slice(0, -1)))).statusCode, 401, 'a truncated key')
    t.equal(lookups, before, 'no look-up for malformed keys')
    t.equal((await dailyOps(bearer(keys.service))).statusCode, 401)
    t.equal(lookups, before, 'no look-up for a key of the wrong kind either')
  })

  t.test('a well-formed unknown key is refused after one look-up', async (t) => {
    const before = lookups
    const res = await dailyOps(bearer(generateKey('mcp')))
    t.equal(res.statusCode, 401)
    t.same(res.json(), { error: { code: 'unauthorized', message: 'The key is not valid: it is unknown, revoked or expired.' } })
    t.equal(res.headers['www-authenticate'], INVALID_TOKEN_CHALLENGE)
    t.equal(lookups, before + 1)
  })

  t.test('a revoked key is refused', async (t) => {
    const created = await createKey(app, { email: ws.user.email, kind: 'mcp', name: 'to revoke' })
    t.equal((await dailyOps(bearer(created.key))).statusCode, 200)
    t.same(await revokeKey(app, created.id), { id: created.id, revoked: true })
    const res = await dailyOps(bearer(created.key))
    t.equal(res.statusCode, 401)
    t.equal(res.json().error.message, 'The key is not valid: it is unknown, revoked or expired.')
    t.equal(res.headers['www-authenticate'], INVALID_TOKEN_CHALLENGE)
    const service = await createKey(app, { email: ws.user.email, kind: 'service' })
    await revokeKey(app, service.id)
    t.equal((await ingest(bearer(service.key))).statusCode, 401, 'on ingestion too')
  })

  t.test('an expired key is refused', async (t) => {
    const now = clock().getTime()
    const past = await createKey(app, { email: ws.user.email, kind: 'mcp', expiresAt: new Date(now - 1000) })
    t.equal((await dailyOps(bearer(past.key))).statusCode, 401, 'expired before its first use')

    const soon = await createKey(app, { email: ws.user.email, kind: 'mcp', expiresAt: new Date(now + 60 * 60_000) })
    t.equal(soon.expires_at, new Date(now + 60 * 60_000).toISOString())
    t.equal((await dailyOps(bearer(soon.key))).statusCode, 200, 'valid before expiry')
    clock.set(new Date(now + 60 * 60_000).toISOString())
    const atExpiry = await dailyOps(bearer(soon.key))
    t.equal(atExpiry.statusCode, 401, 'refused at the instant of expiry')
    t.equal(atExpiry.json().error.message, 'The key is not valid: it is unknown, revoked or expired.')
    clock.set(new Date(now + 2 * 60 * 60_000).toISOString())
    t.equal((await dailyOps(bearer(soon.key))).statusCode, 401, 'and after it')
    t.equal((await dailyOps(bearer(keys.mcp))).statusCode, 200, 'keys without expiry keep working')
  })

  t.test('only hashes are stored, with prefix and last four for display', async (t) => {
    const rows = await app.db.select().from(apiKeys)
    t.ok(rows.length >= 4)
    const stored = JSON.stringify(rows)
    for (const [kind, key] of Object.entries(keys)) {
      t.notOk(stored.includes(key), `the ${kind} key is nowhere in api_keys`)
      t.notOk(stored.includes(key.slice(4, 36)), 'nor its random part')
      const row = rows.find((r) => r.hash === sha256(key))
      t.ok(row, `the ${kind} key is stored as its SHA-256`)
      t.equal(row?.display, `${key.slice(0, 4)}…${key.slice(-4)}`)
      t.equal(row?.kind, kind)
    }
    for (const row of rows) t.match(row.hash, /^[0-9a-f]{64}$/)
  })

  t.test('last_used_at is recorded at most once a minute', async (t) => {
    const created = await createKey(app, { email: ws.user.email, kind: 'mcp', name: 'usage' })
    const lastUsed = async () => (await app.repos.apiKeys.find(created.id))?.lastUsedAt?.toISOString() ?? null
    t.equal(await lastUsed(), null, 'null before use')
    // The request does not wait for the write of a use: each write started is kept here, and
    // awaited. The decision to start one is made before the request is answered.
    const writes = recordKeyUses(t, app)

    const first = clock().toISOString()
    t.equal((await dailyOps(bearer(created.key))).statusCode, 200)
    t.equal(writes.length, 1, 'the first use starts a write')
    await Promise.all(writes)
    t.equal(await lastUsed(), first, 'set by the first use')

    clock.set(new Date(clock().getTime() + 30_000).toISOString())
    t.equal((await dailyOps(bearer(created.key))).statusCode, 200)
    t.equal(writes.length, 1, 'a use 30 s later starts no write')
    t.equal(await lastUsed(), first, 'unchanged by a use 30 s later')

    const later = new Date(new Date(first).getTime() + 61_000).toISOString()
    clock.set(later)
    t.equal((await dailyOps(bearer(created.key))).statusCode, 200)
    t.equal(writes.length, 2, 'a use 61 s after the first starts one')
    await Promise.all(writes)
    t.equal(await lastUsed(), later, 'updated by a use 61 s after the first')

    // A refused request is not a use.
    await revokeKey(app, created.id)
    clock.set(new Date(new Date(later).getTime() + 5 * 60_000).toISOString())
    t.equal((await dailyOps(bearer(created.key))).statusCode, 401)
    t.equal(writes.length, 2, 'a refused key starts no write')
    t.equal(await lastUsed(), later, 'a refused key is not marked as used')
  })

  t.test('roles: a viewer reads metrics but has no review access', async (t) => {
    const viewer = await addMember(app, project, 'viewer')
    t.equal((await dailyOps(bearer(viewer.keys.mcp))).statusCode, 200)
    const res = await app.inject({ method: 'GET', url: `${base(project)}/opportunities`, headers: bearer(viewer.keys.mcp) })
    t.equal(res.statusCode, 403)
    t.same(res.json(), {
      error: { code: 'review_access_required', message: `This needs review access to project '${ws.project.slug}'; your access is viewer.` },
    })
    const reviewer = await addMember(app, project, 'reviewer')
    const listed = await app.inject({ method: 'GET', url: `${base(project)}/opportunities`, headers: bearer(reviewer.keys.mcp) })
    t.equal(listed.statusCode, 200, 'a reviewer has review access')
  })

  t.test('roles: a read-only key acts as a viewer, whoever made it', async (t) => {
    const submitted = await app.inject({
      method: 'POST',
      url: `${base(project)}/opportunities`,
      headers: bearer(keys.mcp),
      payload: { contribution_type: 'partnership', key_information: 'k', reason: 'r', suggested_action: 's' },
    })
    t.equal(submitted.statusCode, 201)
    const id = submitted.json().event_id

    const readOnly = await createKey(app, { email: ws.user.email, kind: 'mcp', readOnly: true })
    t.equal(readOnly.read_only, true)
    t.equal((await dailyOps(bearer(readOnly.key))).statusCode, 200, 'reads work')
    const review = await app.inject({
      method: 'PATCH',
      url: `${base(project)}/opportunities/${id}/review`,
      headers: bearer(readOnly.key),
      payload: { status: 'done' },
    })
    t.equal(review.statusCode, 403)
    t.equal(review.json().error.code, 'review_access_required')
    t.equal(review.json().error.message, `This needs review access to project '${ws.project.slug}'; your access is viewer.`)
    const list = await app.inject({ method: 'GET', url: `${base(project)}/opportunities`, headers: bearer(readOnly.key) })
    t.equal(list.statusCode, 403)
    const readOnlyService = await createKey(app, { email: ws.user.email, kind: 'service', readOnly: true })
    const events = await ingest(bearer(readOnlyService.key))
    t.equal(events.statusCode, 403, 'a read-only key cannot write events')

    const unchanged = await app.inject({ method: 'GET', url: `${base(project)}/opportunities`, headers: bearer(keys.mcp) })
    t.equal(unchanged.json().items.find((o: { event_id: string }) => o.event_id === id).status, 'pending')
  })

  t.test('a key narrowed to one project answers 404 for the others', async (t) => {
    const other = await addProject(app, { workspaceId: ws.workspace.id, ownerId: ws.user.id, name: 'Project B', slug: 'project-b' })
    t.equal((await dailyOps(bearer(keys.mcp), other.id)).statusCode, 200, 'the owner reaches B with an unnarrowed key')

    const narrowed = await createKey(app, { email: ws.user.email, kind: 'mcp', project })
    t.equal(narrowed.project, project)
    t.equal((await dailyOps(bearer(narrowed.key))).statusCode, 200, 'project A works')
    for (const ref of [other.id, other.slug]) {
      const res = await dailyOps(bearer(narrowed.key), ref)
      t.equal(res.statusCode, 404, `project B by ${ref === other.id ? 'id' : 'slug'}`)
      t.same(res.json(), { error: { code: 'not_found', message: `Project '${ref}' was not found.` } })
    }
    const events = await ingest(bearer(keys.ingest), { project: other.id })
    t.equal(events.statusCode, 404, 'the ingest key only writes to its own project')
  })

  t.test('another workspace answers 404, never 403', async (t) => {
    const ws2 = await seedWorkspace(app)
    t.equal((await dailyOps(bearer(ws2.keys.mcp), ws2.project.id)).statusCode, 200, 'workspace 2 reaches its own project')
    for (const path of ['daily-ops', 'opportunities']) {
      const res = await app.inject({ method: 'GET', url: `${base(project)}/${path}`, headers: bearer(ws2.keys.mcp) })
      t.equal(res.statusCode, 404, `${path} of workspace 1`)
      t.same(res.json(), { error: { code: 'not_found', message: `Project '${project}' was not found.` } })
    }
    t.equal((await ingest(bearer(ws2.keys.service), { project })).statusCode, 404, 'events into workspace 1')
    t.equal((await ingest(bearer(ws2.keys.ingest), { project })).statusCode, 404, "with workspace 2's ingest key")
    const viewer2 = await addMember(app, ws2.project.id, 'viewer')
    const res = await app.inject({ method: 'GET', url: `${base(project)}/opportunities`, headers: bearer(viewer2.keys.mcp) })
    t.equal(res.statusCode, 404, 'a foreign viewer learns nothing from a 403 either')
  })
  t.end()
})

t.test('no key reaches the logs', async (t) => {
  let logs = ''
  // Fastify logs "request completed" once a response has ended, which may be after inject()
  // resolved: the check below waits for that line of every request sent.
  let completed = 0
  let expected = Infinity
  let allCompleted = () => {}
  const stream = new Writable({
    write(chunk, _encoding, done) {
      logs += chunk.toString()
      completed += chunk.toString().split('"msg":"request completed"').length - 1
      if (completed >= expected) allCompleted()
      done()
    },
  })
  const database = await testDatabase(t)
  const options = loggerOptions('trace') as Exclude<ReturnType<typeof loggerOptions>, boolean | undefined>
  const app = await buildApp({ config: testConfig(database, { logLevel: 'trace' }), logger: { ...options, stream } as never })
  t.teardown(() => app.close())
  // A careless handler that logs everything it was sent: redaction must still hold.
  app.get('/log-everything', async (request) => {
    request.log.info({ req: { headers: request.headers } }, 'headers seen')
    request.log.info({ credentials: { key: request.headers.authorization, token: request.headers.authorization } }, 'credentials seen')
    request.log.info({ headers: request.headers }, 'raw headers')
    return { ok: true }
  })
  const ws = await seedWorkspace(app)
  const sent: string[] = []
  const send = async (opts: InjectOptions, key: string) => {
    sent.push(key)
    return app.inject({ ...opts, headers: { ...(opts.headers as Record<string, string>), ...bearer(key) } })
  }

  t.equal((await send({ method: 'GET', url: `${base(ws.project.id)}/daily-ops` }, ws.keys.mcp)).statusCode, 200)
  t.equal((await send({ method: 'GET', url: `${base(ws.project.id)}/daily-ops` }, ws.keys.service)).statusCode, 401)
  t.equal((await send({ method: 'GET', url: `${base(ws.project.id)}/daily-ops` }, tamper(ws.keys.mcp))).statusCode, 401)
  t.equal((await send({ method: 'GET', url: `${base(ws.project.id)}/daily-ops` }, generateKey('mcp'))).statusCode, 401)
  const events = await send({ method: 'POST', url: '/v1/events', payload: { events: [{ event: 'signup', distinct_id: 'u' }] } }, ws.keys.ingest)
  t.equal(events.statusCode, 200)
  t.equal((await send({ method: 'GET', url: '/log-everything' }, ws.keys.service)).statusCode, 200)

  expected = sent.length
  await new Promise<void>((resolve) => {
    allCompleted = resolve
    if (completed >= expected) resolve()
  })
  t.equal(completed, sent.length, 'every request has its "request completed" line')
  const lines = logs.trim().split('\n')
  // A logged bare `headers` object is checked on its own below.
  const covered = lines.filter((line) => !line.includes('"msg":"raw headers"')).join('\n')
  t.equal(lines.filter((line) => line.includes('"msg":"request completed"') && line.includes('"url":"/')).length, 6, 'the capture sees every request, its URL on its one line')
  t.match(covered, /daily-ops/)
  t.match(covered, /"msg":"headers seen"/)
  t.match(covered, /"credentials":\{"key":"\[redacted\]","token":"\[redacted\]"\}/, 'key and token fields are censored')
  for (const key of sent) {
    t.notOk(covered.includes(key), `${key.slice(0, 4)}… is not in the logs`)
    t.notOk(covered.includes(key.slice(4, 36)), 'nor its random part')
  }
  const raw = lines.filter((line) => line.includes('"msg":"raw headers"')).join('\n')
  t.match(raw, /"raw headers"/)
  t.notOk(raw.includes(ws.keys.service), 'a logged headers object is censored too')
})
