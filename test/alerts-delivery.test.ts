// Issue 29's done-when, end to end with the real pieces together: an alert "daily users below 3"
// fires on the ingestion that finds it below and resolves when the numbers recover; each change
// reaches a standard receiver signed with v1 and v1a (standardwebhooks verifies v1, the public
// key get_webhook shows verifies v1a) and a Slack-format receiver as Slack's message shape.
import t from 'tap'
import { Webhook as Verifier } from 'standardwebhooks'
import { bearer, buildTestApp, expectStatus, fixedClock, ingestEvents, seedWorkspace } from './helpers/app.ts'
import { privateOk, receiver, verifiesV1a } from './helpers/webhooks.ts'
import { addDays, localDate, startOfDay } from '../core/time.ts'

t.test('an alert fires and resolves: v1 + v1a to one receiver, Slack\'s shape to another', async (t) => {
  // The real time: receivers refuse a webhook-timestamp more than 5 minutes off their clock.
  const now = new Date()
  const today = localDate(now, 'UTC')
  const clock = fixedClock(now.toISOString())
  const todayAt = new Date(startOfDay(today, 'UTC').getTime() + 1000).toISOString()
  const yesterdayAt = `${addDays(today, -1)}T12:00:00.000Z`
  const app = await buildTestApp(t, { now: clock, config: privateOk })
  const ws = await seedWorkspace(app)
  const key = ws.keys.service
  const standard = await receiver(t)
  const slack = await receiver(t)
  const events = ['alert.triggered', 'alert.resolved']
  const created = await app.inject({ method: 'POST', url: '/v1/webhooks', headers: bearer(key), payload: { project: ws.project.id, url: standard.url, events, signatures: ['v1', 'v1a'] } })
  expectStatus(t, created, 201)
  const hook = created.json() as { id: string; secret: string; public_key: string }
  expectStatus(t, await app.inject({ method: 'POST', url: '/v1/webhooks', headers: bearer(key), payload: { project: ws.project.id, url: slack.url, events, format: 'slack' } }), 201)
  const alert = await app.inject({
    method: 'POST',
    url: `/api/v1/mcp/projects/${ws.project.id}/alerts`,
    headers: bearer(ws.keys.mcp),
    payload: { name: 'Daily users below 3', metric: 'daily_users', condition: 'below', threshold: 3 },
  })
  expectStatus(t, alert, 201)

  const users = (prefix: string, n: number, at: string): [string, string, string][] => Array.from({ length: n }, (_, i) => ['daily_use', `${prefix}-${i}`, at])
  // Yesterday closed with one daily user: below 3.
  await ingestEvents(app, ws.keys.ingest, [...users('y', 1, yesterdayAt), ...users('t', 2, todayAt)])
  await app.alerts.settled()
  t.equal(await app.webhooks.deliverDue(), 2, 'one message to each receiver')

  const check = (kind: 'triggered' | 'resolved', n: number) => {
    const msg = standard.got[n]!
    t.match(String(msg.headers['webhook-signature']).split(' '), [/^v1,/, /^v1a,/], `${kind}: signed v1 and v1a`)
    const body = new Verifier(hook.secret).verify(msg.body, msg.headers as Record<string, string>) as { type: string; data: { kind: string; alert: { name: string } } }
    t.match(body, { type: `alert.${kind}`, data: { kind, alert: { name: 'Daily users below 3' } } }, `${kind}: standardwebhooks verifies v1`)
    t.ok(verifiesV1a(msg, hook.public_key), `${kind}: the public key verifies v1a`)
    const shaped = JSON.parse(slack.got[n]!.body) as { text: string; blocks: { type: string; text?: { type: string; text: string } }[] }
    t.type(shaped.text, 'string', `${kind}: Slack's text`)
    t.match(shaped.text, /Daily users below 3/)
    t.ok(Array.isArray(shaped.blocks) && shaped.blocks.length > 0 && shaped.blocks.every((b) => typeof b.type === 'string'), `${kind}: Slack's blocks`)
    t.notOk('type' in shaped && 'data' in shaped, `${kind}: not the JSON envelope`)
  }
  check('triggered', 0)

  // Three daily users today: recovered.
  clock.set(new Date(now.getTime() + 60_000).toISOString())
  await ingestEvents(app, ws.keys.ingest, users('later', 1, todayAt))
  await app.alerts.settled()
  t.equal(await app.webhooks.deliverDue(), 2)
  check('resolved', 1)
})
