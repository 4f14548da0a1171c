// The digest scheduler on a pinned clock: a digest arrives at its hour and once (delivered to a
// receiver by the webhook worker), weekly on its weekday, in the project's own zone, not at once
// for a schedule set after its hour, once for two concurrent runs, and mailed to the owners
// (a mail that fails leaves the digest sent).
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { addMember, bearer, buildTestApp, fixedClock, ingestEvents, seedWorkspace, testDatabase } from './helpers/app.ts'
import { privateOk, receiver, subscribe } from './helpers/webhooks.ts'
import { startMailServer } from './helpers/mail.ts'
import { hourStart, isoWeekday, latestSlot } from '../core/digests.ts'

const mailbox = await startMailServer()
t.teardown(() => mailbox.close())
const clock = fixedClock('2026-11-20T08:30:00.000Z') // a Friday
const app = await buildTestApp(t, { now: clock, config: { ...privateOk, mail: { url: mailbox.url, from: 'growthdesk <digests@growthdesk.test>' } } })

/** A project of its own with a webhook on digest.ready to a receiver, in `timezone`. */
async function digestProject(t: Test, timezone = 'UTC') {
  const ws = await seedWorkspace(app)
  const key = ws.keys.mcp
  if (timezone !== 'UTC') {
    const res = await app.inject({ method: 'PATCH', url: `/v1/projects/${ws.project.id}`, headers: bearer(ws.keys.service), payload: { timezone } })
    if (res.statusCode !== 200) throw new Error(res.body)
  }
  const hook = await receiver(t)
  const { id: webhookId } = await subscribe(app, ws.keys.service, ws.project.id, hook.url, ['digest.ready'])
  const url = `/api/v1/mcp/projects/${ws.project.id}/digest`
  return {
    ws,
    hook,
    set: async (schedule: Record<string, unknown>) => {
      const res = await app.inject({ method: 'PUT', url, headers: bearer(key), payload: schedule })
      if (res.statusCode >= 300) throw new Error(`set_digest: ${res.statusCode} ${res.body}`)
      return res.json()
    },
    get: async () => (await app.inject({ method: 'GET', url, headers: bearer(key) })).json().digest,
    remove: () => app.inject({ method: 'DELETE', url, headers: bearer(key) }),
    /** The digest.ready messages queued for this project's webhook, oldest first. */
    queued: async () => (await app.repos.webhooks.deliveries(webhookId, { limit: 100, offset: 0 })).items.reverse().map((d) => d.payload as { type: string; data: { period: { from: string; to: string }; frequency: string } }),
  }
}

/** Sends what is due at `iso`; how many this call queued. */
async function at(iso: string, a: FastifyInstance = app) {
  clock.set(iso)
  return a.digests.sendDue()
}

t.test('a daily digest arrives at its hour, once, and is delivered to the receiver', async (t) => {
  clock.set('2026-11-20T08:30:00.000Z')
  const p = await digestProject(t)
  const set = await p.set({ frequency: 'daily', hour: 9 })
  t.match(set, { frequency: 'daily', hour: 9, weekday: null, enabled: true, created: true, last_period_end: '2026-11-18', last_sent_at: null, next_at: '2026-11-20T09:00:00.000Z', timezone: 'UTC' })
  t.equal(await at('2026-11-20T08:59:59.999Z'), 0, 'before the hour: nothing')
  t.same(await p.queued(), [])
  t.equal(await at('2026-11-20T09:00:00.000Z'), 1, 'at the hour: one digest')
  t.equal(await at('2026-11-20T09:00:30.000Z'), 0, 'again: nothing more')
  t.equal(await at('2026-11-20T23:59:00.000Z'), 0, 'later that day: nothing more')
  const queued = await p.queued()
  t.equal(queued.length, 1)
  t.match(queued[0], { type: 'digest.ready', data: { frequency: 'daily', period: { from: '2026-11-19', to: '2026-11-19' }, previous: { from: '2026-11-18', to: '2026-11-18' } } })

  const arrived = p.hook.next()
  t.equal(await app.webhooks.deliverDue(), 1)
  await arrived
  t.equal(p.hook.got.length, 1)
  const body = JSON.parse(p.hook.got[0]!.body)
  t.equal(body.type, 'digest.ready')
  t.equal(body.timestamp, '2026-11-20T09:00:00.000Z', 'the message is of the moment it was queued')
  t.match(body.data, { project: { id: p.ws.project.id, slug: p.ws.project.slug, timezone: 'UTC' }, period: { from: '2026-11-19', to: '2026-11-19' }, generated_at: '2026-11-20T09:00:00.000Z' })
  t.match(await p.get(), { last_period_end: '2026-11-19', last_sent_at: '2026-11-20T09:00:00.000Z', next_at: '2026-11-21T09:00:00.000Z' })

  t.equal(await at('2026-11-21T08:00:00.000Z'), 0, 'the next day before the hour: nothing')
  t.equal(await at('2026-11-21T09:05:00.000Z'), 1, 'the next day at the hour: the next digest')
  t.same((await p.queued()).map((m) => m.data.period.to), ['2026-11-19', '2026-11-20'])
  await p.remove()
})

