// The worker's other duties under Standard Webhooks and Svix's habits: a Slack-format
// subscription receives Slack's message shape; a rate limit is never exceeded in any second,
// also by two workers at once (pinned clock); replay of a time window; a 410's reason.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { bearer, buildTestApp, expectStatus, fixedClock, seedWorkspace } from './helpers/app.ts'
import { privateOk, receiver, subscribe } from './helpers/webhooks.ts'
import { triggeredAlert } from './helpers/alert-data.ts'
import { enqueueWebhooks } from '../db/repositories/webhooks.ts'

const addMemory = (app: FastifyInstance, key: string, project: string, content: string) =>
  app.inject({ method: 'POST', url: '/v1/tools/add_memory', headers: bearer(key), payload: { project, content } })

async function deliveries(app: FastifyInstance, key: string, id: string, query = '') {
  const res = await app.inject({ method: 'GET', url: `/v1/webhooks/${id}/deliveries?page_size=100${query}`, headers: bearer(key) })
  return res.json() as { items: { id: string; status: string; attempts: number; created_at: string }[]; total: number }
}

t.test('a Slack subscription receives Slack\'s incoming-webhook shape', async (t) => {
  const app = await buildTestApp(t, { config: privateOk })
  const ws = await seedWorkspace(app)
  const key = ws.keys.service
  const rx = await receiver(t)
  const res = await app.inject({ method: 'POST', url: '/v1/webhooks', headers: bearer(key), payload: { project: ws.project.id, url: rx.url, events: ['alert.triggered', 'memory.added'], format: 'slack' } })
  expectStatus(t, res, 201)
  t.match(res.json(), { format: 'slack', signatures: ['v1'] })
  const data = triggeredAlert({ ...ws.project, name: 'Acme' })
  await app.db.transaction((tx) => enqueueWebhooks(tx, ws.project.id, 'alert.triggered', new Date(), [data]))
  await addMemory(app, key, ws.project.id, 'Pricing page converts on Tuesdays')
  t.equal(await app.webhooks.deliverDue(), 2)
  const bodies = rx.got.map((r) => JSON.parse(r.body))
  const alert = bodies.find((b) => /Alert triggered/.test(b.text))
  t.match(alert, { text: /^Alert triggered: Signups dropped in .*, registrations = 3$/, blocks: [{ type: 'section', text: { type: 'mrkdwn' }, fields: Array }, { type: 'context' }] })
  t.same(Object.keys(alert), ['text', 'blocks'], 'Slack\'s shape, not the envelope')
  t.match(bodies.find((b) => /Memory/.test(b.text)), { text: 'Memory added: Pricing page converts on Tuesdays' })
  t.match(rx.got[0]!.headers, { 'content-type': 'application/json', 'webhook-id': /^msg_/, 'webhook-signature': /^v1,/ }, 'the Standard Webhooks headers go too')
  const switched = await app.inject({ method: 'PATCH', url: `/v1/webhooks/${res.json().id}`, headers: bearer(key), payload: { format: 'standard' } })
  t.equal(switched.json().format, 'standard')
  await addMemory(app, key, ws.project.id, 'again')
  t.equal(await app.webhooks.deliverDue(), 1)
  t.match(JSON.parse(rx.got[2]!.body), { type: 'memory.added', data: { content: 'again' } }, 'standard again: the envelope')
})

