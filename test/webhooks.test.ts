// Outgoing webhooks end to end, with a local HTTP receiver: a signed delivery that the
// `standardwebhooks` package verifies (and both signatures during a rotation), nothing sent for
// a rolled-back change, retries with the same webhook-id until one success, the failing state,
// the SSRF guard, no redirects followed, two instances on one PostgreSQL delivering each message
// once, delivery after a crash between commit and delivery, and owner-only access. The worker
// is driven with `app.webhooks.deliverDue()` and a movable clock: no timers are waited on.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { Webhook as Verifier } from 'standardwebhooks'
import { buildApp } from '../app.ts'
import { addMember, bearer, buildTestApp, expectStatus, fixedClock, seedWorkspace, testConfig, testDatabase } from './helpers/app.ts'
import { MAX_ATTEMPTS, FAILING_AFTER, signatureHeader } from '../core/webhooks.ts'
import { privateOk, receiver, subscribe } from './helpers/webhooks.ts'

async function tool(app: FastifyInstance, key: string, name: string, args: Record<string, unknown>) {
  const res = await app.inject({ method: 'POST', url: `/v1/tools/${name}`, headers: bearer(key), payload: args })
  return { status: res.statusCode, body: res.json() as { result?: any; error?: { code: string; message: string } } }
}

const submitArgs = (project: string, n = 0) => ({ project, contribution_type: 'partnership', key_information: `Lead ${n}`, reason: 'inbound', suggested_action: 'reply' })

async function deliveries(app: FastifyInstance, key: string, id: string) {
  const res = await app.inject({ method: 'GET', url: `/v1/webhooks/${id}/deliveries`, headers: bearer(key) })
  if (res.statusCode !== 200) throw new Error(`deliveries: ${res.statusCode} ${res.body}`)
  return res.json() as { items: { id: string; status: string; attempts: number; next_attempt_at: string | null; last_status_code: number | null; last_error: string | null; last_latency_ms: number | null }[]; total: number }
}

t.test('a signed delivery, verified with standardwebhooks; a rotation signs with both secrets', async (t) => {
  const app = await buildTestApp(t, { config: privateOk })
  const ws = await seedWorkspace(app)
  const key = ws.keys.service
  const rx = await receiver(t)
  const hook = await subscribe(app, key, ws.project.slug, rx.url, ['opportunity.submitted'])
  t.match(hook.secret, /^whsec_[A-Za-z0-9+/]{32}$/, 'the secret: whsec_ and 24 bytes in base64')
  const read = await app.inject({ method: 'GET', url: `/v1/webhooks/${hook.id}`, headers: bearer(key) })
  expectStatus(t, read, 200)
  t.notOk('secret' in read.json(), 'a later read never shows the secret')
  t.notMatch(read.body, hook.secret)
  const listed = await app.inject({ method: 'GET', url: `/v1/webhooks?project=${ws.project.slug}`, headers: bearer(key) })
  t.same(listed.json().items.map((w: { id: string }) => w.id), [hook.id])
  t.notMatch(listed.body, hook.secret)

  const submitted = await tool(app, key, 'submit_opportunity', submitArgs(ws.project.id))
  t.equal(submitted.status, 200)
  t.equal(await app.webhooks.deliverDue(), 1)
  t.equal(rx.got.length, 1)
  const [msg] = rx.got
  t.match(msg!.headers, { 'content-type': 'application/json', 'webhook-id': /^msg_/, 'webhook-timestamp': /^\d+$/, 'webhook-signature': /^v1,[A-Za-z0-9+/=]+$/ })
  const payload = new Verifier(hook.secret).verify(msg!.body, msg!.headers as Record<string, string>) as { type: string; timestamp: string; data: Record<string, unknown> }
  t.equal(payload.type, 'opportunity.submitted')
  const { created: _created, similar: _similar, ...opportunity } = submitted.body.result
  t.same(payload.data, opportunity, 'data is the opportunity as the REST API returns it')
  t.equal(JSON.stringify(payload.data), JSON.stringify(opportunity), 'its members in the same order (stored as json, not jsonb)')
  t.throws(() => new Verifier(hook.secret).verify(msg!.body.replace('Lead 0', 'Lead 1'), msg!.headers as Record<string, string>), 'a changed body does not verify')
  const log = await deliveries(app, key, hook.id)
  t.match(log.items, [{ id: msg!.headers['webhook-id'], status: 'succeeded', attempts: 1, next_attempt_at: null, last_status_code: 200, last_error: null }])
  t.type(log.items[0]!.last_latency_ms, 'number')
  t.equal(await app.webhooks.deliverDue(), 0, 'nothing more is due')

  const rotated = await app.inject({ method: 'POST', url: `/v1/webhooks/${hook.id}/rotate-secret`, headers: bearer(key) })
  expectStatus(t, rotated, 200)
  const fresh = rotated.json().secret as string
  t.not(fresh, hook.secret)
  t.ok(rotated.json().previous_secret_expires_at)
  await tool(app, key, 'submit_opportunity', submitArgs(ws.project.id, 2))
  t.equal(await app.webhooks.deliverDue(), 1)
  const second = rx.got[1]!
  t.equal(String(second.headers['webhook-signature']).split(' ').length, 2, 'two signatures during the rotation')
  t.ok(new Verifier(fresh).verify(second.body, second.headers as Record<string, string>), 'the new secret verifies')
  t.ok(new Verifier(hook.secret).verify(second.body, second.headers as Record<string, string>), 'the old one still does')
})