t.test('a schedule set after its hour sends its first digest at the next one, not at once', async (t) => {
  clock.set('2026-11-20T15:00:00.000Z')
  const p = await digestProject(t)
  t.match(await p.set({ frequency: 'daily', hour: 9 }), { last_period_end: '2026-11-19', next_at: '2026-11-21T09:00:00.000Z' })
  t.equal(await at('2026-11-20T15:01:00.000Z'), 0, 'not at once')
  t.equal(await at('2026-11-21T08:59:00.000Z'), 0)
  t.equal(await at('2026-11-21T09:00:00.000Z'), 1, 'the next day at 9')
  t.same((await p.queued()).map((m) => m.data.period), [{ from: '2026-11-20', to: '2026-11-20' }])
  // Set again (another hour that has passed today): the day sent stays sent.
  t.match(await p.set({ frequency: 'daily', hour: 7 }), { created: false, last_period_end: '2026-11-20' })
  t.equal(await at('2026-11-21T10:00:00.000Z'), 0, 'nothing twice for one period')
  // Paused: nothing goes; enabled again after its hour: the next one, not a burst.
  await p.set({ frequency: 'daily', hour: 7, enabled: false })
  t.equal(await at('2026-11-22T07:30:00.000Z'), 0, 'paused')
  t.match(await p.get(), { enabled: false, next_at: null })
  t.match(await p.set({ frequency: 'daily', hour: 7, enabled: true }), { enabled: true, last_period_end: '2026-11-21', next_at: '2026-11-23T07:00:00.000Z' })
  t.match(await p.set({ frequency: 'daily', hour: 8 }), { enabled: true }, 'enabled left out: unchanged')
  t.equal(await at('2026-11-22T09:00:00.000Z'), 0)
  t.equal((await p.queued()).length, 1)
  await p.remove()
})

t.test('a weekly digest goes on its weekday, covering the 7 days ending yesterday', async (t) => {
  clock.set('2026-11-20T10:00:00.000Z') // Friday
  const p = await digestProject(t)
  t.match(await p.set({ frequency: 'weekly', hour: 8, weekday: 'monday' }), { weekday: 1, next_at: '2026-11-23T08:00:00.000Z', last_period_end: '2026-11-15' })
  for (const iso of ['2026-11-20T10:01:00.000Z', '2026-11-21T08:00:00.000Z', '2026-11-22T08:00:00.000Z', '2026-11-23T07:59:00.000Z']) t.equal(await at(iso), 0, `${iso}: not its day or hour`)
  t.equal(await at('2026-11-23T08:00:00.000Z'), 1, 'Monday at 8')
  t.equal(await at('2026-11-24T08:00:00.000Z'), 0, 'Tuesday: nothing')
  t.same((await p.queued()).map((m) => [m.data.frequency, m.data.period]), [['weekly', { from: '2026-11-16', to: '2026-11-22' }]])
  t.match(await p.get(), { next_at: '2026-11-30T08:00:00.000Z' })
  await p.remove()
})