t.test('rate_limit: never more than that many attempts in any second, also with two workers', async (t) => {
  const now = fixedClock('2026-03-01T10:00:00.000Z')
  const app = await buildTestApp(t, { now, config: privateOk })
  const ws = await seedWorkspace(app)
  const key = ws.keys.service
  const rx = await receiver(t)
  const limited = await app.inject({ method: 'POST', url: '/v1/webhooks', headers: bearer(key), payload: { project: ws.project.id, url: rx.url, events: ['memory.added'], rate_limit: 3 } })
  expectStatus(t, limited, 201)
  t.equal(limited.json().rate_limit, 3)
  const free = await subscribe(app, key, ws.project.id, `${rx.url}?free`, ['memory.added'])
  for (let i = 0; i < 10; i++) await addMemory(app, key, ws.project.id, `m${i}`)
  const claim = (at: string) => {
    now.set(at)
    const n = now()
    return app.repos.webhooks.claim(n, new Date(n.getTime() + 60_000), 50)
  }
  const limitedOf = (claimed: { webhookId: string }[]) => claimed.filter((c) => c.webhookId === limited.json().id).length
  // Two workers claiming at the same instant: 3 of the limited endpoint in all, every message of the other.
  const [a, b] = await Promise.all([claim('2026-03-01T10:00:00.050Z'), claim('2026-03-01T10:00:00.050Z')])
  t.equal(limitedOf(a) + limitedOf(b), 3, 'two workers at once: 3 in all')
  t.equal(a.length + b.length - 3, 10, 'the endpoint without a limit: all 10')
  t.equal(limitedOf(await claim('2026-03-01T10:00:00.600Z')), 0, '0.55 s later: none')
  t.equal(limitedOf(await claim('2026-03-01T10:00:01.040Z')), 0, '0.99 s later (the next whole second): none, the limit holds for every one-second span')
  t.equal(limitedOf(await claim('2026-03-01T10:00:01.150Z')), 3, '1.1 s later: 3 more')
  t.equal(limitedOf(await claim('2026-03-01T10:00:02.250Z')), 3)
  t.equal(limitedOf(await claim('2026-03-01T10:00:03.350Z')), 1, 'the last one')
  t.equal(free.id.startsWith('whk_'), true)

  // Through the worker: the same limit, and lifting it lets the rest go at once.
  now.set('2026-03-01T11:00:00.000Z')
  for (let i = 0; i < 5; i++) await addMemory(app, key, ws.project.id, `n${i}`)
  // (The claims above were never finished: their leases have run out, so those 20 are due again.)
  t.equal(await app.webhooks.deliverDue(), 15 + 3, 'the free endpoint\'s 15, the limited one\'s 3')
  t.equal(await app.webhooks.deliverDue(), 0, 'the same instant: nothing more')
  const lifted = await app.inject({ method: 'PATCH', url: `/v1/webhooks/${limited.json().id}`, headers: bearer(key), payload: { rate_limit: null } })
  t.equal(lifted.json().rate_limit, null)
  t.equal(await app.webhooks.deliverDue(), 12, 'no limit: the other 12 at once')
  for (const rate_limit of [0, 1001, 2.5, '5']) {
    const bad = await app.inject({ method: 'PATCH', url: `/v1/webhooks/${limited.json().id}`, headers: bearer(key), payload: { rate_limit } })
    t.equal(bad.statusCode, 400, `rate_limit ${JSON.stringify(rate_limit)} refused`)
    t.match(bad.json().error, { code: 'invalid_arguments', details: [{ path: 'rate_limit' }] })
  }
  // 1e999 is Infinity to a JSON parser, and null (no limit) after a JSON copy: refused, not taken as null.
  const raw = { ...bearer(key), 'content-type': 'application/json' }
  const patched = await app.inject({ method: 'PATCH', url: `/v1/webhooks/${limited.json().id}`, headers: raw, payload: '{"rate_limit":1e999}' })
  t.equal(patched.statusCode, 400)
  t.match(patched.json().error, { code: 'invalid_arguments', details: [{ path: 'rate_limit' }] }, 'the route\'s own validation')
  const called = await app.inject({ method: 'POST', url: '/v1/tools/update_webhook', headers: raw, payload: `{"id":"${limited.json().id}","rate_limit":-1e999}` })
  t.equal(called.statusCode, 400)
  t.same(called.json().error.details, [{ path: 'rate_limit', message: 'must be a finite number' }], 'a tool call: the argument copy\'s check')
  t.equal((await app.inject({ method: 'GET', url: `/v1/webhooks/${limited.json().id}`, headers: bearer(key) })).json().rate_limit, null, 'nothing changed')
})