t.test('the previous secret signs for 24 hours only', async (t) => {
  const now = new Date('2026-01-01T00:00:00Z')
  const w = { secret: 'whsec_bmV3', previousSecret: 'whsec_b2xk', previousSecretUntil: new Date('2026-01-02T00:00:00Z') }
  t.equal(signatureHeader(w, 'msg_1', 1, '{}', now).split(' ').length, 2)
  t.equal(signatureHeader(w, 'msg_1', 1, '{}', new Date('2026-01-02T00:00:00Z')).split(' ').length, 1)
})

t.test('a rolled-back change sends nothing; a review carries before → after, the actor and the history entry', async (t) => {
  const app = await buildTestApp(t, { config: privateOk })
  const ws = await seedWorkspace(app)
  const key = ws.keys.service
  const rx = await receiver(t)
  const first = (await tool(app, key, 'submit_opportunity', submitArgs(ws.project.id))).body.result.event_id as string
  const hook = await subscribe(app, key, ws.project.id, rx.url, ['opportunity.reviewed', 'memory.added', 'memory.updated', 'memory.forgotten', 'project.updated'])

  const failed = await tool(app, key, 'review_opportunities', { project: ws.project.id, event_ids: [first, 'opp_missing000'], status: 'contacted' })
  t.equal(failed.status, 404, 'one id is missing: nothing changes')
  const badProject = await tool(app, key, 'update_project', { project: ws.project.id, timezone: 'Mars/Base' })
  t.equal(badProject.status, 400)
  t.equal((await deliveries(app, key, hook.id)).total, 0, 'no message for a change that did not happen')
  t.equal(await app.webhooks.deliverDue(), 0)
  t.equal(rx.got.length, 0)

  const reviewed = await tool(app, key, 'review_opportunity', { project: ws.project.id, event_id: first, status: 'contacted', note: 'called' })
  t.equal(reviewed.status, 200)
  const history = await tool(app, key, 'get_review_history', { project: ws.project.id, event_id: first })
  const memory = (await tool(app, key, 'add_memory', { project: ws.project.id, content: 'remember' })).body.result
  await tool(app, key, 'update_memory', { id: memory.id, content: 'changed' })
  await tool(app, key, 'forget_memory', { id: memory.id })
  const card = (await tool(app, key, 'update_project', { project: ws.project.id, stage: 'beta' })).body.result
  t.equal(await app.webhooks.deliverDue(), 5)
  const bodies = rx.got.map((r) => JSON.parse(r.body)).sort((a, b) => a.timestamp.localeCompare(b.timestamp) || 0)
  const byType = Object.fromEntries(bodies.map((b) => [b.type, b.data]))
  t.same(Object.keys(byType).sort(), ['memory.added', 'memory.forgotten', 'memory.updated', 'opportunity.reviewed', 'project.updated'])
  t.match(byType['opportunity.reviewed'], {
    event_id: first,
    status: 'contacted',
    review_note: 'called',
    review: { actor: { id: ws.user.id }, before: { status: 'pending', review_note: '' }, after: { status: 'contacted', review_note: 'called' } },
  })
  t.type(byType['opportunity.reviewed'].review.history_id, 'number')
  t.equal(history.body.result.items.length, 1)
  t.match(byType['memory.added'], { id: memory.id, content: 'remember' })
  t.equal(JSON.stringify(byType['memory.added']), JSON.stringify(memory), 'memory.added: the memory as add_memory answered it, members in the same order')
  t.match(byType['memory.updated'], { id: memory.id, content: 'changed' })
  t.match(byType['memory.forgotten'], { id: memory.id })
  const { role: _role, ...cardData } = card
  t.same(byType['project.updated'], cardData, 'the project card as the REST API returns it')
  t.equal(JSON.stringify(byType['project.updated']), JSON.stringify(cardData), 'in the same order')
  const { review, ...reviewedOpportunity } = byType['opportunity.reviewed']
  t.ok(review, 'opportunity.reviewed: the review after the opportunity')
  const listed = (await tool(app, key, 'list_opportunities', { project: ws.project.id })).body.result.items.find((o: { event_id: string }) => o.event_id === first)
  t.equal(JSON.stringify(reviewedOpportunity), JSON.stringify(listed), 'opportunity.reviewed: the opportunity as list_opportunities answers it, in the same order')

  // A subscription to other events, or a disabled one, gets nothing.
  const quiet = await subscribe(app, key, ws.project.id, rx.url, ['memory.added'])
  await app.inject({ method: 'PATCH', url: `/v1/webhooks/${quiet.id}`, headers: bearer(key), payload: { enabled: false } })
  await tool(app, key, 'add_memory', { project: ws.project.id, content: 'while paused' })
  await tool(app, key, 'submit_opportunity', submitArgs(ws.project.id, 9))
  t.equal((await deliveries(app, key, quiet.id)).total, 0, 'a disabled subscription queues nothing')
})