t.test('in a non-UTC zone, the hour and the days are the project\'s', async (t) => {
  // New York (UTC−5 in November): 9:00 there is 14:00 UTC.
  clock.set('2026-11-20T12:00:00.000Z')
  const ny = await digestProject(t, 'America/New_York')
  t.match(await ny.set({ frequency: 'daily', hour: 9 }), { timezone: 'America/New_York', next_at: '2026-11-20T14:00:00.000Z', last_period_end: '2026-11-18' })
  t.equal(await at('2026-11-20T13:59:00.000Z'), 0, '8:59 in New York')
  t.equal(await at('2026-11-20T14:00:00.000Z'), 1, '9:00 in New York')
  t.same((await ny.queued()).map((m) => m.data.period.to), ['2026-11-19'])
  await ny.remove()

  // Tokyo (UTC+9): 9:00 on the 21st there is 00:00 UTC on the 21st, the 20th still running in UTC.
  clock.set('2026-11-20T10:00:00.000Z') // 19:00 in Tokyo
  const tokyo = await digestProject(t, 'Asia/Tokyo')
  t.match(await tokyo.set({ frequency: 'weekly', hour: 9, weekday: 6 }), { next_at: '2026-11-21T00:00:00.000Z' })
  t.equal(await at('2026-11-20T23:59:00.000Z'), 0, '8:59 on Saturday in Tokyo')
  t.equal(await at('2026-11-21T00:00:00.000Z'), 1, '9:00 on Saturday in Tokyo, Friday in UTC')
  t.same((await tokyo.queued()).map((m) => m.data.period), [{ from: '2026-11-14', to: '2026-11-20' }])
  await tokyo.remove()
})

t.test('two concurrent runs queue one digest', async (t) => {
  clock.set('2026-11-20T08:00:00.000Z')
  const p = await digestProject(t)
  await p.set({ frequency: 'daily', hour: 9 })
  clock.set('2026-11-20T09:00:00.000Z')
  const counts = await Promise.all([app.digests.sendDue(), app.digests.sendDue(), app.digests.sendDue()])
  t.equal(counts.reduce((a, b) => a + b, 0), 1, `one of the runs sent it: ${counts}`)
  t.equal((await p.queued()).length, 1, 'one message')
  // The claim itself, twice at once for one period: one wins.
  clock.set('2026-11-21T09:00:00.000Z')
  const claims = await Promise.all([1, 2].map(() => app.repos.digests.claim(p.ws.project.id, '2026-11-20', clock(), { test: true })))
  t.same(claims.sort(), [false, true])
  t.equal((await p.queued()).length, 2)
  await p.remove()
})

t.test('two instances on one PostgreSQL database queue one digest', { skip: process.env.DATABASE_URL ? false : 'the embedded database belongs to one process' }, async (t) => {
  clock.set('2026-11-20T08:00:00.000Z')
  const database = await testDatabase(t)
  const [one, two] = [await buildTestApp(t, { database, now: clock, config: privateOk }), await buildTestApp(t, { database, now: clock, config: privateOk })]
  const ws = await seedWorkspace(one)
  const hook = await receiver(t)
  const { id } = await subscribe(one, ws.keys.service, ws.project.id, hook.url, ['digest.ready'])
  t.equal((await one.inject({ method: 'PUT', url: `/api/v1/mcp/projects/${ws.project.id}/digest`, headers: bearer(ws.keys.mcp), payload: { frequency: 'daily', hour: 9 } })).statusCode, 201)
  clock.set('2026-11-20T09:00:00.000Z')
  const counts = await Promise.all([one.digests.sendDue(), two.digests.sendDue(), one.digests.sendDue(), two.digests.sendDue()])
  t.equal(counts.reduce((a, b) => a + b, 0), 1, `one instance sent it: ${counts}`)
  t.equal((await one.repos.webhooks.deliveries(id, { limit: 10, offset: 0 })).total, 1, 'one message')
})