t.test('replay: a window\'s messages sent again with their webhook-id, only the failed ones, bounded', async (t) => {
  const now = fixedClock('2026-03-01T10:00:00.000Z')
  const app = await buildTestApp(t, { now, config: privateOk })
  const ws = await seedWorkspace(app)
  const key = ws.keys.service
  const rx = await receiver(t, [200, 500, 200, 410])
  const hook = await subscribe(app, key, ws.project.id, rx.url, ['memory.added'])
  // A second apart: the failed second message's retry (after 4 s at the soonest) is not due meanwhile.
  const at = ['2026-03-01T10:00:00.000Z', '2026-03-01T10:00:01.000Z', '2026-03-01T10:00:02.000Z']
  for (const [i, time] of at.entries()) {
    now.set(time)
    await addMemory(app, key, ws.project.id, `m${i}`)
    t.equal(await app.webhooks.deliverDue(), 1)
  }
  const replay = (payload: Record<string, unknown>) => app.inject({ method: 'POST', url: `/v1/webhooks/${hook.id}/replay`, headers: bearer(key), payload })
  const log = (await deliveries(app, key, hook.id)).items
  t.same(log.map((d) => d.status), ['succeeded', 'pending', 'succeeded'], 'the second is waiting for a retry')

  // Pending messages are left alone (they are on their way); a window of the first two.
  const first = await replay({ since: at[0], until: at[1] })
  expectStatus(t, first, 200)
  t.same(first.json(), { queued: 1, limit: 1000, next_since: null })
  t.equal(await app.webhooks.deliverDue(), 1, 'the replayed first')
  t.equal(rx.got[3]!.headers['webhook-id'], rx.got[0]!.headers['webhook-id'], 'the same webhook-id: receivers de-duplicate by it')
  const states = Object.fromEntries((await deliveries(app, key, hook.id)).items.map((d) => [d.created_at, d]))
  t.match(states[at[0]!], { status: 'failed', attempts: 1 }, 'answered 410 this time')
  const read = await app.inject({ method: 'GET', url: `/v1/webhooks/${hook.id}`, headers: bearer(key) })
  t.match(read.json(), { enabled: false, disabled_reason: /410 Gone/ }, 'the 410 disabled it, with its reason')
  const enabled = await app.inject({ method: 'PATCH', url: `/v1/webhooks/${hook.id}`, headers: bearer(key), payload: { enabled: true } })
  t.match(enabled.json(), { enabled: true, disabled_reason: null }, 'enabling it clears the reason')

  const failedOnly = await replay({ since: at[0], only_failed: true })
  t.same(failedOnly.json(), { queued: 1, limit: 1000, next_since: null }, 'only the failed one, until now')
  t.equal(await app.webhooks.deliverDue(), 1)
  t.equal(rx.got.at(-1)!.headers['webhook-id'], rx.got[0]!.headers['webhook-id'])

  for (const [payload, path] of [[{}, 'since'], [{ since: 'yesterday' }, 'since'], [{ since: at[2], until: at[0] }, 'until'], [{ since: at[0], status: 'failed' }, 'status']] as const) {
    const bad = await replay(payload)
    t.equal(bad.statusCode, 400, `${JSON.stringify(payload)} refused`)
    t.match(bad.json().error, { code: 'invalid_arguments', details: [{ path }] })
  }
  t.equal(await app.webhooks.deliverDue(), 0, 'a refused replay queues nothing')

  // Bounded: with a cap of 1, the two sent messages (the third is pending) are one and a next_since.
  const capped = await app.repos.webhooks.replay(hook.id, { since: new Date(at[0]!), until: now(), onlyFailed: false, cap: 1 }, now())
  t.same(capped, { queued: 1, nextSince: new Date(at[2]!) })
  t.same(await app.repos.webhooks.replay(hook.id, { since: new Date(at[2]!), until: now(), onlyFailed: false, cap: 1 }, now()), { queued: 1, nextSince: null }, 'the next call, from next_since')
})