t.test('a receiver failing 3 times then succeeding gets exactly one success, with the same webhook-id', async (t) => {
  const now = fixedClock('2026-03-01T10:00:00.000Z')
  const app = await buildTestApp(t, { now, config: privateOk })
  const ws = await seedWorkspace(app)
  const key = ws.keys.service
  const rx = await receiver(t, [500, 503, 302])
  const hook = await subscribe(app, key, ws.project.id, rx.url, ['opportunity.submitted'])
  await tool(app, key, 'submit_opportunity', submitArgs(ws.project.id))
  for (let attempt = 1; attempt <= 4; attempt++) {
    t.equal(await app.webhooks.deliverDue(), 1, `attempt ${attempt} is due`)
    t.equal(await app.webhooks.deliverDue(), 0, `attempt ${attempt}: nothing else due before the backoff`)
    const [d] = (await deliveries(app, key, hook.id)).items
    if (attempt < 4) {
      t.match(d, { status: 'pending', attempts: attempt, last_status_code: [500, 503, 302][attempt - 1] })
      t.ok(d!.last_error!.length <= 500, 'only an excerpt of the answer is kept')
      t.ok(new Date(d!.next_attempt_at!) > now(), 'retried later')
      now.set(d!.next_attempt_at!)
    } else t.match(d, { status: 'succeeded', attempts: 4, last_status_code: 200, last_error: null })
  }
  t.equal(rx.got.length, 4)
  t.same(new Set(rx.got.map((r) => r.headers['webhook-id'])).size, 1, 'the same webhook-id every time')
  t.same(rx.got.map((r) => r.path), ['/hook', '/hook', '/hook', '/hook'], 'the redirect was not followed')
  const [ok] = (await deliveries(app, key, hook.id)).items
  t.equal(ok!.status, 'succeeded')
  now.set('2026-03-05T10:00:00.000Z')
  t.equal(await app.webhooks.deliverDue(), 0, 'a success is never sent again')
  t.equal(rx.got.length, 4)

  // Redeliver: the same message again, at once.
  const again = await app.inject({ method: 'POST', url: `/v1/webhooks/${hook.id}/deliveries/${ok!.id}/redeliver`, headers: bearer(key) })
  expectStatus(t, again, 200)
  t.equal(await app.webhooks.deliverDue(), 1)
  t.equal(rx.got[4]!.headers['webhook-id'], ok!.id)
})