t.test('the digest is mailed to the project\'s owners; a mail that fails leaves it sent', async (t) => {
  clock.set('2026-11-20T08:00:00.000Z')
  const p = await digestProject(t)
  const viewer = await addMember(app, p.ws.project.id, 'viewer')
  const secondOwner = await addMember(app, p.ws.project.id, 'owner')
  await p.set({ frequency: 'daily', hour: 9 })
  await ingestEvents(app, p.ws.keys.ingest, [['signup', 'A', '2026-11-19T10:00:00Z'], ['daily_use', 'A', '2026-11-19T10:00:00Z'], ['daily_use', 'B', '2026-11-18T10:00:00Z']])
  const before = mailbox.messages.length
  t.equal(await at('2026-11-20T09:00:00.000Z'), 1)
  const mails = mailbox.messages.slice(before)
  t.same(mails.map((m) => m.to && 'text' in m.to ? m.to.text : '').sort(), [p.ws.user.email, secondOwner.user.email].sort(), 'each owner, in a message of their own; not the viewer')
  t.notOk(mails.some((m) => (m.to && 'text' in m.to ? m.to.text : '') === viewer.user.email))
  const mail = mails[0]!
  t.match(mail.subject, /^.+: daily digest, 2026-11-19$/)
  t.match(mail.text, /Registrations: 1 \(new; before: 0\)/)
  t.match(mail.text, /Daily users, average per day: 1 \(\+0 %; before: 1\)/)
  t.match(mail.text, /daily_use: 1 \(\+0 %; before: 1\)\n {2}signup: 1 \(new; before: 0\)/)
  t.match(mail.text, new RegExp(`/console/projects/${p.ws.project.slug}/digest`))
  t.notOk(mail.html, 'plain text')

  mailbox.refuse(/.*/)
  t.teardown(() => mailbox.refuse(null))
  t.equal(await at('2026-11-21T09:00:00.000Z'), 1, 'sent although every mail is refused')
  t.equal((await p.queued()).length, 2, 'the webhook message is queued')
  t.equal(await at('2026-11-21T09:01:00.000Z'), 0, 'and not tried again')
  await p.remove()
})

t.test('the hour of a day in a zone, across clock changes and half-hour offsets', async (t) => {
  t.same([isoWeekday('2026-11-23'), isoWeekday('2026-11-22'), isoWeekday('2026-11-20')], [1, 7, 5])
  const iso = (d: Date) => d.toISOString()
  t.equal(iso(hourStart('2026-03-08', 2, 'America/New_York')), '2026-03-08T07:00:00.000Z', 'a skipped 2:00 starts at 3:00 EDT')
  t.equal(iso(hourStart('2026-03-08', 3, 'America/New_York')), '2026-03-08T07:00:00.000Z')
  t.equal(iso(hourStart('2026-11-01', 1, 'America/New_York')), '2026-11-01T05:00:00.000Z', 'a repeated 1:00: the first one')
  t.equal(iso(hourStart('2026-11-01', 2, 'America/New_York')), '2026-11-01T07:00:00.000Z')
  t.equal(iso(hourStart('2026-11-20', 9, 'Asia/Kolkata')), '2026-11-20T03:30:00.000Z')
  t.equal(iso(hourStart('2026-11-20', 0, 'Europe/Paris')), '2026-11-19T23:00:00.000Z')
  const weekly = { frequency: 'weekly' as const, hour: 8, weekday: 1 }
  t.equal(latestSlot(weekly, new Date('2026-11-23T07:59:00Z'), 'UTC'), '2026-11-16', 'Monday before 8: last Monday')
  t.equal(latestSlot(weekly, new Date('2026-11-23T08:00:00Z'), 'UTC'), '2026-11-23')
  t.equal(latestSlot(weekly, new Date('2026-11-22T23:30:00Z'), 'Europe/Paris'), '2026-11-16', '00:30 on Monday in Paris, before 8')
  t.equal(latestSlot({ frequency: 'daily', hour: 23, weekday: null }, new Date('2026-11-20T22:59:00Z'), 'UTC'), '2026-11-19')
})
