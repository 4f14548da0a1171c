// Standard Webhooks' rules for a receiver's answers: 410 Gone disables the endpoint after one
// attempt (nothing more is sent until an owner enables it again); a 429 or 503 with Retry-After
// (seconds or an HTTP date) is tried again no sooner than it asks, never sooner than the
// schedule would. The worker is driven with `app.webhooks.deliverDue()` and a movable clock.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { bearer, buildTestApp, fixedClock, seedWorkspace } from './helpers/app.ts'
import { privateOk, receiver, subscribe } from './helpers/webhooks.ts'
import { retryAfterMs } from '../plugins/webhooks.ts'

const submit = (app: FastifyInstance, key: string, project: string, n: number) =>
  app.inject({ method: 'POST', url: '/v1/tools/submit_opportunity', headers: bearer(key), payload: { project, contribution_type: 'partnership', key_information: `Lead ${n}`, reason: 'inbound', suggested_action: 'reply' } })

async function deliveries(app: FastifyInstance, key: string, id: string) {
  const res = await app.inject({ method: 'GET', url: `/v1/webhooks/${id}/deliveries`, headers: bearer(key) })
  return res.json().items as { status: string; attempts: number; next_attempt_at: string | null; last_status_code: number | null }[]
}

t.test('Retry-After: seconds or an HTTP date, in ms from now', async (t) => {
  const now = new Date('2026-03-01T10:00:00.000Z')
  t.equal(retryAfterMs('120', now), 120_000)
  t.equal(retryAfterMs(' 5 ', now), 5_000)
  t.equal(retryAfterMs('Sun, 01 Mar 2026 10:10:00 GMT', now), 600_000)
  t.equal(retryAfterMs('Sun, 01 Mar 2026 09:00:00 GMT', now), 0, 'a date in the past: now')
  t.equal(retryAfterMs(undefined, now), undefined)
  t.equal(retryAfterMs('soon', now), undefined, 'unreadable: as if absent')
  t.equal(retryAfterMs('-5', now), undefined)
})

t.test('410 Gone: one attempt, the message failed, the endpoint disabled until enabled by hand', async (t) => {
  const now = fixedClock('2026-03-01T10:00:00.000Z')
  const app = await buildTestApp(t, { now, config: privateOk })
  const ws = await seedWorkspace(app)
  const key = ws.keys.service
  const rx = await receiver(t, [410])
  const hook = await subscribe(app, key, ws.project.id, rx.url, ['opportunity.submitted'])
  await submit(app, key, ws.project.id, 1)
  t.equal(await app.webhooks.deliverDue(), 1)
  t.match(await deliveries(app, key, hook.id), [{ status: 'failed', attempts: 1, last_status_code: 410 }], 'not tried again')
  const read = await app.inject({ method: 'GET', url: `/v1/webhooks/${hook.id}`, headers: bearer(key) })
  t.equal(read.json().enabled, false, 'the endpoint is disabled')
  // Nothing more goes to it, days later either: a disabled subscription queues nothing.
  await submit(app, key, ws.project.id, 2)
  now.set('2026-03-05T10:00:00.000Z')
  t.equal(await app.webhooks.deliverDue(), 0, 'a disabled endpoint gets nothing')
  t.equal((await deliveries(app, key, hook.id)).length, 1, 'nothing queued for it')
  t.equal(rx.got.length, 1, 'one request in all')
  // Enabled again by its owner: the next message goes out.
  const enabled = await app.inject({ method: 'PATCH', url: `/v1/webhooks/${hook.id}`, headers: bearer(key), payload: { enabled: true } })
  t.equal(enabled.statusCode, 200)
  await submit(app, key, ws.project.id, 3)
  t.equal(await app.webhooks.deliverDue(), 1, 'the next message is delivered')
  t.equal(rx.got.length, 2)
  t.equal((await app.inject({ method: 'GET', url: `/v1/webhooks/${hook.id}`, headers: bearer(key) })).json().enabled, true)
})

t.test('429 and 503 with Retry-After: no sooner than asked; a short one does not hurry the schedule', async (t) => {
  const now = fixedClock('2026-03-01T10:00:00.000Z')
  const app = await buildTestApp(t, { now, config: privateOk })
  const ws = await seedWorkspace(app)
  const key = ws.keys.service
  const rx = await receiver(t, [
    { status: 429, headers: { 'retry-after': '120' } },
    { status: 503, headers: { 'retry-after': 'Sun, 01 Mar 2026 11:00:00 GMT' } },
    { status: 429, headers: { 'retry-after': '1' } },
  ])
  const hook = await subscribe(app, key, ws.project.id, rx.url, ['opportunity.submitted'])
  await submit(app, key, ws.project.id, 1)

  t.equal(await app.webhooks.deliverDue(), 1)
  let [d] = await deliveries(app, key, hook.id)
  t.match(d, { status: 'pending', attempts: 1, last_status_code: 429 })
  const first = new Date(d!.next_attempt_at!).getTime() - now().getTime()
  t.ok(first >= 120_000, `Retry-After: 120 → retried in ${first / 1000} s, not the schedule's ~5 s`)
  now.set(new Date(now().getTime() + 119_000).toISOString())
  t.equal(await app.webhooks.deliverDue(), 0, 'not a second sooner')
  now.set(d!.next_attempt_at!)
  t.equal(await app.webhooks.deliverDue(), 1)
  ;[d] = await deliveries(app, key, hook.id)
  t.match(d, { status: 'pending', attempts: 2, last_status_code: 503 })
  t.ok(new Date(d!.next_attempt_at!).getTime() >= Date.parse('2026-03-01T11:00:00.000Z'), 'an HTTP date: not before it')
  now.set(d!.next_attempt_at!)
  t.equal(await app.webhooks.deliverDue(), 1)
  ;[d] = await deliveries(app, key, hook.id)
  const third = new Date(d!.next_attempt_at!).getTime() - now().getTime()
  t.ok(third >= 0.8 * 120_000, `Retry-After: 1 after the 3rd failure → the schedule's ~2 min still holds (${third / 1000} s)`)
  now.set(d!.next_attempt_at!)
  t.equal(await app.webhooks.deliverDue(), 1)
  t.match((await deliveries(app, key, hook.id))[0], { status: 'succeeded', attempts: 4 })
  t.equal(rx.got.length, 4)
  t.equal(new Set(rx.got.map((r) => r.headers['webhook-id'])).size, 1, 'the same message each time')
})