t.test('an endpoint failing: marked after repeated failures, the message failed after the last attempt', async (t) => {
  const now = fixedClock('2026-03-01T10:00:00.000Z')
  const app = await buildTestApp(t, { now, config: privateOk })
  const ws = await seedWorkspace(app)
  const key = ws.keys.service
  const rx = await receiver(t, Array(MAX_ATTEMPTS).fill(500))
  const hook = await subscribe(app, key, ws.project.id, rx.url, ['opportunity.submitted'])
  const test = await app.inject({ method: 'POST', url: `/v1/webhooks/${hook.id}/test`, headers: bearer(key) })
  expectStatus(t, test, 201)
  const started = now().getTime()
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    t.equal(await app.webhooks.deliverDue(), 1)
    const state = (await app.inject({ method: 'GET', url: `/v1/webhooks/${hook.id}`, headers: bearer(key) })).json()
    t.equal(state.failing, attempt >= FAILING_AFTER, `attempt ${attempt}: failing ${attempt >= FAILING_AFTER}`)
    const [d] = (await deliveries(app, key, hook.id)).items
    if (attempt < MAX_ATTEMPTS) now.set(d!.next_attempt_at!)
    else {
      t.match(d, { status: 'failed', attempts: MAX_ATTEMPTS, next_attempt_at: null })
      t.ok(now().getTime() - started >= 72 * 3600_000, 'retried for at least 3 days (Standard Webhooks: a schedule spanning days)')
    }
  }
  t.equal(JSON.parse(rx.got[0]!.body).type, 'webhook.test')
  now.set('2026-03-10T10:00:00.000Z')
  t.equal(await app.webhooks.deliverDue(), 0)
  // Enabling it again clears the failing state.
  const enabled = await app.inject({ method: 'PATCH', url: `/v1/webhooks/${hook.id}`, headers: bearer(key), payload: { enabled: true } })
  t.match(enabled.json(), { enabled: true, failing: false, consecutive_failures: 0 })
})

t.test('outcomes recorded as one group: per endpoint, the failures after its last success are counted', async (t) => {
  const now = fixedClock('2026-03-01T10:00:00.000Z')
  const app = await buildTestApp(t, { now, config: privateOk })
  const ws = await seedWorkspace(app)
  const key = ws.keys.service
  const rx = await receiver(t)
  const recovers = await subscribe(app, key, ws.project.id, rx.url, ['opportunity.submitted'])
  const keepsFailing = await subscribe(app, key, ws.project.id, `${rx.url}/2`, ['opportunity.submitted'])
  const healthy = await subscribe(app, key, ws.project.id, `${rx.url}/3`, ['opportunity.submitted'])
  const msgs: Record<string, string[]> = {}
  for (const hook of [recovers, keepsFailing, healthy]) {
    msgs[hook.id] = []
    for (let i = 0; i < 3; i++) msgs[hook.id]!.push((await app.repos.webhooks.enqueueOne(hook.id, 'webhook.test', { i }, now())).id)
  }
  const state = async (id: string) => (await app.inject({ method: 'GET', url: `/v1/webhooks/${id}`, headers: bearer(key) })).json()
  const outcome = (webhookId: string, id: string, ok: boolean) =>
    ({ id, webhookId, ok, statusCode: ok ? 200 : 500, error: ok ? null : 'HTTP 500', latencyMs: 3, retryAt: ok ? null : new Date('2026-03-01T10:05:00.000Z') })
  // Before the group: 4 failures in a row on the first two endpoints.
  await app.repos.webhooks.finish([1, 2, 3, 4].flatMap(() => [outcome(recovers.id, 'none', false), outcome(keepsFailing.id, 'none', false)]), now(), FAILING_AFTER)
  t.match(await state(recovers.id), { failing: false, consecutive_failures: 4 })
  const [r, k, h] = [msgs[recovers.id]!, msgs[keepsFailing.id]!, msgs[healthy.id]!]
  await app.repos.webhooks.finish([
    outcome(recovers.id, r[0]!, false), outcome(keepsFailing.id, k[0]!, false), outcome(healthy.id, h[0]!, true),
    outcome(recovers.id, r[1]!, true), outcome(keepsFailing.id, k[1]!, false), outcome(healthy.id, h[1]!, true),
    outcome(recovers.id, r[2]!, false), outcome(healthy.id, h[2]!, false),
  ], now(), FAILING_AFTER)
  t.match(await state(recovers.id), { failing: false, consecutive_failures: 1 }, 'a success in the group: only the failure after it counts')
  t.match(await state(keepsFailing.id), { failing: true, consecutive_failures: 6 }, 'no success: the group\'s failures add to the stored count')
  t.match(await state(healthy.id), { failing: false, consecutive_failures: 1 })
  const byId = new Map((await Promise.all([recovers, keepsFailing, healthy].map((w) => deliveries(app, key, w.id)))).flatMap((d) => d.items).map((d) => [d.id, d]))
  t.match(byId.get(r[1]!), { status: 'succeeded', last_status_code: 200, last_error: null, last_latency_ms: 3 })
  t.match(byId.get(r[2]!), { status: 'pending', last_status_code: 500, last_error: 'HTTP 500', next_attempt_at: '2026-03-01T10:05:00.000Z' })
  t.match(byId.get(k[2]!), { status: 'pending', last_status_code: null }, 'a message without an outcome is untouched')
})

t.test('a private address is refused without WEBHOOKS_ALLOW_PRIVATE_NETWORKS, at subscription and at delivery', async (t) => {
  const app = await buildTestApp(t)
  const ws = await seedWorkspace(app)
  const key = ws.keys.service
  const rx = await receiver(t)
  for (const url of [rx.url, 'http://localhost:9/hook', 'https://10.0.0.1/hook', 'https://169.254.169.254/latest', 'https://[::1]/x', 'https://100.64.0.1/', 'https://[fd00::1]/']) {
    const res = await app.inject({ method: 'POST', url: '/v1/webhooks', headers: bearer(key), payload: { project: ws.project.id, url, events: ['memory.added'] } })
    t.equal(res.statusCode, 400, `${url}: refused`)
    t.match(res.json().error, { code: 'invalid_arguments', message: /private|loopback/ }, url)
  }
  const http = await app.inject({ method: 'POST', url: '/v1/webhooks', headers: bearer(key), payload: { project: ws.project.id, url: 'http://example.com/hook', events: ['memory.added'] } })
  t.match(http.json().error, { code: 'invalid_arguments', details: [{ path: 'url', message: 'must use https://' }] }, 'http:// only for loopback')
  t.equal((await app.inject({ method: 'GET', url: `/v1/webhooks?project=${ws.project.id}`, headers: bearer(key) })).json().items.length, 0, 'nothing was created')

  // A subscription that points at a private address by the time of delivery (made directly).
  const row = await app.repos.webhooks.create({ workspaceId: ws.workspace.id, projectId: ws.project.id, url: rx.url, events: ['memory.added'], description: '', secret: 'whsec_c2VjcmV0', createdBy: ws.user.id, now: new Date() })
  await tool(app, key, 'add_memory', { project: ws.project.id, content: 'x' })
  t.equal(await app.webhooks.deliverDue(), 1)
  t.equal(rx.got.length, 0, 'nothing reached the private address')
  t.match((await deliveries(app, key, row.id)).items, [{ status: 'pending', attempts: 1, last_status_code: null, last_error: /private, loopback or link-local/ }])
})

t.test('http:// goes where WEBHOOKS_ALLOW_PRIVATE_NETWORKS lets it, production included, never to a public address', async (t) => {
  for (const production of [false, true]) {
    for (const allowPrivateNetworks of [false, true]) {
      const app = await buildTestApp(t, { config: { production, webhooks: { enabled: false, allowPrivateNetworks } } })
      const ws = await seedWorkspace(app)
      const create = (url: string) => app.inject({ method: 'POST', url: '/v1/webhooks', headers: bearer(ws.keys.service), payload: { project: ws.project.id, url, events: ['memory.added'] } })
      const label = `${production ? 'production' : 'development'}, private networks ${allowPrivateNetworks ? 'allowed' : 'refused'}`
      for (const url of ['http://127.0.0.1:9/hook', 'http://10.1.2.3/hook', 'http://192.168.0.20:8080/hook']) {
        const res = await create(url)
        if (allowPrivateNetworks) t.equal(res.statusCode, 201, `${label}: ${url} accepted`)
        else {
          t.equal(res.statusCode, 400, `${label}: ${url} refused`)
          t.match(res.json().error, { code: 'invalid_arguments', details: [{ path: 'url' }] })
        }
      }
      // A public address: plain http would carry the messages unencrypted over the internet.
      const open = await create('http://93.184.215.14/hook')
      t.equal(open.statusCode, 400, `${label}: http:// to a public address refused`)
      t.match(open.json().error, { code: 'invalid_arguments', details: [{ path: 'url', message: allowPrivateNetworks ? 'http:// must resolve to a private-network address' : 'must use https://' }] })
      t.equal((await app.inject({ method: 'GET', url: `/v1/webhooks?project=${ws.project.id}`, headers: bearer(ws.keys.service) })).json().items.length, allowPrivateNetworks ? 3 : 0, 'a refusal subscribes nothing')
    }
  }
})

t.test('a delivery over http:// to an address that became public is refused too', async (t) => {
  const { resolvePublic } = await import('../core/webhooks.ts')
  await t.rejects(resolvePublic(new URL('http://93.184.215.14/hook'), { allowPrivateNetworks: true, production: true }), /a public address: http:\/\/ is for private networks only/)
  t.same(await resolvePublic(new URL('http://10.0.0.5/hook'), { allowPrivateNetworks: true, production: true }), [{ address: '10.0.0.5', family: 4 }])
  t.same(await resolvePublic(new URL('https://93.184.215.14/hook'), { allowPrivateNetworks: true, production: true }), [{ address: '93.184.215.14', family: 4 }], 'https:// to a public address is fine')
})

t.test('kill -9 between commit and delivery: delivered by the next start', async (t) => {
  const database = await testDatabase(t)
  const rx = await receiver(t)
  const config = testConfig(database, privateOk)
  const first = await buildApp({ config, logger: false })
  const ws = await seedWorkspace(first)
  const hook = await subscribe(first, ws.keys.service, ws.project.id, rx.url, ['opportunity.submitted', 'memory.added'])
  // Committed, never delivered: the process is gone before its worker runs.
  await tool(first, ws.keys.service, 'submit_opportunity', submitArgs(ws.project.id))
  // And one claimed by a worker that died mid-delivery (its lease runs out).
  await tool(first, ws.keys.service, 'add_memory', { project: ws.project.id, content: 'claimed then lost' })
  const claimedAt = new Date()
  const lost = await first.repos.webhooks.claim(claimedAt, new Date(claimedAt.getTime() + 60_000), 1)
  t.equal(lost.length, 1)
  await first.close()
  t.equal(rx.got.length, 0)

  const later = fixedClock(new Date(claimedAt.getTime() + 1000).toISOString())
  const second = await buildApp({ config, logger: false, now: later })
  t.teardown(() => second.close())
  t.equal(await second.webhooks.deliverDue(), 1, 'the committed message is delivered after the restart')
  later.set(new Date(claimedAt.getTime() + 61_000).toISOString())
  t.equal(await second.webhooks.deliverDue(), 1, 'the lost claim is due again when its lease ends')
  t.same(rx.got.map((r) => JSON.parse(r.body).type).sort(), ['memory.added', 'opportunity.submitted'])
  t.same((await deliveries(second, ws.keys.service, hook.id)).items.map((d) => d.status), ['succeeded', 'succeeded'])
})

t.test('the worker runs with the app when enabled', async (t) => {
  const app = await buildTestApp(t, { config: { webhooks: { enabled: true, allowPrivateNetworks: true } } })
  await app.ready()
  const ws = await seedWorkspace(app)
  const rx = await receiver(t)
  await subscribe(app, ws.keys.service, ws.project.id, rx.url, ['memory.added'])
  const arrived = rx.next()
  await tool(app, ws.keys.service, 'add_memory', { project: ws.project.id, content: 'sent by the timer' })
  await arrived
  t.equal(JSON.parse(rx.got[0]!.body).data.content, 'sent by the timer')
})

const onPglite = !process.env.DATABASE_URL || process.env.DATABASE_URL === 'memory://'
t.test('two instances on one PostgreSQL deliver each message once', {
  skip: onPglite && 'PGlite is one process on one connection: no second instance can share it (run with DATABASE_URL)',
}, async (t) => {
  const database = await testDatabase(t)
  const rx = await receiver(t)
  const config = testConfig(database, privateOk)
  const [a, b] = [await buildApp({ config, logger: false }), await buildApp({ config, logger: false })]
  t.teardown(async () => {
    await a.close()
    await b.close()
  })
  const ws = await seedWorkspace(a)
  await subscribe(a, ws.keys.service, ws.project.id, rx.url, ['opportunity.submitted'])
  const n = 60
  for (let i = 0; i < n; i++) await tool(i % 2 ? a : b, ws.keys.service, 'submit_opportunity', submitArgs(ws.project.id, i))
  let rounds = 0
  for (;;) {
    const [x, y] = await Promise.all([a.webhooks.deliverDue(), b.webhooks.deliverDue(), a.webhooks.deliverDue(), b.webhooks.deliverDue()])
    rounds++
    if (x === 0 && y === 0 && (await a.webhooks.deliverDue()) === 0) break
  }
  const ids = rx.got.map((r) => String(r.headers['webhook-id']))
  t.equal(ids.length, n, `${n} messages received (${rounds} rounds)`)
  t.equal(new Set(ids).size, n, 'each once')
})

t.test('owner only: viewers and reviewers are refused, over REST and MCP alike', async (t) => {
  const app = await buildTestApp(t, { config: privateOk })
  const ws = await seedWorkspace(app)
  const rx = await receiver(t)
  const hook = await subscribe(app, ws.keys.service, ws.project.id, rx.url, ['memory.added'])
  for (const role of ['viewer', 'reviewer'] as const) {
    const member = await addMember(app, ws.project.id, role)
    const key = member.keys.service
    const create = await app.inject({ method: 'POST', url: '/v1/webhooks', headers: bearer(key), payload: { project: ws.project.id, url: rx.url, events: ['memory.added'] } })
    t.equal(create.statusCode, 403, `${role}: create`)
    t.equal(create.json().error.code, 'forbidden')
    for (const [method, url] of [['GET', `/v1/webhooks?project=${ws.project.id}`], ['GET', `/v1/webhooks/${hook.id}`], ['PATCH', `/v1/webhooks/${hook.id}`], ['DELETE', `/v1/webhooks/${hook.id}`], ['POST', `/v1/webhooks/${hook.id}/rotate-secret`], ['POST', `/v1/webhooks/${hook.id}/test`], ['GET', `/v1/webhooks/${hook.id}/deliveries`]] as const) {
      const res = await app.inject({ method, url, headers: bearer(key), ...(method === 'PATCH' ? { payload: { description: 'x' } } : {}) })
      t.equal(res.statusCode, 403, `${role}: ${method} ${url}`)
      // The tool gives the same error as the route.
      const name = url.includes('rotate') ? 'rotate_webhook_secret' : url.includes('/test') ? 'test_webhook' : url.includes('deliveries') ? 'list_webhook_deliveries' : url.includes('?') ? 'list_webhooks' : method === 'GET' ? 'get_webhook' : method === 'PATCH' ? 'update_webhook' : 'delete_webhook'
      const args = name === 'list_webhooks' ? { project: ws.project.id } : name === 'update_webhook' ? { id: hook.id, description: 'x' } : { id: hook.id }
      const viaTool = await app.inject({ method: 'POST', url: `/v1/tools/${name}`, headers: bearer(key), payload: args })
      t.equal(viaTool.body, res.body, `${role}: ${name} over /v1/tools = the route`)
    }
  }
  const other = await seedWorkspace(app)
  const foreign = await app.inject({ method: 'GET', url: `/v1/webhooks/${hook.id}`, headers: bearer(other.keys.service) })
  t.equal(foreign.statusCode, 404, "another workspace's webhook does not exist for them")
  // The owner's resource route and tool give the same result.
  const route = await app.inject({ method: 'GET', url: `/v1/webhooks/${hook.id}`, headers: bearer(ws.keys.service) })
  const viaTool = await app.inject({ method: 'POST', url: '/v1/tools/get_webhook', headers: bearer(ws.keys.service), payload: { id: hook.id } })
  t.equal(viaTool.body, `{"result":${route.body}}`)
  const deleted = await app.inject({ method: 'DELETE', url: `/v1/webhooks/${hook.id}`, headers: bearer(ws.keys.service) })
  t.same(deleted.json(), { id: hook.id, deleted: true })
  t.equal((await app.inject({ method: 'GET', url: `/v1/webhooks/${hook.id}`, headers: bearer(ws.keys.service) })).statusCode, 404)
})
